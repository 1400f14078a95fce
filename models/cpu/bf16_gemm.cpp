#include "models/cpu/bf16_gemm.h"

#include <omp.h>

#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <tuple>

#include "core/cpu_kernel_choice.h"
#include "core/log.h"

namespace zt::models::cpu {
namespace {

using dnnl::memory;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

memory::desc matrix(int rows, int cols, int ld, bool transposed, memory::data_type type) {
  // A row-major (rows, cols) view with leading dimension ld, or the transpose of a stored
  // (cols, rows) matrix: only the strides differ.
  memory::dims strides = transposed ? memory::dims{1, ld} : memory::dims{ld, 1};
  return memory::desc({rows, cols}, type, strides);
}

// Creating a matmul primitive costs far more than running a small one, and a model runs the
// same few shapes every step: one per shape (and thread count: oneDNN fixes a primitive's threads
// when it creates it), made once.
using Shape = std::tuple<bool, bool, int, int, int, int, int, int, bool, int>;

dnnl::matmul::primitive_desc describe(bool trans_a, bool trans_b, int M, int N, int K, int lda, int ldb, int ldc,
                                      bool accumulate) {
  const auto bf16_type = memory::data_type::bf16;
  dnnl::primitive_attr attr;
  if (accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  return dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(matrix(M, K, lda, trans_a, bf16_type), matrix(K, N, ldb, trans_b, bf16_type),
                         matrix(M, N, ldc, false, memory::data_type::f32)),
      attr, cpu_engine());
}

dnnl::matmul& primitive_for(const Shape& shape) {
  static std::mutex mutex;
  static std::map<Shape, dnnl::matmul> made;
  std::lock_guard lock(mutex);
  auto found = made.find(shape);
  if (found != made.end()) return found->second;
  auto [trans_a, trans_b, M, N, K, lda, ldb, ldc, accumulate, threads] = shape;
  const dnnl::matmul::primitive_desc desc = describe(trans_a, trans_b, M, N, K, lda, ldb, ldc, accumulate);
  log::debug("bf16 product {}x{}x{}{}{}{} on {} thread(s): oneDNN '{}'", M, N, K, trans_a ? " A^T" : "",
             trans_b ? " B^T" : "", accumulate ? " +=" : "", threads, desc.impl_info_str());
  return made.emplace(shape, dnnl::matmul(desc)).first->second;
}

// The implementation oneDNN picks for a bf16 product on this CPU, e.g. "brg:avx512_core_bf16" or
// "brg:avx512_core_amx"; native when it names the bf16 or AMX instructions.
bool probe_native() {
  try {
    std::string impl = describe(false, true, 64, 64, 64, 64, 64, 64, false).impl_info_str();
    bool native = impl.find("bf16") != std::string::npos || impl.find("amx") != std::string::npos;
    log::debug("bf16 products: {} (oneDNN matmul '{}')",
               native ? "oneDNN on bf16 operands" : "widened to fp32, OpenBLAS sgemm", impl);
    return native;
  } catch (const dnnl::error& e) {
    log::debug("bf16 products: widened to fp32, OpenBLAS sgemm (oneDNN: {})", e.what());
    return false;
  }
}

}  // namespace

bool bf16_gemm_native() {
  static const bool native = probe_native();
  return native && !reference_cpu_kernels();
}

void bf16_gemm(bool trans_a, bool trans_b, int M, int N, int K, const bf16* A, int lda, const bf16* B, int ldb,
               float* C, int ldc, bool accumulate, int threads) {
  // oneDNN runs on OpenMP threads; their number is a per-thread setting (ops run on whichever
  // thread the compute stream has), read when a primitive is made and when it runs.
  omp_set_num_threads(threads);
  dnnl::matmul& matmul = primitive_for({trans_a, trans_b, M, N, K, lda, ldb, ldc, accumulate, threads});
  const auto bf16_type = memory::data_type::bf16;
  thread_local dnnl::stream stream(cpu_engine());
  memory a(matrix(M, K, lda, trans_a, bf16_type), cpu_engine(), const_cast<bf16*>(A));
  memory b(matrix(K, N, ldb, trans_b, bf16_type), cpu_engine(), const_cast<bf16*>(B));
  memory c(matrix(M, N, ldc, false, memory::data_type::f32), cpu_engine(), C);
  matmul.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
  stream.wait();
}

}  // namespace zt::models::cpu
