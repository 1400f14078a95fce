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

  void finish_step_stats(BufferView grad, BufferView stats, int micro_batches, BufferView scratch,
                         Stream& stream) override {
    if (scratch.numel < step_stats_scratch_numel() || stats.numel < step_stats::size)
      throw std::invalid_argument("finish_step_stats: scratch or statistics buffer too small");
    cuda::finish_step_stats(grad.as<float>(), grad.numel, stats.as<float>(), micro_batches, scratch.as<float>(),
                            handle_of(stream));
  }
};

}  // namespace

OptimizerOps& cuda_optimizer_ops() {
  static CudaOptimizerOps ops;
  return ops;
}

}  // namespace zt
