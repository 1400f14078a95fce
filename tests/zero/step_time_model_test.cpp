// The α–β step-time model of `zerotrain plan --predict` against values computed by hand from the
// formulas in zero/step_time_model.h.
#include "zero/step_time_model.h"

#include <gtest/gtest.h>

#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "models/gpt2.h"
#include "zero/gradient_reducer.h"
#include "zero/lookup_rows.h"
#include "zero/memory_plan.h"
#include "zero/shard_optimizer.h"

namespace zt {
namespace {

TEST(CollectiveTime, OneRankCostsNothing) {
  const LinkModel link{.latency_s = 0.5, .bytes_per_s = 1.0};
  EXPECT_EQ(all_reduce_seconds(1e6, 1, link), 0.0);
  EXPECT_EQ(reduce_scatter_seconds(1e6, 1, link), 0.0);
  EXPECT_EQ(all_gather_seconds(1e6, 1, link), 0.0);
}

TEST(CollectiveTime, RingVolumesAndLatencyTerms) {
  const LinkModel link{.latency_s = 0.001, .bytes_per_s = 1e6};
  // N = 2: all-reduce 2·1·α + 2·(1/2)·1 s; reduce-scatter and all-gather 1·α + (1/2)·1 s.
  EXPECT_DOUBLE_EQ(all_reduce_seconds(1e6, 2, link), 0.002 + 1.0);
  EXPECT_DOUBLE_EQ(reduce_scatter_seconds(1e6, 2, link), 0.001 + 0.5);
  EXPECT_DOUBLE_EQ(all_gather_seconds(1e6, 2, link), 0.001 + 0.5);
  // N = 4: 2·3·α + 2·(3/4)·1 s; 3·α + (3/4)·1 s.
  EXPECT_DOUBLE_EQ(all_reduce_seconds(1e6, 4, link), 0.006 + 1.5);
  EXPECT_DOUBLE_EQ(reduce_scatter_seconds(1e6, 4, link), 0.003 + 0.75);
  EXPECT_DOUBLE_EQ(all_gather_seconds(1e6, 4, link), 0.003 + 0.75);
}

// Two ranks per host: a ring on one host steps over the intra-host link alone; a ring across hosts
// over both kinds of edge at once, so at the larger α and the smaller β of the two.
TEST(CollectiveTime, RanksPerHostPickTheLinkEachRingStepsAt) {
  const LinkModel hosts{.latency_s = 0.001, .bytes_per_s = 1e6, .ranks_per_host = 2, .intra_latency_s = 0.0001,
                        .intra_bytes_per_s = 1e7};
  // N = 2 on one host: 1·α_intra + (1/2)·1e6 / 1e7 s.
  EXPECT_DOUBLE_EQ(reduce_scatter_seconds(1e6, 2, hosts), 0.0001 + 0.05);
  // N = 4 on two hosts: 3·α_inter + (3/4)·1e6 / 1e6 s, as with every rank on its own host.
  const LinkModel flat{.latency_s = 0.001, .bytes_per_s = 1e6};
  EXPECT_DOUBLE_EQ(reduce_scatter_seconds(1e6, 4, hosts), reduce_scatter_seconds(1e6, 4, flat));
  // A slower intra-host link bounds the crossing ring instead.
  LinkModel slow_inside = hosts;
  slow_inside.intra_bytes_per_s = 1e5, slow_inside.intra_latency_s = 0.01;
  EXPECT_DOUBLE_EQ(all_gather_seconds(1e6, 4, slow_inside), 3 * 0.01 + 0.75 * 10.0);
  // No intra-host bandwidth given: the link between hosts serves inside them too.
  LinkModel unspecified = hosts;
  unspecified.intra_bytes_per_s = 0.0;
  EXPECT_DOUBLE_EQ(all_reduce_seconds(1e6, 2, unspecified), 2 * 0.0001 + 1.0);
}

// All-gathers in two levels: H-1 steps across hosts, each host's link carrying one chunk of each of
// its L ranks, then H rings of L ranks within the host; everything else stays a flat ring.
TEST(CollectiveTime, TwoLevelAllGathersCrossEachHostsLinkOnce) {
  LinkModel hosts{.latency_s = 0.001, .bytes_per_s = 1e6, .ranks_per_host = 2, .intra_latency_s = 0.0001,
                  .intra_bytes_per_s = 1e7, .two_level_all_gather = true};
  // 2 hosts x 2: across 1·(α + 2·(1e6/4) / 1e6) = α + 0.5 s; within 2·1·(α_intra + (1e6/4) / 1e7).
  EXPECT_DOUBLE_EQ(all_gather_seconds(1e6, 4, hosts), 0.001 + 0.5 + 2 * (0.0001 + 0.025));
  // 4 hosts x 2 (N = 8): across 3·(α + 2·(1e6/8) / 1e6); within 4·1·(α_intra + (1e6/8) / 1e7).
  EXPECT_DOUBLE_EQ(all_gather_seconds(1e6, 8, hosts), 3 * (0.001 + 0.25) + 4 * (0.0001 + 0.0125));
  // 2 hosts x 4 (N = 8): across 1·(α + 4·(1e6/8) / 1e6); within 2·3·(α_intra + (1e6/8) / 1e7).
  hosts.ranks_per_host = 4;
  EXPECT_DOUBLE_EQ(all_gather_seconds(1e6, 8, hosts), 0.001 + 0.5 + 6 * (0.0001 + 0.0125));
  // One host, one rank per host, or hosts that do not tile the ranks: the flat ring.
  LinkModel flat = hosts;
  flat.two_level_all_gather = false;
  for (int n : {4, 6}) EXPECT_DOUBLE_EQ(all_gather_seconds(1e6, n, hosts), all_gather_seconds(1e6, n, flat)) << n;
  hosts.ranks_per_host = flat.ranks_per_host = 1;
  EXPECT_DOUBLE_EQ(all_gather_seconds(1e6, 8, hosts), all_gather_seconds(1e6, 8, flat));
  // Reductions never take two levels (their sums would be added in another order).
  hosts.ranks_per_host = flat.ranks_per_host = 2;
  EXPECT_DOUBLE_EQ(reduce_scatter_seconds(1e6, 4, hosts), reduce_scatter_seconds(1e6, 4, flat));
}

// Three blocks of equal compute, one bucket each (bucket k complete when block 2 - k finishes
// backward), 1000 bytes per bucket and per gathered block, 2 ranks, 1000 B/s, no latency,
// T_micro = 3 s: forward 1 s (1/3 s a block), backward 2 s (2/3 s a block).
StepTimeInputs three_blocks(int stage, double bytes_per_s = 1000.0) {
  StepTimeInputs in;
  in.stage = stage;
  in.world_size = 2;
  in.micro_batch_compute_s = 3.0;
  in.block_compute_share = {1.0 / 3, 1.0 / 3, 1.0 / 3};
  in.bucket_comm_bytes = {1000.0, 1000.0, 1000.0};
  in.bucket_ready_block = {2, 1, 0};
  if (stage > 0) in.block_gather_bytes = {1000.0, 1000.0, 1000.0};
  in.link = {.latency_s = 0.0, .bytes_per_s = bytes_per_s};
  return in;
}

TEST(StepTimeModel, OneRankIsComputeOnly) {
  for (int stage = 0; stage <= 3; ++stage) {
    StepTimeInputs in = three_blocks(stage);
    in.world_size = 1;
    in.micro_batches = 2;
    in.link = {.latency_s = 0.25, .bytes_per_s = 0.0};  // not used on one rank
    const StepTimePrediction p = predict_step_time(in);
    EXPECT_EQ(p.compute_s, 6.0);
    EXPECT_EQ(p.comm_s, 0.0);
    EXPECT_EQ(p.exposed_s, 0.0);
    EXPECT_EQ(p.step_s, 6.0);
    EXPECT_EQ(p.step_without_overlap_s, 6.0);
  }
}

TEST(StepTimeModel, StageZeroReplaysTheBucketsAsBackwardCompletesThem) {
  // All-reduces of 1 s each (2·(1/2)·1000/1000), issued at 2/3, 4/3 and 2 s: the link is busy
  // from 2/3 s on, so the last one ends at 2/3 + 3 = 11/3 s, 5/3 s after backward.
  const StepTimePrediction p = predict_step_time(three_blocks(0));
  EXPECT_DOUBLE_EQ(p.compute_s, 3.0);
  EXPECT_DOUBLE_EQ(p.comm_s, 3.0);
  EXPECT_DOUBLE_EQ(p.exposed_s, 5.0 / 3);
  EXPECT_DOUBLE_EQ(p.step_s, 3.0 + 5.0 / 3);
  EXPECT_DOUBLE_EQ(p.step_without_overlap_s, 6.0);
}

TEST(StepTimeModel, StageZeroExposesWhatBackwardCannotCover) {
  // At 500 B/s each all-reduce takes 2 s: the link ends at 2/3 + 6 s.
  const StepTimePrediction p = predict_step_time(three_blocks(0, 500.0));
  EXPECT_DOUBLE_EQ(p.comm_s, 6.0);
  EXPECT_DOUBLE_EQ(p.exposed_s, 2.0 / 3 + 6.0 - 2.0);
  EXPECT_DOUBLE_EQ(p.step_without_overlap_s, 9.0);
}

TEST(StepTimeModel, TheFirstBlocksBucketsWaitForTheEndOfBackward) {
  // A fast link (0.05 s per reduction), but a bucket with the first block's gradient can only be
  // issued when backward ends: that reduction is exposed whatever the link, and it is the only one.
  StepTimeInputs in = three_blocks(0, 20000.0);
  EXPECT_NEAR(predict_step_time(in).exposed_s, 0.05, 1e-12);
  // The same three buckets all waiting for block 0 (one layer cut into pieces): all exposed.
  in.bucket_ready_block = {0, 0, 0};
  EXPECT_NEAR(predict_step_time(in).exposed_s, 0.15, 1e-12);
}

TEST(StepTimeModel, ActivationCheckpointingRecomputesBeforeEachBackward) {
  // Blocks 1 and 2 run their forward (1/3 s) again before their backward: backward takes 1, 1 and
  // 2/3 s (8/3 in all), T_compute 3 + 2/3. The all-reduces (1 s) are issued at 1, 2 and 8/3 s and
  // end at 2, 3 and 4 s: 4/3 s exposed (5/3 without recompute: a longer backward hides more).
  StepTimeInputs in = three_blocks(0);
  in.block_recompute_s = {0.0, 1.0 / 3, 1.0 / 3};
  const StepTimePrediction p = predict_step_time(in);
  EXPECT_DOUBLE_EQ(p.compute_s, 11.0 / 3);
  EXPECT_DOUBLE_EQ(p.comm_s, 3.0);
  EXPECT_DOUBLE_EQ(p.exposed_s, 4.0 / 3);
  EXPECT_DOUBLE_EQ(p.step_s, 5.0);
  in.block_recompute_s = {0.0, 1.0};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in.block_recompute_s = {0.0, -1.0, 0.0};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

TEST(StepTimeModel, StagesOneAndTwoAddTheParameterGathersBeforeEachBlocksForward) {
  for (int stage : {1, 2}) {
    // Reduce-scatters of 0.5 s issued at 2/3, 4/3 and 2 s: the last ends at 2.5 s (0.5 exposed).
    // Gathers of 0.5 s end at 0.5, 1 and 1.5 s against blocks of 1/3 s: forward waits for each,
    // the last block runs from 1.5 to 11/6 s (5/6 exposed).
    const StepTimePrediction p = predict_step_time(three_blocks(stage));
    SCOPED_TRACE(stage);
    EXPECT_DOUBLE_EQ(p.comm_s, 1.5 + 1.5);
    EXPECT_DOUBLE_EQ(p.exposed_s, 0.5 + 5.0 / 6);
    // overlap_comm false: the reductions (1.5 s) after backward; the gathers as with overlap.
    EXPECT_DOUBLE_EQ(p.step_without_overlap_s, 3.0 + 1.5 + 5.0 / 6);
  }
  // Parameters twice as large (bf16 gradients, fp32 parameters): gathers of 1 s end at 1, 2, 3 s.
  StepTimeInputs in = three_blocks(2);
  in.block_gather_bytes = {2000.0, 2000.0, 2000.0};
  const StepTimePrediction p = predict_step_time(in);
  EXPECT_DOUBLE_EQ(p.comm_s, 1.5 + 3.0);
  EXPECT_DOUBLE_EQ(p.exposed_s, 0.5 + (3.0 + 1.0 / 3 - 1.0));
}

TEST(StepTimeModel, EachBlocksGatherStartsOnceTheOptimizerUpdatedIt) {
  // The optimizer (0.6 s) updates block 0 (half of it), then blocks 1 and 2 (a quarter each): their
  // new parameters go out 0.3 s, 0.15 s and 0 s before forward begins. Gathers of 0.5 s end at
  // 0.2, 0.7 and 1.2 s; forward runs block 0 at 0.2, waits for block 1 until 0.7 and for block 2
  // until 1.2 s, and ends at 1.2 + 1/3 s.
  for (int stage : {1, 2}) {
    SCOPED_TRACE(stage);
    StepTimeInputs in = three_blocks(stage);
    in.optimizer_s = 0.6;
    in.block_optimizer_share = {0.5, 0.25, 0.25};
    const StepTimePrediction p = predict_step_time(in);
    EXPECT_DOUBLE_EQ(p.compute_s, 3.6);
    in.statistics_s = 0.1;  // the gradient statistics' pass: compute before the update, nothing else moves
    EXPECT_DOUBLE_EQ(predict_step_time(in).compute_s, 3.7);
    EXPECT_DOUBLE_EQ(predict_step_time(in).exposed_s, p.exposed_s);
    in.statistics_s = 0.0;
    EXPECT_DOUBLE_EQ(p.comm_s, 1.5 + 1.5);
    EXPECT_DOUBLE_EQ(p.exposed_s, 0.5 + (1.2 + 1.0 / 3 - 1.0));
    in.block_optimizer_share.clear();  // all at the update's end: as before, 5/6 s in forward
    EXPECT_DOUBLE_EQ(predict_step_time(in).exposed_s, 0.5 + 5.0 / 6);
  }
  // Stage 3: only the first block's gather of the step's first forward goes out early (0.3 s);
  // the others, and the second micro batch's, are issued when their forward begins.
  StepTimeInputs in = three_blocks(3);
  in.micro_batches = 2;
  in.optimizer_s = 0.6;
  in.block_optimizer_share = {0.5, 0.25, 0.25};
  const StepTimePrediction p = predict_step_time(in);
  // First forward: gathers end at 0.2, 0.7, 1.2 s (as above); the second's as without (5/6 s).
  EXPECT_DOUBLE_EQ(p.exposed_s, 2 * 0.5 + 5.0 / 6 + (1.2 + 1.0 / 3 - 1.0));
  in.block_optimizer_share = {0.5, 0.5};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

TEST(StepTimeModel, AFirstBlockPublishedInPiecesStartsItsGatherAfterItsFirstPiece) {
  // As above (stage 2), block 0 in 3 pieces: each piece's update takes 0.1 s and its gather 1/6 s,
  // so the link never waits for an update once the first piece (done at -0.5 s) goes out: block 0
  // is gathered at 0, block 1 (out at -0.15 s) at 0.5 s, block 2 (out at 0) at 1 s. Forward runs
  // block 0 at once, waits for block 1 until 0.5 s and for block 2 until 1 s: it ends at 4/3 s.
  StepTimeInputs in = three_blocks(2);
  in.optimizer_s = 0.6;
  in.block_optimizer_share = {0.5, 0.25, 0.25};
  in.block_publish_pieces = {3, 1, 1};
  EXPECT_DOUBLE_EQ(predict_step_time(in).exposed_s, 0.5 + (4.0 / 3 - 1.0));
  in.block_publish_pieces = {1, 1, 1};  // whole: as in the test above
  EXPECT_DOUBLE_EQ(predict_step_time(in).exposed_s, 0.5 + (1.2 + 1.0 / 3 - 1.0));
  in.block_publish_pieces = {3, 1};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in.block_publish_pieces = {0, 1, 1};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  // Each piece is an all-gather of its own, paying the ring's latency.
  in.block_publish_pieces.clear();
  in.link.latency_s = 0.01;
  const double whole_comm = predict_step_time(in).comm_s;
  in.block_publish_pieces = {3, 1, 1};
  const double extra = 3 * all_gather_seconds(in.block_gather_bytes[0] / 3, in.world_size, in.link) -
                       all_gather_seconds(in.block_gather_bytes[0], in.world_size, in.link);
  EXPECT_GT(extra, 0.0);
  EXPECT_NEAR(predict_step_time(in).comm_s - whole_comm, extra, 1e-12);
  // Stage 3: the step's first forward finds block 0 gathered at 0 instead of 0.2 s (the others are
  // issued when forward begins): it runs block 1 at 0.5 s and block 2 at 1 s, 0.2 s sooner.
  in = three_blocks(3);
  in.optimizer_s = 0.6;
  in.block_optimizer_share = {0.5, 0.25, 0.25};
  const double whole = predict_step_time(in).exposed_s;
  in.block_publish_pieces = {3, 1, 1};
  EXPECT_NEAR(predict_step_time(in).exposed_s - whole, -0.2, 1e-12);
}

TEST(StepTimeModel, ATiedEmbeddingSentAsRowsIsReducedDuringBackward) {
  // Block 0's bucket (the last) is ready when block 2, tied to it, finishes (2/3 s), not when
  // block 0 does; its rows (an all-gather of 200 bytes: 0.1 s) go when block 1 finishes (4/3 s),
  // and block 0 runs no backward of its own (the exchange replaces it): backward ends at 4/3 s.
  // The link runs them as issued: bucket 0 and block 0's bucket from 2/3 s (to 7/6 and 5/3 s),
  // bucket 1 from 5/3 s, then the rows: 13/6 + 0.1 s, 5/6 + 0.1 s after backward.
  StepTimeInputs in = three_blocks(2);
  in.bucket_ready_block = {2, 1, 2};
  in.rows_gather_bytes = 200.0;
  in.rows_ready_block = 1;
  const StepTimePrediction p = predict_step_time(in);
  EXPECT_DOUBLE_EQ(p.compute_s, 3.0 - 2.0 / 3);
  EXPECT_DOUBLE_EQ(p.comm_s, 1.5 + 0.1 + 1.5);
  EXPECT_NEAR(p.exposed_s, (13.0 / 6 + 0.1 - 4.0 / 3) + 5.0 / 6, 1e-12);
  in.rows_ready_block = 0;  // the block after the rows block: there is none before block 0
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in.rows_ready_block = 3;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

TEST(StepTimeModel, ATiedGradientCompleteHalfwayThroughItsUsersBackwardIsReducedFromThere) {
  // As above, but block 2 (the head) completes block 0's gradient halfway through its backward
  // (1/3 s): block 0's bucket runs 1/3 to 5/6 s, bucket 0 to 4/3 s, bucket 1 to 11/6 s and the rows
  // to 29/15 s, 3/5 s after backward's 4/3 s: 1/3 s less than above.
  StepTimeInputs in = three_blocks(2);
  in.bucket_ready_block = {2, 1, 2};
  in.rows_gather_bytes = 200.0;
  in.rows_ready_block = 1;
  const double at_the_end = predict_step_time(in).exposed_s;
  in.bucket_ready_share = {1.0, 1.0, 0.5};
  const StepTimePrediction p = predict_step_time(in);
  EXPECT_DOUBLE_EQ(p.comm_s, 1.5 + 0.1 + 1.5);
  EXPECT_NEAR(p.exposed_s, 3.0 / 5 + 5.0 / 6, 1e-12);
  EXPECT_NEAR(at_the_end - p.exposed_s, 1.0 / 3, 1e-12);
  in.bucket_ready_share = {1.0, 1.0};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);  // one per bucket
  in.bucket_ready_share = {1.0, 1.0, 1.5};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

TEST(StepTimeModel, StageTwoReducesEveryMicroBatchStageOneOnce) {
  StepTimeInputs in = three_blocks(1);
  in.micro_batches = 2;
  const StepTimePrediction one = predict_step_time(in);
  in.stage = 2;
  const StepTimePrediction two = predict_step_time(in);
  EXPECT_DOUBLE_EQ(one.comm_s, 1.5 + 1.5);
  EXPECT_DOUBLE_EQ(two.comm_s, 2 * 1.5 + 1.5);
  EXPECT_DOUBLE_EQ(one.exposed_s, 0.5 + 5.0 / 6);
  EXPECT_DOUBLE_EQ(two.exposed_s, 2 * 0.5 + 5.0 / 6);
}

TEST(StepTimeModel, StageThreeGathersInEveryForwardAndBackward) {
  StepTimeInputs in = three_blocks(3);
  in.micro_batches = 2;
  in.prefetch_bytes = 1000.0;  // one block: only the last stays gathered from forward
  const StepTimePrediction p = predict_step_time(in);
  EXPECT_DOUBLE_EQ(p.compute_s, 6.0);
  // Per micro batch: reductions 1.5 s, forward gathers 1.5 s, backward gathers 1 s (block 2 is
  // still there from forward).
  EXPECT_DOUBLE_EQ(p.comm_s, 2 * 1.5 + 2 * (1.5 + 1.0));
  // Forward as at stage 2 (5/6). Backward as in AStageThreeBackwardGathersWithinItsPrefetchBudget-
  // BehindTheReductions: 5/6 s late.
  EXPECT_DOUBLE_EQ(p.exposed_s, 2 * (5.0 / 6 + 5.0 / 6));
  EXPECT_DOUBLE_EQ(p.step_s, 6.0 + 10.0 / 3);
  // overlap_comm false: per micro batch the reductions (1.5 s) after backward, whose gathers alone
  // (ending at 0.5 and 7/6 s) keep ahead of blocks 1 and 0; the forwards wait 5/6 s as above.
  EXPECT_DOUBLE_EQ(p.step_without_overlap_s, 6.0 + 2 * 1.5 + 2 * 5.0 / 6);
}

TEST(StepTimeModel, AStageThreeBackwardReadsTheBlocksHeldFromForwardWithoutGathers) {
  StepTimeInputs in = three_blocks(3);
  // A budget of two blocks: blocks 2 and 1 stay gathered from forward and take it until backward
  // reads them. Entering block 2 issues block 0's gather (0-1/2 s: the held block 1 and it fill the
  // budget); the reductions end at 7/6, 11/6 and 5/2 s: 1/2 s after backward's 2 s.
  in.prefetch_bytes = 2000.0;
  const StepTimePrediction two = predict_step_time(in);
  EXPECT_DOUBLE_EQ(two.comm_s, 1.5 + 1.5 + 0.5);
  EXPECT_DOUBLE_EQ(two.exposed_s, 5.0 / 6 + 0.5);
  // Two and a half blocks: no more is held (block 0 would exceed it), the same schedule.
  in.prefetch_bytes = 2500.0;
  EXPECT_DOUBLE_EQ(predict_step_time(in).exposed_s, two.exposed_s);
  // Unlimited: every block stays gathered, backward gathers nothing.
  in.prefetch_bytes = std::numeric_limits<double>::infinity();
  const StepTimePrediction all = predict_step_time(in);
  EXPECT_DOUBLE_EQ(all.comm_s, 1.5 + 1.5);
  EXPECT_DOUBLE_EQ(all.exposed_s, 5.0 / 6 + 0.5);
  // A block whose backward reads nothing is passed over: with blocks 2 and 1 held and block 0
  // reading nothing, nothing is gathered in backward with a budget of two blocks either.
  in.prefetch_bytes = 2000.0;
  in.block_backward_reads_params = {false, true, true};
  EXPECT_DOUBLE_EQ(predict_step_time(in).comm_s, 1.5 + 1.5);
  // Nor is the last block held when its backward reads nothing: blocks 1 and 0 fill the budget.
  in.block_backward_reads_params = {true, true, false};
  EXPECT_DOUBLE_EQ(predict_step_time(in).comm_s, 1.5 + 1.5);
}

TEST(StepTimeModel, PersistentBlocksStayHeldAndTakeNoPrefetchBudget) {
  StepTimeInputs in = three_blocks(3);
  in.prefetch_bytes = 1000.0;  // one block
  // Without persistence: block 2 held, blocks 1 and 0 gathered again (1 s).
  EXPECT_DOUBLE_EQ(predict_step_time(in).comm_s, 1.5 + 1.5 + 1.0);
  // A persistent last block takes none of the budget: block 1 is held too. Entering block 2 issues
  // nothing (the held block 1 fills the budget); block 1 issues block 0's gather, behind block 2's
  // reduction (7/6-5/3); block 0 runs 5/3-7/3 and its reduction ends at 17/6 s: 5/6 s late.
  in.block_persistent = {false, false, true};
  const StepTimePrediction last = predict_step_time(in);
  EXPECT_DOUBLE_EQ(last.comm_s, 1.5 + 1.5 + 0.5);
  EXPECT_DOUBLE_EQ(last.exposed_s, 5.0 / 6 + 5.0 / 6);
  // A persistent block is held wherever it runs, past the budget too.
  in.block_persistent = {true, false, false};
  EXPECT_DOUBLE_EQ(predict_step_time(in).comm_s, 1.5 + 1.5 + 0.5);
  in.block_persistent = {true, false};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

TEST(StepTimeModel, StageThreeSkipsBackwardsThatReadNoParameters) {
  // Block 0's backward reads nothing (GPT-2's embedding).
  StepTimeInputs in = three_blocks(3);
  in.block_backward_reads_params = {false, true, true};
  in.prefetch_bytes = 1000.0;  // only the last block stays gathered from forward
  const StepTimePrediction p = predict_step_time(in);
  // Reductions 1.5 s; forward gathers 0.5 s a block; backward gathers block 1 only (block 2 stays
  // from forward; block 0's backward needs nothing).
  EXPECT_DOUBLE_EQ(p.comm_s, 1.5 + 1.5 + 0.5);
  in.block_backward_reads_params = {true, true};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

TEST(StepTimeModel, ABucketWaitsForTheReductionThatHeldItsBuffer) {
  // Stage 2, three buckets of 1/2 s each, all completed by the last block (2/3 s into backward).
  StepTimeInputs in = three_blocks(2);
  in.bucket_ready_block = {2, 2, 2};
  // One buffer per bucket: the reductions run 2/3-13/6 s while blocks 1 and 0 run to 2 s.
  const StepTimePrediction unbuffered = predict_step_time(in);
  EXPECT_DOUBLE_EQ(unbuffered.exposed_s, 1.0 / 6 + 5.0 / 6);
  // Two buffers: the third bucket waits for the first reduction (ending at 7/6 s) before backward
  // goes on, so blocks 1 and 0 end at 5/2 s.
  in.bucket_buffers = 2;
  const StepTimePrediction buffered = predict_step_time(in);
  EXPECT_DOUBLE_EQ(buffered.exposed_s, 0.5 + 5.0 / 6);
  EXPECT_DOUBLE_EQ(buffered.comm_s, unbuffered.comm_s);
  // The third bucket completed by block 1 instead: its buffer is free again (7/6 s) when block 1
  // ends (4/3 s), and it is reduced 5/3-13/6 s. But if its first piece comes from block 2, it
  // takes the buffer there and backward waits as above.
  in.bucket_ready_block = {2, 2, 1};
  EXPECT_DOUBLE_EQ(predict_step_time(in).exposed_s, 1.0 / 6 + 5.0 / 6);
  in.bucket_first_block = {2, 2, 2};
  EXPECT_DOUBLE_EQ(predict_step_time(in).exposed_s, 0.5 + 5.0 / 6);
  in.bucket_first_block = {2, 2, 3};
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

TEST(StepTimeModel, AStageThreeBackwardGathersWithinItsPrefetchBudgetBehindTheReductions) {
  StepTimeInputs in = three_blocks(3);
  // A budget of one block: entering block 2 issues block 1's gather (0-1/2 s); block 2's bucket
  // goes out at 2/3 s (2/3-7/6); entering block 1 issues block 0's gather, queued behind it
  // (7/6-5/3); block 0 waits for it, runs 5/3-7/3, and its bucket ends at 17/6 s: 5/6 s late
  // (with every block held from forward: 1/2 s, AStageThreeBackwardReadsTheBlocksHeldFromForward-
  // WithoutGathers).
  in.prefetch_bytes = 1000.0;
  const StepTimePrediction p = predict_step_time(in);
  EXPECT_DOUBLE_EQ(p.exposed_s, 5.0 / 6 + 5.0 / 6);
  // No prefetch: each gather issued when backward reaches its block, behind the bucket issued
  // before it: block 1's at 2/3 s (7/6-5/3), so block 1 runs 5/3-7/3 and its bucket 7/3-17/6;
  // block 0's gather 17/6-10/3, block 0 runs 10/3-4, its bucket ends at 9/2 s: 5/2 s late.
  in.prefetch_bytes = 0.0;
  EXPECT_DOUBLE_EQ(predict_step_time(in).exposed_s, 5.0 / 6 + 5.0 / 2);
  in.prefetch_bytes = -1.0;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

// zero_hpz_partition_size 2 on 2 hosts of 2 ranks: the rings of 4 ranks cross hosts at 1000 B/s
// (a reduction or a first gather of 1000 bytes: 3/4 s), the group's ring stays inside a host at
// 4000 B/s (1/2 · 1000 / 4000 = 1/8 s).
TEST(StepTimeModel, AStageThreeSecondaryPartitionRegathersWithinTheHostOnItsOwnLink) {
  StepTimeInputs in = three_blocks(3);
  in.prefetch_bytes = 1000.0;  // only the last block stays gathered from forward
  in.world_size = 4;
  in.link = {.latency_s = 0.0, .bytes_per_s = 1000.0, .ranks_per_host = 2, .intra_bytes_per_s = 4000.0};
  const StepTimePrediction plain = predict_step_time(in);
  // Forward: gathers end at 0.75, 1.5, 2.25 s; blocks run 0.75-13/12, 1.5-11/6, 2.25-31/12: 19/12 s
  // late. Backward: block 1's gather ends at 0.75 s, block 0's (issued when block 1 begins, behind
  // block 2's reduction) at 2.25 s; blocks 1 and 0 end at 17/12 and 35/12 s, the reductions at 1.5, 3
  // and 3.75 s: 1.75 s after 2 s.
  EXPECT_DOUBLE_EQ(plain.comm_s, 2.25 + 2.25 + 1.5);
  EXPECT_DOUBLE_EQ(plain.exposed_s, 1.75 + 19.0 / 12);
  in.hpz_group_size = 2;
  const StepTimePrediction grouped = predict_step_time(in);
  // Backward's gathers (blocks 1, 0) take 1/8 s each inside the host and keep ahead of backward,
  // which ends at 2 s; the reductions start as their buckets complete (2/3, 4/3, 2 s) and end at
  // 17/12, 13/6 and 35/12 s: 11/12 s after backward. Forward as before.
  EXPECT_DOUBLE_EQ(grouped.comm_s, 2.25 + 2.25 + 2 * 0.125);
  EXPECT_DOUBLE_EQ(grouped.exposed_s, 11.0 / 12 + 19.0 / 12);
  EXPECT_DOUBLE_EQ(grouped.step_s, 3.0 + 2.5);
  // 6 ranks, 3 per host, groups of 2: the group {2, 3} crosses hosts, so every regather is taken
  // at the link between hosts (1/2 · 1000 / 1000 s); reductions and first gathers take 5/6 s.
  StepTimeInputs odd = in;
  odd.world_size = 6;
  odd.link.ranks_per_host = 3;
  EXPECT_DOUBLE_EQ(predict_step_time(odd).comm_s, 3 * 5.0 / 6 + 3 * 5.0 / 6 + 2 * 0.5);
  in.hpz_group_size = 3;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

TEST(StepTimeModel, LatencyTermsPerCollectiveAndTheStatisticsAllReduce) {
  // Empty buckets on 4 ranks and no compute: only the latency terms, nothing hidden.
  for (int stage = 0; stage <= 2; ++stage) {
    StepTimeInputs in;
    in.stage = stage;
    in.world_size = 4;
    in.block_compute_share = {0.5, 0.5};
    in.bucket_comm_bytes = {0.0, 0.0};
    in.bucket_ready_block = {1, 0};
    if (stage > 0) in.block_gather_bytes = {0.0, 0.0};
    in.link = {.latency_s = 0.01, .bytes_per_s = 1e9};
    const StepTimePrediction p = predict_step_time(in);
    const double statistics = 2 * 3 * 0.01;
    const double expected = stage == 0 ? 2 * (2 * 3 * 0.01) + statistics : 2 * (3 * 0.01) + 2 * (3 * 0.01) + statistics;
    SCOPED_TRACE(stage);
    EXPECT_DOUBLE_EQ(p.comm_s, expected);
    EXPECT_DOUBLE_EQ(p.exposed_s, expected);
    EXPECT_DOUBLE_EQ(p.step_s, expected);
  }
}

// The last micro batch measures the gradient norm of the blocks a bucket completed when that
// bucket's buffer is taken for a later one, before the later one is issued. Stage 2, reduce-scatters
// of 0.5 s issued at the blocks' ends (2/3, 4/3 and 2 s), two buffers: the third bucket takes the
// first one's buffer at 2 s.
TEST(StepTimeModel, TheNormIsMeasuredWhenABucketsBufferIsTakenAgain) {
  StepTimeInputs in = three_blocks(2);
  in.bucket_buffers = 2;
  const StepTimePrediction before = predict_step_time(in);
  in.bucket_statistics_s = {0.2, 0.0, 0.0};
  const StepTimePrediction p = predict_step_time(in);
  EXPECT_NEAR(p.compute_s, before.compute_s + 0.2, 1e-12);
  // The link is idle at 2 s: measuring delays the last reduction (2.2 -> 2.7 s) and hides nothing.
  EXPECT_NEAR(p.exposed_s, before.exposed_s, 1e-12);
  // Reductions of 1 s keep the link busy until 8/3 s: the measuring fills the wait for it.
  in = three_blocks(2, 500.0);
  in.bucket_buffers = 2;
  const StepTimePrediction busy = predict_step_time(in);
  in.bucket_statistics_s = {0.2, 0.0, 0.0};
  EXPECT_NEAR(predict_step_time(in).exposed_s, busy.exposed_s - 0.2, 1e-12);
  // Only the last of two micro batches measures: the first backward's wait stays whole.
  in.micro_batches = 2;
  const double two = predict_step_time(in).exposed_s;
  in.bucket_statistics_s.clear();
  EXPECT_NEAR(two, predict_step_time(in).exposed_s - 0.2, 1e-12);
  in.bucket_statistics_s = {0.2, 0.0};  // not one per bucket
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

TEST(StepTimeModel, RejectsImpossibleInputs) {
  StepTimeInputs in = three_blocks(2);
  in.stage = 4;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_blocks(2);
  in.micro_batch_compute_s = -1.0;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_blocks(2);
  in.link.bytes_per_s = 0.0;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_blocks(2);
  in.link.latency_s = -1e-6;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_blocks(2);
  in.block_gather_bytes.pop_back();
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_blocks(2);
  in.bucket_ready_block.pop_back();
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_blocks(2);
  in.bucket_ready_block[0] = 3;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_blocks(2);
  in.block_compute_share[1] = -0.1;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_blocks(2);
  in.block_compute_share.clear();
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
}

// The report that completes a rows block sends what the spare bucket buffers take, at least an
// even share; the later reports share the rest evenly, at least one each.
TEST(StepTimeInputs, TheRowsBucketsFillTheSpareBuffersFirstThenSpreadEvenly) {
  using Spread = std::pair<std::size_t, std::size_t>;  // first, per_report
  auto spread = [](std::size_t deferred, std::size_t later, std::size_t spare) {
    const RowsBucketSpread s = rows_bucket_spread(deferred, later, spare);
    return Spread{s.first, s.per_report};
  };
  EXPECT_EQ(spread(6, 13, 3), Spread(3, 1));   // GPT-2 124M, 4 buffers
  EXPECT_EQ(spread(6, 13, 1), Spread(1, 1));   // two buffers: one spare
  EXPECT_EQ(spread(10, 3, 1), Spread(3, 3));   // the even share is more
  EXPECT_EQ(spread(10, 3, 5), Spread(5, 2));
  EXPECT_EQ(spread(2, 5, 3), Spread(2, 1));    // no more than there are
  EXPECT_EQ(spread(4, 0, 0), Spread(4, 1));    // no later report: all now
  EXPECT_EQ(spread(0, 4, 3).first, 0u);
}

TEST(StepTimeInputs, ATiedEmbeddingSentAsRowsIsCompleteAfterTheHead) {
  models::GPT2 model(models::GPT2Config::preset("tiny"));
  ZeroOptions options;
  options.stage = 2;
  options.reduce_bucket_size = 1000;
  options.embedding_gradient = EmbeddingGradient::rows;
  const LinkModel link{.latency_s = 0.0, .bytes_per_s = 1e6};
  const models::DeviceRates rates{.flops_per_s = 1e9, .bytes_per_s = 0.0};
  const StepTimeInputs in = step_time_inputs(model, options, 3, 2, 16, Device::cpu(), rates, link);
  const PartitionPlan plan = make_partition_plan(model, options, 3);
  const std::size_t head = model.num_blocks() - 1;
  // The embedding's own buckets as the reducer packs them: `first` with the head's report halfway
  // through its backward (its weight gradient comes first), `per_report` at its end, then
  // `per_report` at the end of each layer in backward order.
  std::vector<std::size_t> own;
  for (std::size_t bucket : plan.block(0).buckets)
    if (plan.bucket(bucket).pieces.size() == 1) own.push_back(bucket);
  ASSERT_GT(own.size(), 2u);
  ASSERT_GE(in.bucket_buffers, 2u);
  const std::size_t spare = std::min(in.bucket_buffers, plan.buckets().size()) - 1;
  const RowsBucketSpread spread = rows_bucket_spread(own.size(), head, spare);  // head's end, layers
  EXPECT_EQ(spread.first, std::min(own.size(), spare));  // what the spare buffers take, not one bucket
  for (std::size_t j = 0; j < own.size(); ++j) {
    // 0: halfway, 1: the head's end, ...
    const std::size_t report = std::min(j < spread.first ? 0 : 1 + (j - spread.first) / spread.per_report, head);
    EXPECT_EQ(in.bucket_ready_block[own[j]], report == 0 ? head : head + 1 - report) << j;
    EXPECT_EQ(in.bucket_ready_share[own[j]], report == 0 ? 0.5 : 1.0) << j;
  }
  EXPECT_EQ(in.bucket_ready_share[plan.block(head).buckets.front()], 1.0);
  EXPECT_EQ(in.rows_gather_bytes, static_cast<double>(lookup_rows_buffer_bytes(model, 0, options, 3, 2, 16)));
  EXPECT_EQ(in.rows_ready_block, 1u);
  options.embedding_gradient = EmbeddingGradient::dense;
  const StepTimeInputs dense = step_time_inputs(model, options, 3, 2, 16, Device::cpu(), rates, link);
  EXPECT_EQ(dense.bucket_ready_block.back(), 0u);
  EXPECT_EQ(dense.bucket_ready_share.back(), 1.0);  // block 0's own backward, the last, completes it
  EXPECT_EQ(dense.rows_gather_bytes, 0.0);
}

TEST(StepTimeInputs, BucketsComeFromTheEnginesPartitionPlan) {
  models::GPT2 model(models::GPT2Config::preset("tiny"));
  ZeroOptions options;
  options.reduce_bucket_size = 1000;
  options.compute_dtype = DType::f32;
  options.comm_dtype = DType::bf16;
  options.gradient_accumulation_steps = 3;
  const LinkModel link{.latency_s = 0.0, .bytes_per_s = 1e6};
  for (int stage = 0; stage <= 3; ++stage) {
    options.stage = stage;
    // A rate that makes one micro batch take 0.5 s, memory left out: the times are the FLOPs'.
    const models::DeviceRates rates{.flops_per_s = model.flops_per_step(2, 16) / 0.5, .bytes_per_s = 0.0};
    const StepTimeInputs in = step_time_inputs(model, options, 3, 2, 16, Device::cpu(), rates, link);
    EXPECT_NEAR(in.micro_batch_compute_s, 0.5, 1e-12);
    const PartitionPlan plan = make_partition_plan(model, options, 3);
    SCOPED_TRACE(stage);
    ASSERT_GT(plan.buckets().size(), 1u);
    EXPECT_EQ(in.bucket_comm_bytes.size(), plan.buckets().size());
    EXPECT_EQ(in.micro_batches, 3);
    EXPECT_EQ(in.world_size, 3);
    // Stage 0 all-reduces the unpadded gradients; stages 1-3 the blocks padded to 3 ranks.
    const double elements = stage == 0 ? static_cast<double>(model.param_count())
                                       : static_cast<double>(plan.padded_total_numel());
    EXPECT_EQ(std::accumulate(in.bucket_comm_bytes.begin(), in.bucket_comm_bytes.end(), 0.0), 2.0 * elements);
    EXPECT_EQ(std::accumulate(in.block_gather_bytes.begin(), in.block_gather_bytes.end(), 0.0),
              stage == 0 ? 0.0 : 4.0 * elements);
    // Shares follow the blocks' FLOPs: the embedding lookup has none, the blocks add up to one.
    ASSERT_EQ(in.block_compute_share.size(), model.num_blocks());
    EXPECT_EQ(in.block_compute_share[0], 0.0);
    EXPECT_NEAR(std::accumulate(in.block_compute_share.begin(), in.block_compute_share.end(), 0.0), 1.0, 1e-12);
    EXPECT_DOUBLE_EQ(in.block_compute_share[1] / in.block_compute_share[2], 1.0);  // two equal layers
    // The first bucket holds the LM head (complete after its own backward); the embedding's
    // buckets are complete only when the embedding's backward ends, after the head's use of it.
    ASSERT_EQ(in.bucket_ready_block.size(), plan.buckets().size());
    EXPECT_EQ(in.bucket_ready_block.front(), model.num_blocks() - 1);
    EXPECT_EQ(in.bucket_ready_block.back(), 0u);
    for (std::size_t k = 0; k < plan.buckets().size(); ++k)
      for (std::size_t b : plan.bucket(k).blocks()) EXPECT_LE(in.bucket_ready_block[k], b);
    // Stages 1-3 publish the embedding in the engine's pieces; stage 0 publishes nothing.
    if (stage > 0) {
      EXPECT_EQ(in.block_publish_pieces, publish_pieces(plan));
      EXPECT_GT(in.block_publish_pieces.at(0), 1u);
    } else {
      EXPECT_TRUE(in.block_publish_pieces.empty());
    }
  }
  // The gradient statistics read the fp32 shard once at the memory rate: the blocks of the buckets
  // that hold the buffers when backward ends (the embedding's) before the update, the others in
  // backward as their reductions land.
  options.stage = 2;
  const models::DeviceRates memory{.flops_per_s = 1e12, .bytes_per_s = 1e6};
  const PartitionPlan plan = make_partition_plan(model, options, 3);
  const StepTimeInputs in = step_time_inputs(model, options, 3, 2, 16, Device::cpu(), memory, link);
  const double in_backward = std::accumulate(in.bucket_statistics_s.begin(), in.bucket_statistics_s.end(), 0.0);
  EXPECT_NEAR(in.statistics_s + in_backward, static_cast<double>(plan.shard_numel()) * 4.0 / 1e6, 1e-12);
  ASSERT_GT(plan.buckets().size(), in.bucket_buffers + plan.block(0).buckets.size());
  std::set<std::size_t> late;
  for (std::size_t k = plan.buckets().size() - in.bucket_buffers; k < plan.buckets().size(); ++k)
    for (std::size_t b : plan.bucket(k).blocks()) late.insert(b);
  EXPECT_LT(late.size(), model.num_blocks());
  double late_numel = 0.0;
  for (std::size_t b : late) late_numel += static_cast<double>(plan.block(b).chunk_numel);
  EXPECT_NEAR(in.statistics_s, late_numel * 4.0 / 1e6, 1e-12);
  // Each other block is measured at its last bucket.
  for (std::size_t k = 0; k < plan.buckets().size(); ++k) {
    double landing = 0.0;
    for (std::size_t b = 0; b < model.num_blocks(); ++b)
      if (!late.count(b) && plan.block(b).buckets.back() == k) landing += static_cast<double>(plan.block(b).chunk_numel);
    EXPECT_NEAR(in.bucket_statistics_s[k], landing * 4.0 / 1e6, 1e-12) << "bucket " << k;
  }
}

}  // namespace
}  // namespace zt
