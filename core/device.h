// Where a buffer lives and where work runs: the host CPU or one CUDA device.
#pragma once

#include <string>
#include <string_view>

namespace zt {

struct Device {
  enum class Kind { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;  // CUDA device ordinal; 0 for the CPU

  static Device cpu() { return {Kind::cpu, 0}; }
  static Device cuda(int index) { return {Kind::cuda, index}; }
  // "cpu", "cuda:N". Throws zt::UserError on anything else. ("cuda" alone means this rank's local
  // GPU and is resolved by the training job, which knows the rank; see runtime/train.)
  static Device parse(std::string_view text);

  bool is_cpu() const { return kind == Kind::cpu; }
  bool is_cuda() const { return kind == Kind::cuda; }
  std::string str() const;
  bool operator==(const Device&) const = default;
};

// True when this build has the CUDA backend compiled in.
bool cuda_built();
// Number of usable CUDA devices: 0 without the CUDA backend, without a driver or without a GPU.
int cuda_device_count();
// Why cuda_device_count() is 0: no CUDA backend in this build, or the CUDA runtime's error (name
// and text); empty when a GPU is visible. Tests print it when they skip their GPU cases.
std::string cuda_unavailable_reason();
// Throws zt::UserError naming the device and the reason when it cannot be used
// (CUDA asked for in a CPU-only build, no GPU visible, ordinal out of range).
void require_available(Device device);
// Makes device current on this thread (CUDA) and checks it is available.
void activate(Device device);

}  // namespace zt
