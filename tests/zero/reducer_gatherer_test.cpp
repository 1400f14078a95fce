// The gradient reducer and the parameter gatherer on their own, on real ranks (mpirun with 2 and 3
// ranks): each rank's gradients are known values, so the reduced shard and the gathered blocks
// can be checked element by element.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "comm/make_communicator.h"
#include "core/cpu_stream.h"
#include "zero/exposed_time.h"
#include "zero/gradient_reducer.h"
#include "zero/param_gatherer.h"
#include "zero/partition.h"
#include "zero/rows_first_choice.h"

namespace zt {
namespace {

// Block b's gradient on rank r: distinct for every (rank, block, element), exact in fp32.
float grad_value(int rank, std::size_t block, std::size_t i) {
  return static_cast<float>(rank + 1) * 0.25f + static_cast<float>(block) * 8.0f + static_cast<float>(i % 97);
}

class ReducerGathererTest : public testing::Test {
 protected:
  void SetUp() override { world_ = make_communicator(CommOptions{}, Device::cpu()); }
  void check_gatherer_hands_out_whole_blocks(int ranks_per_host);
  std::unique_ptr<Communicator> world_;
  CpuStream compute_{CpuStream::Mode::inline_on_caller, "compute"};
};

// The reducer's landed(b) reports: each block's chunk of the shard as it was then.
struct Landings {
  std::vector<std::size_t> blocks;
  std::vector<std::vector<float>> chunks;
  std::size_t before_finish = 0;  // reports made before finish()
};

// Reduces one backward pass of block gradients and returns this rank's f32 shard. A plan whose
// reduction is in_place: the gradients are written into their ranges of the shard and reduced there.
std::vector<float> reduce_once(const PartitionPlan& plan, Communicator& comm, Stream& compute, bool overlap,
                               ExposedTime& exposed, std::size_t buffers = 2, MemoryTracker* tracker_out = nullptr,
                               Landings* landings = nullptr) {
  const bool in_place = plan.reduction() == GradientReduction::in_place;
  const std::size_t blocks = plan.blocks().size();
  std::vector<std::optional<std::size_t>> tied(blocks);
  MemoryTracker own_tracker;
  MemoryTracker& tracker = tracker_out ? *tracker_out : own_tracker;
  GradientReducer reducer(plan, tied, comm, compute, Device::cpu(), DType::f32, overlap, buffers, exposed, tracker);
  Buffer shard(Device::cpu(), DType::f32, plan.shard_numel(), MemCategory::grads, tracker);
  std::vector<Buffer> grads;
  std::vector<BufferView> views;
  for (std::size_t b = 0; b < blocks; ++b) {
    if (in_place) {
      views.push_back(shard.slice(plan.block(b).shard_offset, plan.block(b).numel));
    } else {
      grads.emplace_back(Device::cpu(), DType::f32, plan.block(b).numel, MemCategory::workspace, tracker);
      views.push_back(grads.back().view());
    }
    for (std::size_t i = 0; i < plan.block(b).numel; ++i) views[b].as<float>()[i] = grad_value(comm.rank(), b, i);
  }
  std::function<void(std::size_t)> landed;
  if (landings)
    landed = [&](std::size_t b) {
      const float* chunk = shard.data_as<float>() + plan.block(b).shard_offset;
      landings->blocks.push_back(b);
      landings->chunks.emplace_back(chunk, chunk + plan.block(b).chunk_numel);
    };
  reducer.begin(shard.view(), [&](std::size_t b) { return views[b]; }, landed);
  for (std::size_t b = blocks; b-- > 0;) reducer.block_ready(b);  // backward order
  if (landings) landings->before_finish = landings->blocks.size();
  reducer.finish();
  const float* values = shard.data_as<float>();
  return std::vector<float>(values, values + shard.numel());
}

// Bucket layouts: whole blocks per bucket; blocks cut into pieces with a small first bucket; the
// same with more buffers in flight; buckets smaller than a block's chunk on every rank.
struct BucketCase {
  std::size_t bucket, first, buffers;
};
const BucketCase kBucketCases[] = {{200, 0, 2}, {30, 7, 2}, {30, 7, 5}, {11, 3, 3}};

TEST_F(ReducerGathererTest, ReducerAveragesEveryRanksGradientIntoItsShard) {
  const int n = world_->world_size();
  // Block sizes that do not divide by the world size (padding), and buckets of several blocks.
  const std::vector<std::size_t> numels = {7, 130, 45, 1, 64};
  for (const BucketCase& c : kBucketCases) {
    PartitionPlan plan(numels, n, c.bucket, c.first);
    ASSERT_GT(plan.buckets().size(), 1u);
    ExposedTime exposed;
    const std::vector<float> shard = reduce_once(plan, *world_, compute_, true, exposed, c.buffers);
    for (std::size_t b = 0; b < numels.size(); ++b) {
      const PartitionPlan::Chunk chunk = plan.chunk(b, world_->rank());
      const std::size_t offset = plan.block(b).shard_offset;
      for (std::size_t k = 0; k < plan.block(b).chunk_numel; ++k) {
        float want = 0.0f;
        if (k < chunk.real) {
          for (int r = 0; r < n; ++r) want += grad_value(r, b, chunk.begin + k);
          want /= static_cast<float>(n);
        }
        ASSERT_NEAR(shard[offset + k], want, 1e-4f * std::abs(want))
            << "bucket " << c.bucket << " first " << c.first << " buffers " << c.buffers << " block " << b
            << " element " << k;
      }
    }
  }
}

TEST_F(ReducerGathererTest, ReducerOverlapOnAndOffGiveTheSameBits) {
  for (const BucketCase& c : kBucketCases) {
    PartitionPlan plan(std::vector<std::size_t>{33, 90, 17, 250}, world_->world_size(), c.bucket, c.first);
    ExposedTime exposed;
    const std::vector<float> on = reduce_once(plan, *world_, compute_, true, exposed, c.buffers);
    exposed.take_ms();
    const std::vector<float> off = reduce_once(plan, *world_, compute_, false, exposed, c.buffers);
    ASSERT_EQ(on.size(), off.size());
    for (std::size_t i = 0; i < on.size(); ++i) ASSERT_EQ(on[i], off[i]) << "bucket " << c.bucket << " element " << i;
    // With overlap off the compute stream waited for every reduction: that wait is exposed time.
    EXPECT_GT(exposed.take_ms(), 0.0);
  }
}

// landed(b) comes once per block, when its chunk of the shard holds its final values (the gradient
// norm measures it then): with more buckets than buffers, the blocks whose buckets were drained for
// later ones land during backward, the rest in finish().
TEST_F(ReducerGathererTest, EveryBlockLandsOnceWithItsFinalValues) {
  const std::vector<std::size_t> numels{33, 90, 17, 250};
  for (const BucketCase& c : kBucketCases) {
    for (GradientReduction reduction : {GradientReduction::reduce_scatter, GradientReduction::in_place}) {
      const bool in_place = reduction == GradientReduction::in_place;
      PartitionPlan plan(numels, in_place ? 1 : world_->world_size(), c.bucket, c.first, reduction);
      for (bool overlap : {true, false}) {
        SCOPED_TRACE(testing::Message() << "bucket " << c.bucket << " buffers " << c.buffers << " in place "
                                        << in_place << " overlap " << overlap);
        ExposedTime exposed;
        Landings landings;
        const std::vector<float> shard =
            reduce_once(plan, *world_, compute_, overlap, exposed, c.buffers, nullptr, &landings);
        std::vector<std::size_t> sorted = landings.blocks;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2, 3}));
        for (std::size_t i = 0; i < landings.blocks.size(); ++i) {
          const std::size_t offset = plan.block(landings.blocks[i]).shard_offset;
          EXPECT_TRUE(std::equal(landings.chunks[i].begin(), landings.chunks[i].end(), shard.begin() + offset))
              << "block " << landings.blocks[i] << " changed after it landed";
        }
        // Without overlap every bucket lands before backward goes on; with it, those drained for
        // later buckets (in place: none, every reduction is waited for in finish).
        if (!overlap)
          EXPECT_EQ(landings.before_finish, numels.size());
        else if (in_place || plan.buckets().size() <= c.buffers)
          EXPECT_EQ(landings.before_finish, 0u);
        else
          EXPECT_GT(landings.before_finish, 0u);
      }
    }
  }
}

// Stage 0's fp32 path: every rank holds the whole gradient (a plan for one rank) and each bucket is
// all-reduced where backward wrote it, left as the ranks' sum (sum_divisor() = world size): the
// copying path's average times the world size, and no buffer memory.
TEST_F(ReducerGathererTest, ReducerInPlaceLeavesTheSumWithoutBuffers) {
  const int n = world_->world_size();
  const bool power_of_two = (n & (n - 1)) == 0;
  for (const BucketCase& c : kBucketCases) {
    const std::vector<std::size_t> numels{33, 90, 17, 250};
    PartitionPlan plan(numels, 1, c.bucket, c.first, GradientReduction::all_reduce);
    PartitionPlan in_place(numels, 1, c.bucket, c.first, GradientReduction::in_place);
    ASSERT_GT(plan.buckets().size(), 1u);
    for (bool overlap : {true, false}) {
      ExposedTime exposed;
      const std::vector<float> copied = reduce_once(plan, *world_, compute_, overlap, exposed, c.buffers);
      MemoryTracker tracker;
      const std::vector<float> summed = reduce_once(in_place, *world_, compute_, overlap, exposed, c.buffers, &tracker);
      ASSERT_EQ(copied.size(), summed.size());
      for (std::size_t i = 0; i < copied.size(); ++i) {
        // A power-of-two division is exact, so the average times n is the sum bit for bit.
        if (power_of_two)
          ASSERT_EQ(summed[i], copied[i] * static_cast<float>(n)) << "bucket " << c.bucket << " element " << i;
        else
          ASSERT_NEAR(summed[i], copied[i] * static_cast<float>(n), 1e-5f * summed[i]) << "element " << i;
      }
      EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::buckets).peak, 0);
      float want = 0.0f;  // the sum over the ranks, not this rank's own gradient left in place
      for (int r = 0; r < n; ++r) want += grad_value(r, 1, 5);
      EXPECT_NEAR(summed[plan.block(1).shard_offset + 5], want, 1e-6f * want);
    }
  }
}

// A tied embedding exchanged as rows (block 0, tied to block 2, the "head"): when the head reports
// its part of block 0's gradient done before its backward ends (tied_grads_ready), the first of
// block 0's buckets is launched then, not after the head's end, and the shard is bitwise what
// reporting it at the end gives.
TEST_F(ReducerGathererTest, ATiedGradientReportedEarlyIsReducedBeforeItsUsersEnd) {
  const int n = world_->world_size();
  const std::vector<std::size_t> numels{40 * static_cast<std::size_t>(n), 30, 20};
  const std::vector<std::optional<std::size_t>> tied{std::nullopt, std::nullopt, 0};
  PartitionPlan plan(numels, n, 8 * static_cast<std::size_t>(n));
  ASSERT_GT(plan.block(0).buckets.size(), 2u);
  std::size_t buffers = 2;
  auto reduce = [&](bool early, std::size_t& launched_before_head_end) {
    ExposedTime exposed;
    MemoryTracker tracker;
    GradientReducer reducer(plan, tied, *world_, compute_, Device::cpu(), DType::f32, true, buffers, exposed, tracker,
                            0);
    Buffer shard(Device::cpu(), DType::f32, plan.shard_numel(), MemCategory::grads, tracker);
    std::vector<Buffer> grads;
    for (std::size_t b = 0; b < numels.size(); ++b) {
      grads.emplace_back(Device::cpu(), DType::f32, numels[b], MemCategory::workspace, tracker);
      for (std::size_t i = 0; i < numels[b]; ++i) grads[b].view().as<float>()[i] = grad_value(world_->rank(), b, i);
    }
    reducer.begin(shard.view(), [&](std::size_t b) { return grads[b].view(); });
    if (early) {
      EXPECT_TRUE(reducer.tied_grads_ready(2).empty());  // not all of block 0's buckets yet
    }
    launched_before_head_end = reducer.take_completed_works().size();
    reducer.block_ready(2);
    reducer.block_ready(1);
    reducer.finish();
    EXPECT_THROW(reducer.tied_grads_ready(1), std::logic_error);  // block 1 is tied to none
    const float* values = shard.data_as<float>();
    return std::vector<float>(values, values + shard.numel());
  };
  std::size_t own = 0;  // block 0's buckets that hold it alone
  for (std::size_t bucket : plan.block(0).buckets) own += plan.bucket(bucket).pieces.size() == 1;
  ASSERT_EQ(own, 5u);
  std::vector<float> late;
  // With the report: an even share of the 5 over it and the 2 reports left (blocks 2 and 1), or
  // what the spare buffers take where that is more (3 of 4 buffers); the rest spread over blocks 2
  // and 1.
  for (auto [b, launched] : {std::pair<std::size_t, std::size_t>{2, 2}, {4, 3}}) {
    buffers = b;
    std::size_t early_launches = 0, late_launches = 0;
    const std::vector<float> early = reduce(true, early_launches);
    late = reduce(false, late_launches);
    EXPECT_EQ(early_launches, launched) << b << " buffers";
    EXPECT_EQ(late_launches, 0u);
    ASSERT_EQ(early, late) << b << " buffers";
  }
  const PartitionPlan::Chunk chunk = plan.chunk(0, world_->rank());
  float want = 0.0f;
  for (int r = 0; r < n; ++r) want += grad_value(r, 0, chunk.begin + 3);
  EXPECT_NEAR(late[plan.block(0).shard_offset + 3], want / static_cast<float>(n), 1e-5f * want);
}

// The plan's reduction and the communicator must agree: a reduce-scatter has one shard per rank,
// an all-reduce (in place or not) one shard, and a plan cannot say all-reduce over several.
TEST_F(ReducerGathererTest, ThePlansReductionMustFitTheWorld) {
  const std::vector<std::size_t> numels{33, 90};
  EXPECT_THROW(PartitionPlan(numels, 2, 20, 0, GradientReduction::in_place), std::invalid_argument);
  EXPECT_THROW(PartitionPlan(numels, 2, 20, 0, GradientReduction::all_reduce), std::invalid_argument);
  if (world_->world_size() == 1) GTEST_SKIP() << "with one rank every plan fits the world";
  ExposedTime exposed;
  PartitionPlan too_few(numels, 1, 20);  // reduce_scatter, but one shard for several ranks
  EXPECT_THROW(reduce_once(too_few, *world_, compute_, true, exposed), std::invalid_argument);
}

TEST_F(ReducerGathererTest, ReducerNeedsTwoBuffers) {
  PartitionPlan plan(std::vector<std::size_t>{33, 90}, world_->world_size(), 20);
  ExposedTime exposed;
  EXPECT_THROW(reduce_once(plan, *world_, compute_, true, exposed, 1), std::invalid_argument);
}

// ranks_per_host: as TwoLevelAllGather takes it (0: one flat ring).
void ReducerGathererTest::check_gatherer_hands_out_whole_blocks(int ranks_per_host) {
  const int n = world_->world_size();
  const std::vector<std::size_t> numels = {40, 300, 3, 120, 80};
  PartitionPlan plan(numels, n, 1000);
  MemoryTracker tracker;
  // Every rank's shard holds its chunks of block b as b*1000 + element index.
  Buffer shard(Device::cpu(), DType::f32, plan.shard_numel(), MemCategory::params, tracker);
  for (std::size_t b = 0; b < numels.size(); ++b) {
    const std::size_t chunk = plan.block(b).chunk_numel;
    for (std::size_t k = 0; k < chunk; ++k) {
      const std::size_t element = static_cast<std::size_t>(world_->rank()) * chunk + k;
      shard.data_as<float>()[plan.block(b).shard_offset + k] =
          element < numels[b] ? static_cast<float>(b * 1000 + element) : 0.0f;
    }
  }
  ExposedTime exposed;
  const std::size_t prefetch = 150, persistent = 5;
  TwoLevelAllGather all_gather(*world_, ranks_per_host);
  ParamGatherer gatherer(plan, all_gather, nullptr, compute_, Device::cpu(), DType::f32, prefetch, persistent, exposed,
                         tracker);
  gatherer.set_shard(shard.view());
  std::vector<std::vector<std::size_t>> steps;
  for (std::size_t b = 0; b < numels.size(); ++b) steps.push_back({b});
  gatherer.begin_pass(steps);
  for (std::size_t step = 0; step < steps.size(); ++step) {
    std::vector<BufferView> views = gatherer.enter(step);
    ASSERT_EQ(views.size(), 1u);
    for (std::size_t i = 0; i < numels[step]; ++i)
      ASSERT_EQ(views[0].as<float>()[i], static_cast<float>(step * 1000 + i)) << "block " << step << " element " << i;
    gatherer.leave(step);
  }
  gatherer.end_pass();
  // In use (the largest block), plus prefetched within the budget (which may be exceeded by one
  // block), plus the persistent block.
  std::size_t largest = 0;
  for (const BlockPlacement& p : plan.blocks()) largest = std::max(largest, p.padded_numel);
  const auto bound = static_cast<std::int64_t>((largest + prefetch + largest + plan.block(2).padded_numel) * 4);
  EXPECT_LE(tracker.stats(MemoryTracker::Space::host, MemCategory::gathered).peak, bound);
  // Only the persistent block (3 elements) stays gathered after the pass.
  EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::gathered).current,
            static_cast<std::int64_t>(plan.block(2).padded_numel * 4));
  gatherer.invalidate();
  EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::gathered).current, 0);
}

// GPT-2's shape in small: block 3 (the head) reads block 0 (the embedding) again at the forward's
// end, then backward runs blocks 3, 2, 1 (block 0's backward reads nothing).
TEST_F(ReducerGathererTest, GathererHandsOutWholeBlocksWithinThePrefetchBudget) {
  check_gatherer_hands_out_whole_blocks(0);
}

// The same gathers in two levels, as on hosts of 2 ranks each (all ranks run on this one host).
TEST_F(ReducerGathererTest, GathererHandsOutWholeBlocksGatheredInTwoLevels) {
  if (world_->world_size() % 2 != 0 || world_->world_size() < 4) GTEST_SKIP() << "needs several hosts of 2 ranks";
  check_gatherer_hands_out_whole_blocks(2);
}

TEST_F(ReducerGathererTest, GathererKeepsWhatItWouldGatherAgainSoon) {
  const int n = world_->world_size();
  const std::vector<std::size_t> numels = {300, 40, 40, 20};
  PartitionPlan plan(numels, n, 1000);
  MemoryTracker tracker;
  Buffer shard(Device::cpu(), DType::f32, plan.shard_numel(), MemCategory::params, tracker);
  for (std::size_t b = 0; b < numels.size(); ++b)
    for (std::size_t k = 0; k < plan.block(b).chunk_numel; ++k)
      shard.data_as<float>()[plan.block(b).shard_offset + k] = static_cast<float>(b * 1000 + world_->rank());
  const std::vector<std::vector<std::size_t>> steps = {{0}, {1}, {2}, {3, 0}, {3, 0}, {2}, {1}};
  auto padded_bytes = [&](std::size_t b) { return static_cast<std::int64_t>(plan.block(b).padded_numel * 4); };
  struct Case {
    std::size_t prefetch, keep_within, gathers;
  };
  // Blocks 1 and 2 twice (forward, backward), block 3 once (forward into backward), block 0 twice
  // (gathered again for block 3). Kept through the forward (keep_within 4): block 0 once. With a
  // budget that reaches from a block's forward to its backward (blocks 1-3, padded for 3 ranks, take
  // 105 of 110): every block once.
  for (const Case c : {Case{50, 0, 7}, Case{50, 4, 6}, Case{110, 4, 4}}) {
    SCOPED_TRACE(::testing::Message() << "prefetch " << c.prefetch << ", keep_within " << c.keep_within);
    ExposedTime exposed;
    TwoLevelAllGather flat(*world_, 0);
    ParamGatherer gatherer(plan, flat, nullptr, compute_, Device::cpu(), DType::f32, c.prefetch, 0, exposed,
                           tracker);
    gatherer.set_shard(shard.view());
    gatherer.begin_pass(steps, c.keep_within);
    std::size_t gathers = 0;
    for (std::size_t step = 0; step < steps.size(); ++step) {
      const std::vector<BufferView> views = gatherer.enter(step);
      for (std::size_t i = 0; i < views.size(); ++i)
        for (int r = 0; r < n; ++r)
          ASSERT_EQ(views[i].as<float>()[r * plan.block(steps[step][i]).chunk_numel],
                    static_cast<float>(steps[step][i] * 1000 + r));
      if (step == 1 && c.prefetch == 50) {
        // Block 2 is prefetched either way: a kept block 0 does not take the budget.
        const std::int64_t in_flight = padded_bytes(1) + padded_bytes(2) + (c.keep_within ? padded_bytes(0) : 0);
        EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::gathered).current, in_flight);
      }
      gatherer.leave(step);
      gathers += gatherer.take_completed_works().size();
    }
    gatherer.end_pass();
    EXPECT_EQ(gathers, c.gathers);
    EXPECT_EQ(tracker.stats(MemoryTracker::Space::host, MemCategory::gathered).current, 0);
  }
}

}  // namespace
}  // namespace zt

namespace zt {
namespace {

TEST_F(ReducerGathererTest, ExposedTimeMeasuresOnlyWaitsThatCanStall) {
  // A finished collective, and no collective at all, cannot stall the compute stream: no events.
  ExposedTime exposed;
  Buffer data(Device::cpu(), DType::f32, 256, MemCategory::workspace);
  Work done = world_->all_reduce(data.view(), ReduceOp::sum, compute_);
  done.wait();
  auto no_span = [] { return std::pair{std::string("wait"), nlohmann::json::object()}; };
  exposed.wait(done, compute_, nullptr, no_span);
  exposed.wait(Work(), compute_, nullptr, no_span);
  EXPECT_EQ(exposed.measured_waits(), 0u);
  EXPECT_EQ(exposed.take_ms(), 0.0);
  // One still queued behind a producer that holds it for 300 ms more is measured, and its stall
  // is real time.
  CpuStream producer(CpuStream::Mode::worker_thread, "producer");
  producer.enqueue([] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
  Work pending = world_->all_reduce(data.view(), ReduceOp::sum, producer);
  exposed.wait(pending, compute_, nullptr, no_span);
  EXPECT_EQ(exposed.measured_waits(), 1u);
  EXPECT_GT(exposed.take_ms(), 50.0);
  producer.synchronize();
}

// A block's gather time counts once its last piece is issued and every piece has completed: the
// pieces' durations summed (a flat ring's, one part each). A gather begun anew keeps the last whole
// one's time until it is whole itself.
TEST_F(ReducerGathererTest, GatherTimeCountsAWholeGatherOnceEveryPieceCompleted) {
  TwoLevelAllGather gather(*world_, 0);
  const std::size_t n = 4096;
  const std::size_t ranks = static_cast<std::size_t>(world_->world_size());
  Buffer in(Device::cpu(), DType::f32, n, MemCategory::gathered);
  Buffer out(Device::cpu(), DType::f32, n * ranks, MemCategory::gathered);
  auto issue = [&] { return gather.all_gather(in.view(), out.view(), compute_); };
  GatherTime time;
  EXPECT_FALSE(time.latest_ms());
  const TwoLevelAllGather::Issued first = issue();
  time.add(first, 0, n / 2, n);
  first.done.wait();
  EXPECT_FALSE(time.latest_ms()) << "one piece is not the whole gather";
  const TwoLevelAllGather::Issued second = issue();
  time.add(second, n / 2, n - n / 2, n);
  second.done.wait();
  const std::optional<double> whole = time.latest_ms();
  ASSERT_TRUE(whole);
  ASSERT_EQ(first.parts.size(), 1u);
  EXPECT_DOUBLE_EQ(*whole, first.parts[0].second.duration_ms() + second.parts[0].second.duration_ms());
  const TwoLevelAllGather::Issued third = issue();
  time.add(third, 0, n / 2, n);
  third.done.wait();
  EXPECT_EQ(time.latest_ms(), whole) << "the next gather is not whole yet";
}

// lookup_rows_first: auto on a rank: no vote before both times are measured; then the whole table
// where its gather, begun after the update's share before it, ends within the update (with a
// tenth to spare for a new choice); the ranks' votes decide alike.
TEST_F(ReducerGathererTest, RowsFirstChoiceVotesFromTheMeasuredUpdateAndGather) {
  TwoLevelAllGather gather(*world_, 0);
  const std::size_t ranks = static_cast<std::size_t>(world_->world_size());
  Buffer in(Device::cpu(), DType::f32, 64, MemCategory::gathered);
  Buffer out(Device::cpu(), DType::f32, 64 * ranks, MemCategory::gathered);
  auto measured = [&](bool measure_gather) {
    RowsFirstChoice choice;
    const Event begin = compute_.record();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the update
    choice.update_ran(begin, compute_.record());
    if (measure_gather) {
      const TwoLevelAllGather::Issued issued = gather.all_gather(in.view(), out.view(), compute_);
      choice.table_gather().add(issued, 0, 64, 64);
      issued.done.wait();
    }
    return choice;
  };
  RowsFirstChoice unmeasured = measured(false);
  EXPECT_EQ(unmeasured.vote(0.3), kVoteUnknown) << "the table's gather is not measured yet";
  // A 64-element all-gather takes far less than the 200 ms update's remaining 60%.
  RowsFirstChoice early = measured(true);
  EXPECT_EQ(early.vote(0.3), kVoteWholeTable) << early.measured();
  EXPECT_EQ(early.vote(0.95), kVoteRows) << early.measured() << ": the table's gather begins too late";

  const std::vector<std::int32_t> all_whole(3, kVoteWholeTable);
  EXPECT_TRUE(early.decide(all_whole));
  EXPECT_TRUE(early.whole_table());
  EXPECT_FALSE(early.decide(all_whole)) << "no change";
  EXPECT_TRUE(early.decide(std::vector<std::int32_t>{kVoteWholeTable, kVoteRows, kVoteWholeTable}));
  EXPECT_FALSE(early.whole_table()) << "one rank's gather ends too late";
  EXPECT_FALSE(early.decide(std::vector<std::int32_t>{kVoteWholeTable, kVoteUnknown}));
  EXPECT_FALSE(early.whole_table()) << "one rank has not measured";
  // The first choice that every rank measured for is reported, though the rows are kept.
  RowsFirstChoice kept;
  EXPECT_FALSE(kept.decide(std::vector<std::int32_t>{kVoteUnknown, kVoteRows}));
  EXPECT_TRUE(kept.decide(std::vector<std::int32_t>{kVoteRows, kVoteRows}));
  EXPECT_FALSE(kept.whole_table());
  EXPECT_FALSE(kept.decide(std::vector<std::int32_t>{kVoteRows, kVoteRows}));
}

}  // namespace
}  // namespace zt
