// The α–β step-time model of `zerotrain plan --predict` against values computed by hand from the
// formulas in zero/step_time_model.h.
#include "zero/step_time_model.h"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

#include "models/gpt2.h"
#include "zero/memory_plan.h"

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

// Three buckets of 1000 bytes, 2 ranks, 1000 B/s, no latency, T_micro = 3 s (forward 1, backward 2).
StepTimeInputs three_buckets(int stage, double bytes_per_s = 1000.0) {
  StepTimeInputs in;
  in.stage = stage;
  in.world_size = 2;
  in.micro_batch_compute_s = 3.0;
  in.bucket_comm_bytes = {1000.0, 1000.0, 1000.0};
  if (stage > 0) in.bucket_compute_bytes = {1000.0, 1000.0, 1000.0};
  in.link = {.latency_s = 0.0, .bytes_per_s = bytes_per_s};
  return in;
}

TEST(StepTimeModel, OneRankIsComputeOnly) {
  for (int stage = 0; stage <= 3; ++stage) {
    StepTimeInputs in = three_buckets(stage);
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

TEST(StepTimeModel, StageZeroHidesAllButTheLastBucketWhenBackwardIsLonger) {
  // All-reduces of 1 s each (2·(1/2)·1000/1000): the first two (2 s) fit in backward (2 s).
  const StepTimePrediction p = predict_step_time(three_buckets(0));
  EXPECT_DOUBLE_EQ(p.compute_s, 3.0);
  EXPECT_DOUBLE_EQ(p.comm_s, 3.0);
  EXPECT_DOUBLE_EQ(p.exposed_s, 1.0);
  EXPECT_DOUBLE_EQ(p.step_s, 4.0);
  EXPECT_DOUBLE_EQ(p.step_without_overlap_s, 6.0);
}

TEST(StepTimeModel, StageZeroExposesWhatBackwardCannotCover) {
  // At 500 B/s each all-reduce takes 2 s: 4 s before the last bucket against 2 s of backward.
  const StepTimePrediction p = predict_step_time(three_buckets(0, 500.0));
  EXPECT_DOUBLE_EQ(p.comm_s, 6.0);
  EXPECT_DOUBLE_EQ(p.exposed_s, (4.0 - 2.0) + 2.0);
  EXPECT_DOUBLE_EQ(p.step_s, 7.0);
  EXPECT_DOUBLE_EQ(p.step_without_overlap_s, 9.0);
}

TEST(StepTimeModel, StagesOneAndTwoAddTheParameterGathersBehindTheNextForward) {
  for (int stage : {1, 2}) {
    // Reduce-scatters and all-gathers of 0.5 s each: the last reduction and the first gather exposed.
    const StepTimePrediction p = predict_step_time(three_buckets(stage));
    EXPECT_DOUBLE_EQ(p.comm_s, 1.5 + 1.5);
    EXPECT_DOUBLE_EQ(p.exposed_s, 0.5 + 0.5);
    EXPECT_DOUBLE_EQ(p.step_s, 4.0);
    EXPECT_DOUBLE_EQ(p.step_without_overlap_s, 6.0);
  }
  // Parameters twice as large as the gradient buckets (bf16 gradients, fp32 parameters): gathers
  // of 1 s; after the first one, 2 s of gathers against 1 s of forward.
  StepTimeInputs in = three_buckets(2);
  in.bucket_compute_bytes = {2000.0, 2000.0, 2000.0};
  const StepTimePrediction p = predict_step_time(in);
  EXPECT_DOUBLE_EQ(p.comm_s, 1.5 + 3.0);
  EXPECT_DOUBLE_EQ(p.exposed_s, 0.5 + 1.0 + (2.0 - 1.0));
}

TEST(StepTimeModel, StageThreeGathersInEveryForwardAndBackward) {
  StepTimeInputs in = three_buckets(3);
  in.micro_batches = 2;
  const StepTimePrediction p = predict_step_time(in);
  EXPECT_DOUBLE_EQ(p.compute_s, 6.0);
  EXPECT_DOUBLE_EQ(p.comm_s, 1.5 + 2 * 2 * 1.5);
  // Per forward 0.5 (the first gather); the accumulating backward hides its 1.5 s of gathers in
  // 2 s; the last backward has 1.5 + 1.5 - 0.5 = 2.5 s of link work before the last bucket.
  EXPECT_DOUBLE_EQ(p.exposed_s, 2 * 0.5 + 0.0 + (2.5 - 2.0) + 0.5);
  EXPECT_DOUBLE_EQ(p.step_s, 8.0);
  EXPECT_DOUBLE_EQ(p.step_without_overlap_s, 13.5);
}

TEST(StepTimeModel, LatencyTermsPerCollectiveAndTheStatisticsAllReduce) {
  // Empty buckets on 4 ranks and no compute: only the latency terms, nothing hidden.
  for (int stage = 0; stage <= 2; ++stage) {
    StepTimeInputs in;
    in.stage = stage;
    in.world_size = 4;
    in.bucket_comm_bytes = {0.0, 0.0};
    if (stage > 0) in.bucket_compute_bytes = {0.0, 0.0};
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

TEST(StepTimeModel, RejectsImpossibleInputs) {
  StepTimeInputs in = three_buckets(2);
  in.stage = 4;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_buckets(2);
  in.micro_batch_compute_s = -1.0;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_buckets(2);
  in.link.bytes_per_s = 0.0;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_buckets(2);
  in.link.latency_s = -1e-6;
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
  in = three_buckets(2);
  in.bucket_compute_bytes.pop_back();
  EXPECT_THROW(predict_step_time(in), std::invalid_argument);
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
    const StepTimeInputs in = step_time_inputs(model, options, 3, 0.5, link);
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
    EXPECT_EQ(std::accumulate(in.bucket_compute_bytes.begin(), in.bucket_compute_bytes.end(), 0.0),
              stage == 0 ? 0.0 : 4.0 * elements);
  }
}

}  // namespace
}  // namespace zt
