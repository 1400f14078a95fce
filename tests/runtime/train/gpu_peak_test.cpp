// The GPU peaks MFU is measured against, by the names the driver reports (as nvidia-smi prints
// them) and the compute dtype.
#include <gtest/gtest.h>

#include "runtime/train/gpu_peak.h"

namespace zt {
namespace {

TEST(GpuPeak, DriverNamesMapToTheirDenseDatasheetRates) {
  EXPECT_DOUBLE_EQ(gpu_peak_flops("NVIDIA H100 80GB HBM3", DType::bf16), 989.4e12);  // SXM
  EXPECT_DOUBLE_EQ(gpu_peak_flops("NVIDIA H100 80GB HBM3", DType::f16), 989.4e12);
  EXPECT_DOUBLE_EQ(gpu_peak_flops("NVIDIA H100 80GB HBM3", DType::f32), 494.7e12);  // TF32
  EXPECT_DOUBLE_EQ(gpu_peak_flops("NVIDIA H100 PCIe", DType::bf16), 756e12);
  EXPECT_DOUBLE_EQ(gpu_peak_flops("NVIDIA H100 NVL", DType::bf16), 835e12);
  EXPECT_DOUBLE_EQ(gpu_peak_flops("NVIDIA H200", DType::bf16), 989.4e12);
  EXPECT_DOUBLE_EQ(gpu_peak_flops("NVIDIA H200 NVL", DType::bf16), 835e12);
  EXPECT_DOUBLE_EQ(gpu_peak_flops("NVIDIA A100-SXM4-80GB", DType::bf16), 312e12);
  EXPECT_DOUBLE_EQ(gpu_peak_flops("NVIDIA A100 80GB PCIe", DType::f32), 156e12);
}

TEST(GpuPeak, AnUnknownGpuHasNoPeak) {
  EXPECT_EQ(gpu_peak_flops("NVIDIA GeForce RTX 4090", DType::bf16), 0.0);
  EXPECT_EQ(gpu_peak_flops("cpu", DType::f32), 0.0);
}

}  // namespace
}  // namespace zt
