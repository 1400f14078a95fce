// Helpers of the comm tests: buffers filled from and read back into float vectors (on the CPU or
// a GPU), values that make a wrong reduction, a wrong chunk order or a missing rank visible
// exactly in every dtype, and the device choice of GPU tests.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "comm/comm_options.h"
#include "core/buffer.h"
#include "tests/support/gpu_skip.h"

namespace zt::test {

int world_rank();
int world_size();

Buffer make_buffer(Device device, DType dtype, const std::vector<float>& values);
std::vector<float> read_buffer(const BufferView& view);
void write_buffer(const BufferView& view, const std::vector<float>& values);

// Small integers whose sums over up to 4 ranks (times 2^rank) stay exact in bf16 and f16:
// the period keeps 15 * value within the 16-bit types' exact integer range.
std::size_t value_period(DType dtype);
// Rank r's contribution to element i of a reduction whose chunks have chunk_size elements:
// 2^r * (1 + (chunk index + index in chunk) mod period). Missing a rank changes the factor, a
// wrong chunk shifts the pattern, a wrong op changes the sum.
float reduction_input(int rank, std::size_t i, std::size_t chunk_size, DType dtype);
float reduction_sum(int world, std::size_t i, std::size_t chunk_size, DType dtype);
// Rank r's element j in an all_gather or broadcast: distinct per rank and per position.
float gather_input(int rank, std::size_t j, DType dtype);

// Number of elements where actual differs from expected, with the first few described in detail.
testing::AssertionResult same_values(const std::vector<float>& actual, const std::vector<float>& expected);

// The MPI backend with a 60 s timeout: a hang ends the test binary well before CTest's limit.
CommOptions mpi_test_options();

// The device of a parameterised test; GPU cases skip (visibly) without a GPU.
Device test_device(bool gpu);
#define ZT_SKIP_WITHOUT_GPU(gpu)                                                                   \
  do {                                                                                             \
    if (gpu) ZT_SKIP_WITHOUT_CUDA_DEVICE();                                                        \
  } while (0)

}  // namespace zt::test
