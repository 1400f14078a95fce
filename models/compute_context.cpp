#include "models/compute_context.h"

#include <stdexcept>

#include "core/cpu_stream.h"
#include "models/ops/linear.h"

namespace zt::models {

namespace {
class CpuComputeContext final : public ComputeContext {
 public:
  explicit CpuComputeContext(DType dtype) : dtype_(dtype) {}
  Device device() const override { return Device::cpu(); }
  DType dtype() const override { return dtype_; }
  Stream& stream() override { return stream_; }

 private:
  DType dtype_;
  CpuStream stream_{CpuStream::Mode::inline_on_caller, "cpu-compute"};
};
}  // namespace

std::unique_ptr<ComputeContext> ComputeContext::cpu(int threads, DType dtype) {
  if (dtype == DType::i32) throw std::invalid_argument("a compute context stores floats: f32, bf16 or f16");
  cpu::set_compute_threads(threads);
  return std::make_unique<CpuComputeContext>(dtype);
}

}  // namespace zt::models
