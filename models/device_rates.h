// The rates of a compute device, as the time model of models/device_time.h takes them.
#pragma once

namespace zt::models {

struct DeviceRates {
  double flops_per_s = 0.0;  // sustained: a peak times an MFU
  double bytes_per_s = 0.0;  // memory bandwidth; 0 = not modelled
};

}  // namespace zt::models
