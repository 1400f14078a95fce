#include "models/device_time.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace zt::models {

double block_bytes(const Block& block, int B, int T, DType dtype) {
  const double element = static_cast<double>(dtype_size(dtype));
  double activations = static_cast<double>(block.output_numel(B, T)) * element;
  for (const ActivationSlot& slot : block.saved_slots(B, T, Device::cpu(), dtype))
    activations += static_cast<double>(slot.numel) * (slot.f32 ? 4.0 : element);
  return 3.0 * static_cast<double>(block.param_count()) * element + 3.0 * activations;
}

BlockTime block_time(const Block& block, int B, int T, DType dtype, const DeviceRates& rates) {
  if (!(rates.flops_per_s > 0.0)) throw std::invalid_argument("block_time: the FLOP rate must be positive");
  if (rates.bytes_per_s < 0.0) throw std::invalid_argument("block_time: the memory bandwidth must not be negative");
  double total = block.flops(B, T) / rates.flops_per_s;
  if (rates.bytes_per_s > 0.0) total = std::max(total, block_bytes(block, B, T, dtype) / rates.bytes_per_s);
  return {total / 3.0, 2.0 * total / 3.0};
}

double optimizer_step_seconds(std::size_t parameters, DType param_dtype, const DeviceRates& rates) {
  if (!(rates.bytes_per_s > 0.0)) return 0.0;
  return static_cast<double>(parameters) * (28.0 + static_cast<double>(dtype_size(param_dtype))) / rates.bytes_per_s;
}

double copy_seconds(std::size_t bytes, const DeviceRates& rates) {
  if (!(rates.bytes_per_s > 0.0)) return 0.0;
  return 2.0 * static_cast<double>(bytes) / rates.bytes_per_s;
}

double gradient_statistics_seconds(std::size_t elements, const DeviceRates& rates) {
  if (!(rates.bytes_per_s > 0.0)) return 0.0;
  return static_cast<double>(elements) * 4.0 / rates.bytes_per_s;
}

void occupy_device(double seconds) {
  std::this_thread::sleep_until(std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds));
}

}  // namespace zt::models
