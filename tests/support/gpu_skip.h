// GPU test cases skip, visibly, where no CUDA device can be used, and say why: no CUDA backend in
// the build, no GPU, or the CUDA runtime's error (a driver older than the runtime, say), so that a
// GPU machine whose every case skipped shows the cause in the GPU kit's table.
#pragma once

#include <gtest/gtest.h>

#include "core/device.h"

#define ZT_SKIP_WITHOUT_CUDA_DEVICE()                                                                  \
  do {                                                                                                 \
    if (::zt::cuda_device_count() == 0)                                                                \
      GTEST_SKIP() << "no CUDA device visible: " << ::zt::cuda_unavailable_reason();                   \
  } while (0)
