// The CUDA implementation of optim/optimizer_ops.h.
#include <stdexcept>

#include "core/cuda/cuda_stream.h"
#include "optim/cuda/optimizer_kernels.h"
#include "optim/optimizer_ops.h"

namespace zt {
namespace {

cudaStream_t handle_of(Stream& stream) { return as_cuda_stream(stream, "GPU optimizer work").handle(); }

class CudaOptimizerOps final : public OptimizerOps {
 public:
  void adamw(const AdamWStep& step, Stream& stream) override { cuda::adamw_step(step, handle_of(stream)); }

  void sum_of_squares(BufferView grad, BufferView partial, BufferView scratch, Stream& stream) override {
    check_partials(partial, 1);
    if (scratch.numel < step_stats_scratch_numel())
      throw std::invalid_argument("sum_of_squares: the scratch buffer is too small");
    cuda::sum_of_squares(grad.as<float>(), grad.numel, reinterpret_cast<double*>(partial.data), scratch.as<float>(),
                         handle_of(stream));
  }

  void finish_step_stats(BufferView partials, BufferView stats, int micro_batches, Stream& stream) override {
    check_partials(partials, partials.numel / 2);
    if (stats.numel < step_stats::size) throw std::invalid_argument("finish_step_stats: statistics buffer too small");
    cuda::finish_step_stats(reinterpret_cast<const double*>(partials.data), partials.numel / 2, stats.as<float>(),
                            micro_batches, handle_of(stream));
  }
};

}  // namespace

OptimizerOps& cuda_optimizer_ops() {
  static CudaOptimizerOps ops;
  return ops;
}

}  // namespace zt
