// GPU paths of the comm layer: the NCCL backend (one GPU per rank, or a one-rank communicator per
// process, which NCCL allows even when processes share a GPU), NCCL's refusal of two ranks on one
// GPU, the auto backend choice, and CUDA producer/consumer streams with NCCL and staged MPI.
// Every test skips with the reason when no GPU is visible.
#include <gtest/gtest.h>

#include <tuple>

#include "comm/gpu_assignment.h"
#include "comm/cuda/nccl_communicator.h"
#include "comm/make_communicator.h"
#include "comm/mpi_communicator.h"
#include "core/device_ops.h"
#include "core/cuda/cuda_stream.h"
#include "core/error.h"
#include "tests/comm/collective_checks.h"
#include "tests/comm/comm_test_util.h"

namespace zt::test {
namespace {

CommOptions nccl_options() {
  CommOptions options;
  options.backend = CommBackend::nccl;
  options.timeout_s = 60;
  return options;
}

#define ZT_SKIP_UNLESS_GPU() ZT_SKIP_WITHOUT_GPU(true)

// Skips (visibly) unless every rank of the job has a GPU of its own.
#define ZT_SKIP_UNLESS_GPU_PER_RANK()                                                                  \
  do {                                                                                                 \
    ZT_SKIP_UNLESS_GPU();                                                                              \
    GpuSharing sharing = find_shared_gpus(MPI_COMM_WORLD, test_device(true));                          \
    if (sharing.shared)                                                                                \
      GTEST_SKIP() << "NCCL needs one GPU per rank and " << sharing.detail << " (" << world_size()     \
                   << " ranks, " << cuda_device_count() << " GPU(s) visible)";                         \
  } while (0)

using Param = std::tuple<CollectiveCase, DType, bool>;

std::string param_name(const testing::TestParamInfo<Param>& info) {
  auto [c, dtype, in_place] = info.param;
  return c.name() + "_" + std::string(dtype_name(dtype)) + (in_place ? "_inplace" : "_outofplace");
}

class NcclOneRankCollectives : public testing::TestWithParam<Param> {};

TEST_P(NcclOneRankCollectives, ExactForEverySize) {
  ZT_SKIP_UNLESS_GPU();
  auto [c, dtype, in_place] = GetParam();
  NcclCommunicator comm(MPI_COMM_SELF, test_device(true), nccl_options());
  for (std::size_t size : test_sizes()) check_collective(comm, c, dtype, in_place, size);
}

class NcclWorldCollectives : public testing::TestWithParam<Param> {};

TEST_P(NcclWorldCollectives, ExactOnEveryRankForEverySize) {
  ZT_SKIP_UNLESS_GPU_PER_RANK();
  auto [c, dtype, in_place] = GetParam();
  NcclCommunicator comm(MPI_COMM_WORLD, test_device(true), nccl_options());
  for (std::size_t size : test_sizes()) check_collective(comm, c, dtype, in_place, size);
}

const auto kParams = testing::Combine(testing::ValuesIn(all_collective_cases()),
                                      testing::Values(DType::f32, DType::bf16, DType::f16), testing::Bool());
INSTANTIATE_TEST_SUITE_P(Nccl, NcclOneRankCollectives, kParams, param_name);
INSTANTIATE_TEST_SUITE_P(Nccl, NcclWorldCollectives, kParams, param_name);

TEST(NcclSetup, TwoRanksOnOneGpuAreRefusedWithTheReason) {
  ZT_SKIP_UNLESS_GPU();
  if (!find_shared_gpus(MPI_COMM_WORLD, test_device(true)).shared) GTEST_SKIP() << "every rank has its own GPU";
  try {
    NcclCommunicator comm(MPI_COMM_WORLD, test_device(true), nccl_options());
    ADD_FAILURE() << "NCCL over ranks sharing a GPU was created";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("needs one GPU per rank"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("both use the GPU at PCI bus id"), std::string::npos) << e.what();
  }
}

TEST(NcclSetup, AutoPicksNcclWithAGpuPerRankAndStagedMpiOtherwise) {
  ZT_SKIP_UNLESS_GPU();
  CommOptions options = nccl_options();
  options.backend = CommBackend::auto_select;
  bool shared = find_shared_gpus(MPI_COMM_WORLD, test_device(true)).shared;
  std::unique_ptr<Communicator> comm = make_communicator(options, test_device(true));
  EXPECT_EQ(comm->backend_name(), shared ? "mpi" : "nccl");
  EXPECT_EQ(comm->device(), test_device(true));
}

// The engine's pattern on a GPU: the compute stream produces, the comm stream reduces after it,
// the compute stream consumes after the Work, and the host only waits at the end. Out of place,
// so that even on one rank (where a sum is the identity) a reduction that ran before the
// producer's copy, or a consumer that read before the reduction, leaves zeros behind.
void check_cuda_streams(Communicator& comm) {
  const Device device = comm.device();
  const int n = comm.world_size();
  constexpr std::size_t kSize = 100003;
  CudaStream compute(device.index, CudaStream::Priority::normal);
  Buffer host_in = Buffer::host(DType::f32, kSize, MemCategory::workspace, Buffer::HostMemory::pinned);
  Buffer host_out = Buffer::host(DType::f32, kSize, MemCategory::workspace, Buffer::HostMemory::pinned);
  for (std::size_t i = 0; i < kSize; ++i) host_in.data_as<float>()[i] = static_cast<float>(1 + i % 7);
  Buffer grads(device, DType::f32, kSize, MemCategory::grads);
  Buffer reduced(device, DType::f32, kSize, MemCategory::buckets);
  copy_async(grads.view(), host_in.view(), compute);
  Work work = comm.all_reduce(grads.view(), reduced.view(), ReduceOp::sum, compute);
  work.wait(compute);
  copy_async(host_out.view(), reduced.view(), compute);
  compute.synchronize();
  EXPECT_TRUE(work.is_completed());
  std::vector<float> got(host_out.data_as<float>(), host_out.data_as<float>() + kSize);
  std::vector<float> expected(kSize);
  for (std::size_t i = 0; i < kSize; ++i) expected[i] = static_cast<float>(n * static_cast<int>(1 + i % 7));
  EXPECT_TRUE(same_values(got, expected));
}

TEST(GpuStreams, NcclCommStreamOrdersAfterProducerAndBeforeConsumer) {
  ZT_SKIP_UNLESS_GPU();
  NcclCommunicator comm(MPI_COMM_SELF, test_device(true), nccl_options());
  check_cuda_streams(comm);
}

TEST(GpuStreams, StagedMpiOrdersAfterProducerAndBeforeConsumer) {
  ZT_SKIP_UNLESS_GPU();
  CommOptions options = nccl_options();
  options.backend = CommBackend::mpi;
  MpiCommunicator comm(MPI_COMM_WORLD, test_device(true), options);
  check_cuda_streams(comm);
}

TEST(GpuStreams, NcclAllReduceManyIsOneGroupLaunch) {
  ZT_SKIP_UNLESS_GPU();
  NcclCommunicator comm(MPI_COMM_SELF, test_device(true), nccl_options());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  std::vector<Buffer> buffers;
  std::vector<BufferView> views;
  for (std::size_t size : {3u, 0u, 4097u}) {
    buffers.push_back(make_buffer(comm.device(), DType::bf16, std::vector<float>(size, 2.0f)));
    views.push_back(buffers.back().view());
  }
  Work work = comm.all_reduce_many(views, ReduceOp::avg, compute);
  EXPECT_EQ(work.description().tensors, 3);
  work.wait();
  for (const Buffer& b : buffers) EXPECT_TRUE(same_values(read_buffer(b.view()), std::vector<float>(b.numel(), 2.0f)));
}

}  // namespace
}  // namespace zt::test
