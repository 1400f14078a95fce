#include "core/device.h"

#include <fmt/format.h>

#include <charconv>

#include "core/device_ops.h"
#include "core/error.h"

namespace zt {

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text.starts_with("cuda:")) {
    std::string_view digits = text.substr(5);
    int index = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty() && index >= 0) return cuda(index);
  }
  throw UserError(fmt::format("invalid device '{}' (expected cpu or cuda:N)", text));
}

std::string Device::str() const { return is_cpu() ? "cpu" : fmt::format("cuda:{}", index); }

int cuda_device_count() { return cuda_built() ? cuda_device_ops().device_count() : 0; }

std::string cuda_unavailable_reason() {
  if (!cuda_built()) return "this zerotrain was built without the CUDA backend";
  return cuda_device_ops().no_device_reason();
}

void require_available(Device device) {
  if (device.is_cpu()) return;
  int count = cuda_device_ops().device_count();  // throws in a build without CUDA
  if (count == 0)
    throw UserError(fmt::format("device {} was asked for, but no CUDA GPU is visible to this process ({})", device.str(),
                                cuda_device_ops().no_device_reason()));
  if (device.index >= count)
    throw UserError(fmt::format("device {} was asked for, but only {} CUDA device(s) are visible (cuda:0..cuda:{})",
                                device.str(), count, count - 1));
}

void activate(Device device) {
  require_available(device);
  device_ops(device).activate(device);
}

}  // namespace zt
