// Causal attention through cuDNN's fused kernels (cuDNN 9's scaled dot-product attention: flash
// attention tuned for each GPU generation), for the attentions the flash kernels take
// (flash_attention.h): the same layouts (q, k and v read inside the qkv rows, the output written
// into the model's rows), the same float of statistics per (b, h, t) in att, and no (T, T) matrix
// kept between forward and backward (the deterministic backward's workspace may hold one while it
// runs: cudnn_attention.cpp says when, and a shape whose workspace would be too large is refused).
// cuDNN is loaded (libcudnn.so.9), never linked: without it, without the frontend's headers at
// build time, with train.cudnn_attention false, or for a shape cuDNN refuses, the flash kernels run
// and the log says why once. Backward is cuDNN's deterministic algorithm, so repeated runs give
// the same bits. Only compiled with the CUDA backend (cudnn_attention.cpp; no_cudnn.cpp where the
// frontend's headers were missing).
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "core/dtype.h"
#include "models/cuda/flash_attention_rules.h"

namespace zt::models::cuda {

// A loaded cuDNN library, or why none was.
struct CudnnLibrary {
  bool loaded = false;
  long version = 0;  // cudnnGetVersion(): 91900 for 9.19.0
  std::string why_not;
};
// Loads the library `name` (dlopen; no GPU needed) and reads its version.
CudnnLibrary load_cudnn_library(const char* name);
// This process's cuDNN: libcudnn.so.9, loaded at the first call, and the one the frontend uses.
const CudnnLibrary& cudnn_library();

// One per compute context (its stream's device): a cuDNN handle, the graphs built for each
// attention shape, and their workspace.
class CudnnAttention {
 public:
  // enabled false (train.cudnn_attention): the flash kernels run even where cuDNN loads.
  CudnnAttention(int device, bool enabled);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  // y and stats from q, k, v on cuDNN, true where cuDNN takes this attention. The first call for a
  // shape builds its forward and backward graphs (before anything is queued); where either is
  // refused it returns false, as it does without cuDNN, and the caller runs the flash kernels.
  bool forward(const FlashAttention& a, DType dt, const void* q, const void* k, const void* v, void* y, float* stats,
               cudaStream_t s);
  // dq, dk, dv overwritten on cuDNN, true where this shape's last forward ran on cuDNN (stats then
  // hold cuDNN's statistics, which only its backward reads); false otherwise.
  bool backward(const FlashAttention& a, DType dt, const void* q, const void* k, const void* v, const void* y,
                const void* dy, const float* stats, void* dq, void* dk, void* dv, cudaStream_t s);
  // Whether the last forward ran on cuDNN (for the tests that check the path taken).
  bool last_forward_on_cudnn() const { return last_forward_on_cudnn_; }

 private:
  struct Graphs;
  struct ShapeGraphs;
  // This shape's graphs (built at its first call), or null where cuDNN does not run it.
  ShapeGraphs* prepare(const FlashAttention& a, DType dt, cudaStream_t s);
  int device_;
  bool enabled_;
  std::unique_ptr<Graphs> graphs_;
  bool last_forward_on_cudnn_ = false;
};

}  // namespace zt::models::cuda
