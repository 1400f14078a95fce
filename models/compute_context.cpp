#include "models/compute_context.h"

#include "models/layers/linear.h"
#include "runtime/core/cpu_stream.h"
#include "runtime/core/error.h"

namespace zt::models {

namespace {
class CpuComputeContext final : public ComputeContext {
 public:
  Device device() const override { return Device::cpu(); }
  DType dtype() const override { return DType::f32; }
  Stream& stream() override { return stream_; }

 private:
  CpuStream stream_{CpuStream::Mode::inline_on_caller, "cpu-compute"};
};
}  // namespace

std::unique_ptr<ComputeContext> ComputeContext::cpu(int threads) {
  cpu::set_compute_threads(threads);
  return std::make_unique<CpuComputeContext>();
}

#if !ZT_HAVE_CUDA
std::unique_ptr<ComputeContext> ComputeContext::cuda(int index, DType) {
  require_available(Device::cuda(index));  // throws: no CUDA backend in this build
  throw UserError("CUDA compute is not built into this zerotrain");
}
#endif

}  // namespace zt::models
