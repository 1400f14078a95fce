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

class EmulatedComputeContext final : public ComputeContext {
 public:
  EmulatedComputeContext(const DeviceRates& rates, DType dtype) : rates_(rates), dtype_(dtype) {}
  Device device() const override { return Device::cpu(); }
  DType dtype() const override { return dtype_; }
  Stream& stream() override { return stream_; }
  const DeviceRates* emulation() const override { return &rates_; }

 private:
  DeviceRates rates_;
  DType dtype_;
  CpuStream stream_{CpuStream::Mode::inline_on_caller, "emulated-compute"};
};
}  // namespace

std::unique_ptr<ComputeContext> ComputeContext::cpu(int threads, DType dtype) {
  if (dtype == DType::i32) throw std::invalid_argument("a compute context stores floats: f32, bf16 or f16");
  cpu::set_compute_threads(threads);
  return std::make_unique<CpuComputeContext>(dtype);
}

std::unique_ptr<ComputeContext> ComputeContext::emulated(const DeviceRates& rates, DType dtype) {
  if (dtype == DType::i32) throw std::invalid_argument("a compute context stores floats: f32, bf16 or f16");
  if (!(rates.flops_per_s > 0.0) || rates.bytes_per_s < 0.0)
    throw std::invalid_argument("an emulated device needs a positive FLOP rate and a memory bandwidth >= 0");
  cpu::set_compute_threads(1);  // the blocks do no arithmetic; what does runs on one thread
  return std::make_unique<EmulatedComputeContext>(rates, dtype);
}

}  // namespace zt::models
