// Every collective x dtype x in-place/out-of-place over sizes from 0 to a few MiB on the MPI
// backend: CPU buffers, and GPU buffers staged through pinned host memory (skipped without a GPU);
// on CPU buffers also with a long poll interval of the comm thread.
#include <gtest/gtest.h>

#include <tuple>

#include "comm/mpi_communicator.h"
#include "tests/comm/collective_checks.h"
#include "tests/comm/comm_test_util.h"

namespace zt::test {
namespace {

using Param = std::tuple<CollectiveCase, DType, bool, bool>;  // case, dtype, in place, GPU buffers

class MpiCollectives : public testing::TestWithParam<Param> {};

TEST_P(MpiCollectives, ExactOnEveryRankForEverySize) {
  auto [c, dtype, in_place, gpu] = GetParam();
  ZT_SKIP_WITHOUT_GPU(gpu);
  MpiCommunicator comm(MPI_COMM_WORLD, test_device(gpu), mpi_test_options());
  for (std::size_t size : test_sizes()) check_collective(comm, c, dtype, in_place, size);
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
  auto [c, dtype, in_place, gpu] = info.param;
  return c.name() + "_" + std::string(dtype_name(dtype)) + (in_place ? "_inplace" : "_outofplace") +
         (gpu ? "_gpu_staged" : "_cpu");
}

// A long poll interval (1 ms between tests instead of the default) changes when the comm thread
// progresses a collective, never what it computes.
class MpiCollectivesLongPoll : public testing::TestWithParam<Param> {};

TEST_P(MpiCollectivesLongPoll, ExactOnEveryRankForEverySize) {
  auto [c, dtype, in_place, gpu] = GetParam();
  CommOptions options = mpi_test_options();
  options.poll_interval_us = 1000;
  MpiCommunicator comm(MPI_COMM_WORLD, test_device(gpu), options);
  for (std::size_t size : test_sizes()) check_collective(comm, c, dtype, in_place, size);
}

INSTANTIATE_TEST_SUITE_P(Cpu, MpiCollectivesLongPoll,
                         testing::Combine(testing::ValuesIn(all_collective_cases()),
                                          testing::Values(DType::f32, DType::bf16), testing::Bool(),
                                          testing::Values(false)),
                         param_name);

INSTANTIATE_TEST_SUITE_P(Cpu, MpiCollectives,
                         testing::Combine(testing::ValuesIn(all_collective_cases()),
                                          testing::Values(DType::f32, DType::bf16, DType::f16), testing::Bool(),
                                          testing::Values(false)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(GpuStaged, MpiCollectives,
                         testing::Combine(testing::ValuesIn(all_collective_cases()),
                                          testing::Values(DType::f32, DType::bf16, DType::f16), testing::Bool(),
                                          testing::Values(true)),
                         param_name);

}  // namespace
}  // namespace zt::test
