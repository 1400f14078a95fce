// models/cuda/cudnn_attention.h through NVIDIA's cuDNN frontend (graph API, header-only), with the
// frontend's dynamic loading: libcudnn.so.9 is opened here, at the first GPU attention.
#include "models/cuda/cudnn_attention.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include <cudnn_frontend.h>

#include "core/buffer.h"
#include "core/cuda/cuda_check.h"
#include "core/log.h"
#include "models/cuda/cudnn_attention_rules.h"

// The frontend's dynamic loading calls into the library this handle names (cudnn_library()).
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}  // namespace cudnn_frontend

namespace zt::models::cuda {

namespace fe = cudnn_frontend;
using Tensor = std::shared_ptr<fe::graph::Tensor_attributes>;

const CudnnLibrary& cudnn_library() {
  static const CudnnLibrary library = [] {
    // The frontend loads a CUDA runtime of its own for a few calls: the one zerotrain runs on, not
    // the first it finds (it tries libcudart.so.12 before .13). A user's setting wins.
    setenv("CUDNN_FRONTEND_CUDART_LIB_NAME", fmt::format("libcudart.so.{}", CUDART_VERSION / 1000).c_str(), 0);
    CudnnLibrary l = load_cudnn_library("libcudnn.so.9");
    // Loaded again by name: dlopen returns the handle it already holds.
    if (l.loaded) fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    return l;
  }();
  return library;
}

namespace {

// The tensors' ids in a graph's variant pack.
enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

// What makes two attentions the same graph: the dtype, the shape and every stride.
using ShapeKey = std::array<std::int64_t, 17>;
ShapeKey key_of(const FlashAttention& a, DType dt) {
  return {static_cast<std::int64_t>(dt), a.B, a.NH, a.T, a.group, a.q.batch, a.q.head, a.q.row, a.k.batch,
          a.k.head, a.k.row, a.v.batch, a.v.head, a.v.row, a.y.batch, a.y.head, a.y.row};
}

std::vector<std::int64_t> vec(const std::array<std::int64_t, 4>& a) { return {a.begin(), a.end()}; }

Tensor input(fe::graph::Graph& g, const char* name, Uid uid, const SdpaTensor& t) {
  return g.tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(vec(t.dim)).set_stride(
      vec(t.stride)));
}
void make_output(const Tensor& x, Uid uid, const SdpaTensor& t) {
  x->set_output(true).set_uid(uid).set_dim(vec(t.dim)).set_stride(vec(t.stride));
}

std::shared_ptr<fe::graph::Graph> new_graph(DType dt) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(dt == DType::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

std::shared_ptr<fe::graph::Graph> forward_graph(const SdpaTensors& s, DType dt) {
  auto g = new_graph(dt);
  Tensor q = input(*g, "q", kQ, s.q), k = input(*g, "k", kK, s.k), v = input(*g, "v", kV, s.v);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("attention")
                     .set_generate_stats(true)
                     .set_causal_mask(true)
                     .set_attn_scale(sdpa_scale());
  auto [o, stats] = g->sdpa(q, k, v, options);
  make_output(o, kO, s.o);
  make_output(stats, kStats, s.stats);
  stats->set_data_type(fe::DataType_t::FLOAT);
  return g;
}

std::shared_ptr<fe::graph::Graph> backward_graph(const SdpaTensors& s, DType dt) {
  auto g = new_graph(dt);
  Tensor q = input(*g, "q", kQ, s.q), k = input(*g, "k", kK, s.k), v = input(*g, "v", kV, s.v);
  Tensor o = input(*g, "o", kO, s.o), d_o = input(*g, "d_o", kDO, s.o);
  Tensor stats = input(*g, "stats", kStats, s.stats);
  stats->set_data_type(fe::DataType_t::FLOAT);
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("attention_backward")
                     .set_causal_mask(true)
                     .set_attn_scale(sdpa_scale())
                     .set_deterministic_algorithm(true);  // no atomics: the same bits on every run
  auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, d_o, stats, options);
  make_output(dq, kDQ, s.q);
  make_output(dk, kDK, s.k);
  make_output(dv, kDV, s.v);
  return g;
}

// Builds a graph's execution plan: an empty string, or cuDNN's reason for refusing it.
std::string build(fe::graph::Graph& g, cudnnHandle_t handle) {
  fe::error_t e = g.validate();
  if (e.is_good()) e = g.build_operation_graph(handle);
  if (e.is_good()) e = g.create_execution_plans({fe::HeurMode_t::A});
  if (e.is_good()) e = g.check_support(handle);
  if (e.is_good()) e = g.build_plans(handle);
  return e.is_good() ? "" : e.get_message();
}

// The most workspace a shape's graphs may ask for: a sixteenth of the GPU's memory. cuDNN's
// deterministic backward keeps a (B, heads, T, T) 16-bit dP matrix in its workspace (before cuDNN
// 9.25, or where that fits under the limit on Hopper); GPT-2 124M at B 16, T 1024 needs 0.4 GB,
// within the limit on any training GPU. Longer sequences would need it squared: those are refused
// and run the flash kernels, which need no such matrix.
std::int64_t workspace_limit_bytes() {
  std::size_t free = 0, total = 0;
  ZT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return static_cast<std::int64_t>(total / 16);
}

std::string shape_name(const FlashAttention& a, DType dt) {
  return fmt::format("(B {}, heads {}, T {}, hs {}, {} query heads per key/value head, {})", a.B, a.NH, a.T,
                     kFlashHeadSize, a.group, dtype_name(dt));
}

}  // namespace

struct CudnnAttention::ShapeGraphs {
  std::shared_ptr<fe::graph::Graph> forward, backward;  // both null where cuDNN refused the shape
  bool forward_ran = false;                              // whether this shape's last forward ran on cuDNN
};

struct CudnnAttention::Graphs {
  cudnnHandle_t handle = nullptr;
  std::map<ShapeKey, ShapeGraphs> shapes;
  Buffer workspace;  // the largest any graph asked for

  ~Graphs() {
    // Queued graphs may still read the workspace and plans: let them finish, then free the plans
    // before the handle they were built on.
    if (handle != nullptr) cudaDeviceSynchronize();
    shapes.clear();
    if (handle != nullptr) fe::detail::destroy_handle(handle);
  }
};

CudnnAttention::CudnnAttention(int device, bool enabled)
    : device_(device), enabled_(enabled), graphs_(std::make_unique<Graphs>()) {}
CudnnAttention::~CudnnAttention() = default;

namespace {
void run(const fe::graph::Graph& g, cudnnHandle_t handle, cudaStream_t s, std::unordered_map<std::int64_t, void*> pack,
         void* workspace, const char* what) {
  if (fe::detail::set_stream(handle, s) != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("cuDNN {}: cudnnSetStream failed", what));
  fe::error_t e = g.execute(handle, pack, workspace);
  if (e.is_bad()) throw std::runtime_error(fmt::format("cuDNN {} failed: {}", what, e.get_message()));
}
}  // namespace

CudnnAttention::ShapeGraphs* CudnnAttention::prepare(const FlashAttention& a, DType dt, cudaStream_t s) {
  if (!enabled_) return nullptr;
  const CudnnLibrary& library = cudnn_library();
  if (!library.loaded) {
    static std::once_flag said;
    std::call_once(said, [&] { log::info("attention: {}; the flash kernels run", library.why_not); });
    return nullptr;
  }
  Graphs& g = *graphs_;
  auto [it, fresh] = g.shapes.try_emplace(key_of(a, dt));
  ShapeGraphs& pair = it->second;
  if (fresh) {
    std::shared_ptr<fe::graph::Graph> forward, backward;
    std::string refused;
    std::int64_t need = 0;
    try {  // the frontend also throws, e.g. where a library it loads is missing
      const std::int64_t limit = workspace_limit_bytes();
      // cuDNN 9.25+ on Hopper then serves a deterministic backward whose dP matrix would exceed the
      // limit with ordered dQ sums (workspace linear in T) instead. A user's setting wins.
      setenv("CUDNN_FRONTEND_ATTN_DP_WORKSPACE_LIMIT", std::to_string(limit).c_str(), 0);
      if (g.handle == nullptr) {
        if (cudnnStatus_t status = fe::detail::create_handle(&g.handle); status != CUDNN_STATUS_SUCCESS) {
          g.handle = nullptr;
          throw std::runtime_error(fmt::format("cudnnCreate failed with status {}", static_cast<int>(status)));
        }
      }
      const SdpaTensors tensors = sdpa_tensors(a);
      forward = forward_graph(tensors, dt), backward = backward_graph(tensors, dt);
      refused = build(*forward, g.handle);
      if (refused.empty()) refused = build(*backward, g.handle);
      std::int64_t backward_need = 0;
      if (refused.empty() &&
          (forward->get_workspace_size(need).is_bad() || backward->get_workspace_size(backward_need).is_bad()))
        refused = "a built graph has no workspace size";
      need = std::max(need, backward_need);
      if (refused.empty() && need > limit)
        refused = fmt::format("a workspace of {:.2f} GiB, over a sixteenth of the GPU's memory", need / 1073741824.0);
      if (refused.empty() && static_cast<std::int64_t>(g.workspace.numel()) * 4 < need) {
        ZT_CUDA_CHECK(cudaStreamSynchronize(s));  // the old workspace may still be in use
        g.workspace = Buffer(Device::cuda(device_), DType::f32, static_cast<std::size_t>((need + 3) / 4),
                             MemCategory::workspace);
      }
    } catch (const std::exception& e) {  // out of memory for the workspace included
      refused = e.what();
    }
    if (!refused.empty()) {
      log::warn("attention {}: not on cuDNN {} ({}); the flash kernels run", shape_name(a, dt), library.version, refused);
      return nullptr;  // the pair stays empty: refused once, not asked again
    }
    pair.forward = forward, pair.backward = backward;
    log::info("attention {}: cuDNN {} (workspace {:.1f} MiB)", shape_name(a, dt), library.version, need / 1048576.0);
  }
  return pair.forward ? &pair : nullptr;
}

bool CudnnAttention::forward(const FlashAttention& a, DType dt, const void* q, const void* k, const void* v, void* y,
                             float* stats, cudaStream_t s) {
  ShapeGraphs* shape = prepare(a, dt, s);
  last_forward_on_cudnn_ = shape != nullptr;
  // Backward takes the path this shape's last forward took: only cuDNN's backward reads its stats.
  if (auto it = graphs_->shapes.find(key_of(a, dt)); it != graphs_->shapes.end())
    it->second.forward_ran = last_forward_on_cudnn_;
  if (shape == nullptr) return false;
  run(*shape->forward, graphs_->handle, s,
      {{kQ, const_cast<void*>(q)}, {kK, const_cast<void*>(k)}, {kV, const_cast<void*>(v)}, {kO, y}, {kStats, stats}},
      graphs_->workspace.data(), "attention forward");
  return true;
}

bool CudnnAttention::backward(const FlashAttention& a, DType dt, const void* q, const void* k, const void* v,
                              const void* y, const void* dy, const float* stats, void* dq, void* dk, void* dv,
                              cudaStream_t s) {
  auto it = graphs_->shapes.find(key_of(a, dt));
  if (it == graphs_->shapes.end() || !it->second.forward_ran) return false;
  run(*it->second.backward, graphs_->handle, s,
      {{kQ, const_cast<void*>(q)},
       {kK, const_cast<void*>(k)},
       {kV, const_cast<void*>(v)},
       {kO, const_cast<void*>(y)},
       {kDO, const_cast<void*>(dy)},
       {kStats, const_cast<float*>(stats)},
       {kDQ, dq},
       {kDK, dk},
       {kDV, dv}},
      graphs_->workspace.data(), "attention backward");
  return true;
}

}  // namespace zt::models::cuda
