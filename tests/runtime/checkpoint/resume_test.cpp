// Resuming from a checkpoint (run by CTest under mpirun with 3 ranks): bitwise the same losses as
// an uninterrupted run on the same ranks and stage, and a continuing loss on another world size
// and stage. The 2-rank runs use ranks 0 and 1; rank 2 joins the 3-rank resume.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/make_communicator.h"
#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "tests/runtime/checkpoint/checkpoint_test_support.h"

namespace zt {
namespace {

using namespace testing_support;

class ResumeTest : public testing::Test {
 protected:
  void SetUp() override {
    world_ = make_communicator(CommOptions{}, Device::cpu());
    ASSERT_EQ(world_->world_size(), 3) << "this test runs on 3 ranks";
    pair_ = world_->split(world_->rank() < 2 ? 0 : 1, 0, "pair");
    solo_ = world_->split(world_->rank(), 0, "solo");
    root_ = shared_temp_dir("zt-resume-test");
  }
  void TearDown() override {
    world_->barrier(world_->comm_stream()).wait();
    if (world_->rank() == 0) std::filesystem::remove_all(root_);
  }
  bool in_pair() const { return world_->rank() < 2; }

  std::unique_ptr<Communicator> world_, pair_, solo_;
  std::filesystem::path root_;
};

void load(TinyJob& job, const std::filesystem::path& dir) {
  checkpoint::CheckpointReader reader(dir);
  reader.check_blocks_match(*job.model);
  job.engine->load_state(reader, reader.manifest().optimizer_steps, reader.manifest().loss_scaler);
}

TEST_F(ResumeTest, SaveAtStep5AndResumeGivesBitwiseTheSameLossesOnEveryStage) {
  if (!in_pair()) return;
  for (int stage = 0; stage <= 3; ++stage) {
    SCOPED_TRACE("stage " + std::to_string(stage));
    std::vector<double> uninterrupted;
    std::vector<float> final_params;
    {
      TinyJob job(*pair_, stage);
      job.engine->init_parameters(7);
      for (int s = 1; s <= 10; ++s) uninterrupted.push_back(job.step(s));
      final_params = job.engine->gather_full_params_f32();
      ASSERT_LT(uninterrupted.back(), uninterrupted.front()) << "the run does not learn";
    }
    const std::filesystem::path root = root_ / ("stage" + std::to_string(stage));
    {
      TinyJob job(*pair_, stage);
      job.engine->init_parameters(7);
      for (int s = 1; s <= 5; ++s) job.step(s);
      job.save(root, 5);
    }  // the first job ends here, as a killed process would
    TinyJob resumed(*pair_, stage);  // no init_parameters: everything comes from the checkpoint
    load(resumed, root / checkpoint::checkpoint_dir_name(5));
    for (int s = 6; s <= 10; ++s) EXPECT_EQ(resumed.step(s), uninterrupted[s - 1]) << "step " << s;
    EXPECT_EQ(resumed.engine->gather_full_params_f32(), final_params);
    EXPECT_EQ(resumed.engine->optimizer_steps(), 10);
  }
}

// The same checkpoint machinery with a Llama (grouped-query attention, QK-norm, untied head):
// bitwise resume on the same ranks and stage, then resharded onto 3 ranks at stage 3 and 1 rank
// at stage 0.
TEST_F(ResumeTest, LlamaResumesBitwiseAndReshardsAcrossWorldSizesAndStages) {
  std::vector<double> uninterrupted(11, 0.0);
  const std::filesystem::path root = root_ / "llama";
  if (in_pair()) {
    TinyJob job(*pair_, 3, TinyModel::llama);
    job.engine->init_parameters(7);
    for (int s = 1; s <= 10; ++s) uninterrupted[s] = job.step(s);
    EXPECT_LT(uninterrupted[10], uninterrupted[1]) << "the run does not learn";
  }
  if (in_pair()) {
    TinyJob job(*pair_, 3, TinyModel::llama);
    job.engine->init_parameters(7);
    for (int s = 1; s <= 5; ++s) job.step(s);
    job.save(root, 5);
  }
  MPI_Bcast(uninterrupted.data(), static_cast<int>(uninterrupted.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const std::filesystem::path dir = root / checkpoint::checkpoint_dir_name(5);
  if (in_pair()) {
    TinyJob resumed(*pair_, 3, TinyModel::llama);
    load(resumed, dir);
    for (int s = 6; s <= 10; ++s) EXPECT_EQ(resumed.step(s), uninterrupted[s]) << "step " << s;
  }
  {
    TinyJob job(*world_, 3, TinyModel::llama);
    load(job, dir);
    EXPECT_NEAR(job.step(6), uninterrupted[6], 1e-4 * std::abs(uninterrupted[6])) << "3 ranks, stage 3";
  }
  if (world_->rank() == 0) {
    TinyJob job(*solo_, 0, TinyModel::llama);
    load(job, dir);
    EXPECT_NEAR(job.step(6), uninterrupted[6], 1e-4 * std::abs(uninterrupted[6])) << "1 rank, stage 0";
  }
}

TEST_F(ResumeTest, DynamicLossScalerStateIsRestored) {
  if (!in_pair()) return;
  ZeroOptions options = options_for_stage(2);
  options.loss_scaling = true;
  options.loss_scaler.initial_scale_power = 4;
  options.loss_scaler.loss_scale_window = 2;  // the scale doubles every 2 steps: state to restore
  std::vector<StepStats> uninterrupted;
  {
    TinyJob job(*pair_, options);
    job.engine->init_parameters(7);
    for (int s = 1; s <= 8; ++s) uninterrupted.push_back(job.step_stats(s));
  }
  {
    TinyJob job(*pair_, options);
    job.engine->init_parameters(7);
    for (int s = 1; s <= 5; ++s) job.step(s);
    job.save(root_ / "scaler", 5);
  }
  TinyJob resumed(*pair_, options);
  load(resumed, root_ / "scaler" / checkpoint::checkpoint_dir_name(5));
  for (int s = 6; s <= 8; ++s) {
    StepStats stats = resumed.step_stats(s);
    EXPECT_EQ(stats.loss_scale, uninterrupted[s - 1].loss_scale) << "step " << s;
    EXPECT_EQ(stats.loss, uninterrupted[s - 1].loss) << "step " << s;
  }
  EXPECT_GT(uninterrupted.back().loss_scale, uninterrupted.front().loss_scale);
}

TEST_F(ResumeTest, TwoRankStage2CheckpointResumesOnThreeRanksStage3AndOneRankStage0) {
  std::vector<double> reference(7, 0.0);
  const std::filesystem::path root = root_ / "across";
  if (in_pair()) {
    TinyJob job(*pair_, 2);
    job.engine->init_parameters(7);
    for (int s = 1; s <= 6; ++s) reference[s] = job.step(s);
  }
  if (in_pair()) {
    TinyJob job(*pair_, 2);
    job.engine->init_parameters(7);
    for (int s = 1; s <= 5; ++s) job.step(s);
    job.save(root, 5);
  }
  // Everyone learns the reference loss of step 6 (the 2-rank run's ranks hold it).
  MPI_Bcast(reference.data(), static_cast<int>(reference.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const std::filesystem::path dir = root / checkpoint::checkpoint_dir_name(5);
  {
    TinyJob job(*world_, 3);
    load(job, dir);
    const double loss = job.step(6);
    EXPECT_NEAR(loss, reference[6], 1e-4 * std::abs(reference[6])) << "3 ranks, stage 3";
    EXPECT_LT(loss, reference[1] - 0.1) << "the trained state did not arrive";
  }
  if (world_->rank() == 0) {
    TinyJob job(*solo_, 0);
    load(job, dir);
    const double loss = job.step(6);
    EXPECT_NEAR(loss, reference[6], 1e-4 * std::abs(reference[6])) << "1 rank, stage 0";
  }
}

}  // namespace
}  // namespace zt
