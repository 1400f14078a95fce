#include "models/compute_context.h"

#include "core/cpu_stream.h"
#include "models/ops/linear.h"

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

}  // namespace zt::models
