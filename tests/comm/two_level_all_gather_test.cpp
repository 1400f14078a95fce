// The two-level all-gather (comm/two_level_all_gather.h) against the flat ring's exact results, on
// real ranks. All ranks run on this one host, so the test names the ranks per host it pretends the
// world has: the levels' communicators and collectives are the same as on real hosts, only slower
// links are missing.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <tuple>

#include "comm/mpi_communicator.h"
#include "comm/two_level_all_gather.h"
#include "tests/comm/collective_checks.h"
#include "tests/comm/comm_test_util.h"

namespace zt::test {
namespace {

AllGatherUnderTest under_test(TwoLevelAllGather& gather) {
  return {[&](BufferView in, BufferView out, Stream& producer) { return gather.all_gather(in, out, producer).done; },
          [&](BufferView in, std::span<const BufferView> chunks, Stream& producer) {
            return gather.all_gather(in, chunks, producer).done;
          }};
}

// Every divisor of the world size between 1 and it, exclusive: the layouts that take two levels.
std::vector<int> two_level_layouts(int world) {
  std::vector<int> per_host;
  for (int l = 2; l < world; ++l)
    if (world % l == 0) per_host.push_back(l);
  return per_host;
}

using Param = std::tuple<DType, bool>;  // dtype, in place

class TwoLevelAllGatherTest : public testing::TestWithParam<Param> {};

TEST_P(TwoLevelAllGatherTest, EqualsTheFlatRingForEverySizeAndLayout) {
  auto [dtype, in_place] = GetParam();
  MpiCommunicator comm(MPI_COMM_WORLD, test_device(false), mpi_test_options());
  const std::vector<int> layouts = two_level_layouts(comm.world_size());
  if (layouts.empty()) GTEST_SKIP() << comm.world_size() << " ranks cannot be split into several hosts of several";
  for (int per_host : layouts) {
    SCOPED_TRACE(std::to_string(per_host) + " ranks per host");
    TwoLevelAllGather gather(comm, per_host);
    ASSERT_TRUE(gather.two_level());
    EXPECT_EQ(gather.hosts() * gather.ranks_per_host(), comm.world_size());
    for (std::size_t size : test_sizes()) check_all_gather_forms(comm, under_test(gather), dtype, in_place, size);
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, TwoLevelAllGatherTest,
                         testing::Combine(testing::Values(DType::f32, DType::bf16), testing::Bool()),
                         [](const testing::TestParamInfo<Param>& info) {
                           return std::string(dtype_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_inplace" : "_outofplace");
                         });

TEST(TwoLevelAllGather, IssuesOneAcrossHostsThenOneWithinTheHostPerHost) {
  MpiCommunicator comm(MPI_COMM_WORLD, test_device(false), mpi_test_options());
  const std::vector<int> layouts = two_level_layouts(comm.world_size());
  if (layouts.empty()) GTEST_SKIP() << comm.world_size() << " ranks cannot be split into several hosts of several";
  TwoLevelAllGather gather(comm, layouts.front());
  const auto n = static_cast<std::size_t>(comm.world_size()), r = static_cast<std::size_t>(comm.rank());
  Buffer out = make_buffer(comm.device(), DType::f32, std::vector<float>(4 * n, 0.0f));
  CpuStream compute(CpuStream::Mode::inline_on_caller, "compute");
  const auto issued = gather.all_gather(out.slice(4 * r, 4), out.view(), compute);
  issued.done.wait();
  ASSERT_EQ(issued.parts.size(), 1u + static_cast<std::size_t>(gather.hosts()));
  EXPECT_EQ(issued.parts.front().first, " across hosts");
  EXPECT_EQ(issued.parts.back().first, " within host");
  EXPECT_EQ(issued.parts.back().second.sequence(), issued.done.sequence());
  for (const auto& [label, work] : issued.parts) EXPECT_TRUE(work.is_completed()) << label;
  // Across hosts: one chunk from each host.
  EXPECT_EQ(issued.parts.front().second.description().count, 4u * static_cast<std::size_t>(gather.hosts()));
}

// A worker stream whose work waits until release(): a producer whose progress the test controls.
class HeldStream {
 public:
  HeldStream() {
    stream_.enqueue([released = released_] { released.wait(); });
  }
  ~HeldStream() { release(); }
  Stream& stream() { return stream_; }
  void release() {
    if (!released_once_) release_.set_value();
    released_once_ = true;
  }

 private:
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
  bool released_once_ = false;
  CpuStream stream_{CpuStream::Mode::worker_thread, "held"};  // last: stops (waits) before the promise goes
};

// The two levels on the first layout that takes them, and one gathered element per rank.
class TwoLevelOrder : public testing::Test {
 protected:
  void SetUp() override {
    const std::vector<int> layouts = two_level_layouts(comm_.world_size());
    if (layouts.empty()) GTEST_SKIP() << comm_.world_size() << " ranks cannot be split into several hosts of several";
    gather_ = std::make_unique<TwoLevelAllGather>(comm_, layouts.front());
  }
  TwoLevelAllGather::Issued gather_one(Stream& producer) {
    return gather_->all_gather(out_.slice(static_cast<std::size_t>(comm_.rank()), 1), out_.view(), producer);
  }
  MpiCommunicator comm_{MPI_COMM_WORLD, test_device(false), mpi_test_options()};
  std::unique_ptr<TwoLevelAllGather> gather_;
  Buffer out_ = make_buffer(Device::cpu(), DType::f32, std::vector<float>(static_cast<std::size_t>(world_size())));
  CpuStream compute_{CpuStream::Mode::inline_on_caller, "compute"};
};

// A collective issued before on the communicator holds the two levels back, as it would hold back
// the communicator's own all-gather: here a barrier whose producer is held.
TEST_F(TwoLevelOrder, StartsAfterTheCollectivesIssuedBeforeOnTheCommunicator) {
  HeldStream held;
  Work earlier = comm_.barrier(held.stream());
  const auto issued = gather_one(compute_);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(earlier.is_completed());
  for (const auto& [label, work] : issued.parts) EXPECT_FALSE(work.is_completed()) << label << " ran before";
  held.release();
  issued.done.wait();
  EXPECT_TRUE(earlier.is_completed());
}

// ...and holds back the collectives issued after it until its exchange across hosts is done.
TEST_F(TwoLevelOrder, HoldsBackTheCollectivesIssuedAfterItOnTheCommunicator) {
  HeldStream held;
  const auto issued = gather_one(held.stream());  // its input written on the held stream
  Work later = comm_.barrier(compute_);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(later.is_completed()) << "a later collective ran before the all-gather's exchange across hosts";
  held.release();
  later.wait();
  EXPECT_TRUE(issued.parts.front().second.is_completed());
  issued.done.wait();
}

// Chunks that overlap across the levels' groups (the first and the last rank's) are refused before
// any level is issued: the next all-gather then finds every rank's levels in step.
TEST_F(TwoLevelOrder, RefusesBadChunksBeforeIssuingAnyLevel) {
  const auto n = static_cast<std::size_t>(comm_.world_size()), r = static_cast<std::size_t>(comm_.rank());
  std::vector<BufferView> chunks;
  for (std::size_t q = 0; q < n; ++q) chunks.push_back(out_.slice(q, 1));
  chunks.back() = chunks.front();
  EXPECT_THROW(gather_->all_gather(out_.slice(r, 1), chunks, compute_), std::invalid_argument);
  chunks.back() = out_.slice(n - 1, 1);
  chunks.front() = out_.slice(0, 0);  // a size other than the input's
  EXPECT_THROW(gather_->all_gather(out_.slice(r, 1), chunks, compute_), std::invalid_argument);
  const auto issued = gather_one(compute_);
  issued.done.wait();
  EXPECT_TRUE(same_values(read_buffer(out_.view()), std::vector<float>(n, 0.0f)));
}

TEST(TwoLevelAllGather, OneHostOrOneRankPerHostIsTheFlatRing) {
  MpiCommunicator comm(MPI_COMM_WORLD, test_device(false), mpi_test_options());
  const auto n = static_cast<std::size_t>(comm.world_size()), r = static_cast<std::size_t>(comm.rank());
  for (int per_host : {0, 1, comm.world_size()}) {
    TwoLevelAllGather gather(comm, per_host);
    EXPECT_FALSE(gather.two_level()) << per_host;
    EXPECT_EQ(gather.hosts(), 1);
    CpuStream compute(CpuStream::Mode::inline_on_caller, "compute");
    Buffer out = make_buffer(comm.device(), DType::f32, std::vector<float>(n, 0.0f));
    const std::uint64_t sequence = comm.next_sequence();
    const auto issued = gather.all_gather(out.slice(r, 1), out.view(), compute);
    issued.done.wait();
    ASSERT_EQ(issued.parts.size(), 1u);
    EXPECT_EQ(issued.parts.front().first, "");
    EXPECT_EQ(issued.done.sequence(), sequence) << "the communicator's own all-gather";
  }
}

TEST(TwoLevelAllGather, RanksPerHostThatDoNotDivideTheWorldAreRefused) {
  MpiCommunicator comm(MPI_COMM_WORLD, test_device(false), mpi_test_options());
  if (comm.world_size() < 3) GTEST_SKIP() << "every count below 2 ranks divides the world";
  int per_host = 2;
  while (comm.world_size() % per_host == 0) ++per_host;
  if (per_host >= comm.world_size()) GTEST_SKIP() << "every count from 2 divides " << comm.world_size();
  EXPECT_THROW(TwoLevelAllGather(comm, per_host), std::invalid_argument);
}

TEST(LaunchInfo, RanksOnOneHostAreOneBlockOfTheWholeWorld) {
  MpiCommunicator comm(MPI_COMM_WORLD, test_device(false), mpi_test_options());
  EXPECT_EQ(comm.local_size(), comm.world_size()) << "the test runs every rank on one host";
  EXPECT_EQ(comm.ranks_per_host_block(), comm.world_size());
}

TEST(LaunchInfo, AHostHoldsABlockOnlyWhenItsRanksAreConsecutiveFromAMultipleOfItsSize) {
  EXPECT_EQ(host_rank_block(2, 0, 1), 2);
  EXPECT_EQ(host_rank_block(2, 2, 3), 2);
  EXPECT_EQ(host_rank_block(4, 4, 7), 4);
  EXPECT_EQ(host_rank_block(1, 5, 5), 1);
  EXPECT_EQ(host_rank_block(2, 1, 2), 0) << "not starting at a multiple of 2";
  EXPECT_EQ(host_rank_block(2, 0, 2), 0) << "ranks 0 and 2: round-robin placement";
  EXPECT_EQ(host_rank_block(3, 0, 3), 0);
}

}  // namespace
}  // namespace zt::test
