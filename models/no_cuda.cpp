// A build without the CUDA backend: no CUDA compute context, and every op's CUDA entry
// (on_cuda::, ops/<op>.h) answers with the error of core/no_cuda.cpp. Neither is reachable from a
// CPU context; asking for a CUDA one is where a user meets the error.
#include <stdexcept>

#include "core/device.h"
#include "models/compute_context.h"
#include "models/ops/attention.h"
#include "models/ops/embedding.h"
#include "models/ops/gelu.h"
#include "models/ops/gqa_attention.h"
#include "models/ops/layernorm.h"
#include "models/ops/linear.h"
#include "models/ops/residual.h"
#include "models/ops/rmsnorm.h"
#include "models/ops/rope.h"
#include "models/ops/softmax_xent.h"
#include "models/ops/swiglu.h"
#include "models/ops/token_embedding.h"

namespace zt::models {

std::unique_ptr<ComputeContext> ComputeContext::cuda(int index, DType, CudaOptions) {
  require_available(Device::cuda(index));  // throws: this build has no CUDA backend
  return nullptr;
}

namespace ops::on_cuda {
namespace {
[[noreturn]] void no_cuda() {
  require_available(Device::cuda(0));  // throws: this build has no CUDA backend
  throw std::logic_error("unreachable");
}
}  // namespace

void embedding_forward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, int, int, int) { no_cuda(); }
void embedding_backward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, const TokenIndex&, int, int,
                        int) { no_cuda(); }
void token_embedding_forward(ComputeContext&, BufferView, BufferView, BufferView, int, int) { no_cuda(); }
void token_embedding_backward(ComputeContext&, BufferView, BufferView, BufferView, const TokenIndex&, int,
                              int) { no_cuda(); }
void layernorm_forward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, BufferView, BufferView, int,
                       int) { no_cuda(); }
void layernorm_backward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, BufferView, BufferView,
                        BufferView, BufferView, int, int) { no_cuda(); }
void residual_layernorm_forward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, BufferView, BufferView,
                                BufferView, BufferView, int, int) { no_cuda(); }
void linear_forward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, int, int, int, int) { no_cuda(); }
void linear_backward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, BufferView, BufferView, int, int,
                     int, int) { no_cuda(); }
void bias_gelu_forward(ComputeContext&, BufferView, BufferView, BufferView, int, int) { no_cuda(); }
void gelu_bias_backward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, int, int) { no_cuda(); }
void linear_gelu_forward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, BufferView, int, int, int) {
  no_cuda();
}
void linear_backward_into_gelu(ComputeContext&, BufferView, BufferView, BufferView, BufferView, BufferView, BufferView,
                               BufferView, BufferView, int, int, int) {
  no_cuda();
}
void residual_forward(ComputeContext&, BufferView, BufferView, BufferView) { no_cuda(); }
void attention_forward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, int, int, int,
                       int) { no_cuda(); }
void attention_backward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, BufferView, BufferView, int,
                        int, int, int) { no_cuda(); }
void softmax_xent_forward(ComputeContext&, BufferView, BufferView, BufferView, int, int, int) { no_cuda(); }
void softmax_xent_backward(ComputeContext&, BufferView, BufferView, BufferView, float, int, int, int) { no_cuda(); }
void softmax_xent_forward_backward(ComputeContext&, BufferView, BufferView, BufferView, float, int, int, int) {
  no_cuda();
}
void add_mean_loss(ComputeContext&, BufferView, BufferView, int) { no_cuda(); }
void rmsnorm_forward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, int, int, float,
                     RowGroups) { no_cuda(); }
void rmsnorm_backward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, BufferView, BufferView, int, int,
                      RowGroups, bool) { no_cuda(); }
void rope(ComputeContext&, BufferView, std::span<const float>, int, int, int, int, int, bool) { no_cuda(); }
void swiglu_forward(ComputeContext&, BufferView, BufferView, int, int) { no_cuda(); }
void swiglu_backward(ComputeContext&, BufferView, BufferView, BufferView, int, int) { no_cuda(); }
void gqa_attention_forward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, int, int, int, int,
                           int) { no_cuda(); }
void gqa_attention_backward(ComputeContext&, BufferView, BufferView, BufferView, BufferView, BufferView, BufferView, int,
                            int, int, int, int) { no_cuda(); }

}  // namespace ops::on_cuda

}  // namespace zt::models
