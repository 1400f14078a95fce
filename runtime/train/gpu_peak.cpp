#include "runtime/train/gpu_peak.h"

#include <array>

namespace zt {
namespace {

struct GpuPeak {
  std::string_view name_part;  // matched against the driver's name, most specific first
  double tensor_16bit;         // dense bf16 = fp16, FLOP/s
  double tf32;                 // dense TF32, FLOP/s
};

// NVIDIA's datasheets, dense (the sparsity figures are twice these).
constexpr std::array kPeaks{
    GpuPeak{"H100 NVL", 835e12, 417.5e12},
    GpuPeak{"H100 PCIe", 756e12, 378e12},
    GpuPeak{"H100", 989.4e12, 494.7e12},  // SXM ("NVIDIA H100 80GB HBM3")
    GpuPeak{"H200 NVL", 835e12, 417.5e12},
    GpuPeak{"H200", 989.4e12, 494.7e12},
    GpuPeak{"A100", 312e12, 156e12},
};

}  // namespace

double gpu_peak_flops(std::string_view device_name, DType dtype) {
  for (const GpuPeak& peak : kPeaks)
    if (device_name.find(peak.name_part) != std::string_view::npos)
      return dtype == DType::f32 ? peak.tf32 : peak.tensor_16bit;
  return 0.0;
}

}  // namespace zt
