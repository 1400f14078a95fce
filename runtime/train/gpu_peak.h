// The rate a GPU's MFU is measured against: its dense datasheet peak for the run's compute dtype
// (bf16/fp16 on the tensor cores; fp32 runs as TF32, which cuBLAS uses for fp32 products), looked
// up by the name the driver reports. MFU = model FLOPs per second (models/flops.h) / this peak.
#pragma once

#include <string_view>

#include "core/dtype.h"

namespace zt {

// FLOP/s, or 0 for a GPU the table does not know (the run then reports no MFU and says why).
double gpu_peak_flops(std::string_view device_name, DType dtype);

}  // namespace zt
