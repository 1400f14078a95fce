// The checkpoint files (run by CTest under mpirun with 2 ranks): an interrupted write never
// damages the previous checkpoint, keep_last pruning, every refused bad checkpoint with its
// message, and the safetensors export against the engine's own gathered weights.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "comm/make_communicator.h"
#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/safetensors_export.h"
#include "core/error.h"
#include "tests/runtime/checkpoint/checkpoint_test_support.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using namespace testing_support;

struct InjectedCrash : std::runtime_error {
  InjectedCrash() : std::runtime_error("injected crash") {}
};

class CheckpointFilesTest : public testing::Test {
 protected:
  void SetUp() override {
    world_ = make_communicator(CommOptions{}, Device::cpu());
    root_ = shared_temp_dir("zt-checkpoint-files-test");
  }
  void TearDown() override {
    world_->barrier(world_->comm_stream()).wait();
    if (world_->rank() == 0) fs::remove_all(root_);
  }
  // Trains `kind` 3 steps on every rank, saves, and on rank 0 exports and compares.
  void expect_export_equals_gathered_weights(TinyModel kind);
  std::unique_ptr<Communicator> world_;
  fs::path root_;
};

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no UserError)";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

TEST_F(CheckpointFilesTest, CrashWhileWritingLeavesThePreviousCheckpointLoadableAndIsCleanedUp) {
  TinyJob job(*world_, 1);
  job.engine->init_parameters(7);
  for (int s = 1; s <= 2; ++s) job.step(s);
  job.save(root_, 2);
  const std::vector<float> at_step_2 = job.engine->gather_full_params_f32();
  job.step(3);
  // Every writing rank "dies" after its shard files are on disk, before the manifest.
  EXPECT_THROW(job.save(root_, 3, 0, [] { throw InjectedCrash(); }), InjectedCrash);
  world_->barrier(world_->comm_stream()).wait();

  EXPECT_TRUE(fs::exists(root_ / "step_00000003.tmp"));
  EXPECT_EQ(checkpoint::complete_checkpoints(root_), std::vector<fs::path>{root_ / "step_00000002"});
  EXPECT_EQ(checkpoint::newest_complete_checkpoint(root_), root_ / "step_00000002");
  EXPECT_THAT(message_of([&] { checkpoint::CheckpointReader(root_ / "step_00000003.tmp"); }),
              testing::HasSubstr("no COMPLETE marker"));

  TinyJob resumed(*world_, 1);
  checkpoint::CheckpointReader reader(root_ / "step_00000002");
  resumed.engine->load_state(reader, reader.manifest().optimizer_steps, reader.manifest().loss_scaler);
  EXPECT_EQ(resumed.engine->gather_full_params_f32(), at_step_2);

  world_->barrier(world_->comm_stream()).wait();
  if (world_->rank() == 0) {
    EXPECT_EQ(checkpoint::remove_partial_checkpoints(root_), std::vector<fs::path>{root_ / "step_00000003.tmp"});
    EXPECT_FALSE(fs::exists(root_ / "step_00000003.tmp"));
    EXPECT_TRUE(fs::exists(root_ / "step_00000002" / "COMPLETE"));
  }
}

TEST_F(CheckpointFilesTest, KeepLastPrunesOlderCompleteCheckpoints) {
  TinyJob job(*world_, 2);
  job.engine->init_parameters(7);
  for (int s = 1; s <= 4; ++s) {
    job.step(s);
    job.save(root_, s, 2);
  }
  EXPECT_EQ(checkpoint::complete_checkpoints(root_),
            (std::vector<fs::path>{root_ / "step_00000003", root_ / "step_00000004"}));
}

// Pruning follows this run's save order, never step numbers, and never touches another run.
TEST_F(CheckpointFilesTest, KeepLastPrunesByThisRunsSaveOrderOnly) {
  TinyJob job(*world_, 2);
  job.engine->init_parameters(7);
  job.step(1);
  job.save(root_, 10, 0, {}, "run_a", 1);
  job.save(root_, 20, 0, {}, "run_a", 2);
  job.save(root_, 5, 1, {}, "run_b", 1);  // another run, keep_last 1: run a's checkpoints stay
  EXPECT_EQ(checkpoint::complete_checkpoints(root_),
            (std::vector<fs::path>{root_ / "step_00000005", root_ / "step_00000010", root_ / "step_00000020"}));
  job.save(root_, 15, 1, {}, "run_a", 3);  // run a resumed from 10: its save of 15 is its newest
  EXPECT_EQ(checkpoint::complete_checkpoints(root_),
            (std::vector<fs::path>{root_ / "step_00000005", root_ / "step_00000015"}));
  const std::vector<checkpoint::SavedCheckpoint> saved = checkpoint::saved_checkpoints(root_);
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved[0].run_id, "run_a");
  EXPECT_EQ(saved[0].save_index, 3);
  EXPECT_EQ(saved[1].run_id, "run_b");
}

TEST_F(CheckpointFilesTest, ManifestNamingAFileOutsideTheCheckpointIsRefused) {
  TinyJob job(*world_, 2);
  job.engine->init_parameters(7);
  job.save(root_, 1);
  world_->barrier(world_->comm_stream()).wait();
  if (world_->rank() != 0) return;
  const fs::path manifest = root_ / "step_00000001" / "manifest.json";
  std::ifstream in(manifest);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::string name : {"../../outside.f32", "/etc/passwd", "rank_00000.master.f32.x"}) {
    std::string evil = text;
    evil.replace(evil.find("\"rank_00000.master.f32\""), 23, "\"" + name + "\"");
    write_text(manifest, evil);
    EXPECT_THAT(message_of([&] { checkpoint::CheckpointReader(root_ / "step_00000001"); }),
                testing::HasSubstr("is not a file this checkpoint format has"))
        << name;
  }
  write_text(manifest, text);
}

TEST_F(CheckpointFilesTest, ExportHoldsExactlyTheEnginesGatheredWeights) {
  for (TinyModel kind : {TinyModel::gpt2, TinyModel::llama}) {
    SCOPED_TRACE(kind == TinyModel::llama ? "llama" : "gpt2");
    expect_export_equals_gathered_weights(kind);
  }
}

void CheckpointFilesTest::expect_export_equals_gathered_weights(TinyModel kind) {
  const fs::path root = root_ / (kind == TinyModel::llama ? "llama" : "gpt2");
  TinyJob job(*world_, 3, kind);
  job.engine->init_parameters(7);
  for (int s = 1; s <= 3; ++s) job.step(s);
  job.save(root, 3);
  const std::vector<float> want = job.engine->gather_full_params_f32();
  if (world_->rank() != 0) return;

  checkpoint::CheckpointReader reader(root / "step_00000003");
  const fs::path file = root / "model.safetensors";
  checkpoint::ExportResult result = checkpoint::export_safetensors(reader, *job.model, file);

  const std::string bytes = read_text(file);
  ASSERT_EQ(bytes.size(), result.bytes);
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  EXPECT_EQ(header_size % 8, 0u);
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_size));
  const char* data = bytes.data() + 8 + header_size;
  EXPECT_EQ(header["__metadata__"]["step"], "3");
  EXPECT_EQ(header["__metadata__"]["format"], "zerotrain");

  // Tensors in block order, each block's in layout order, are the gathered weights in order.
  std::size_t next = 0, tensors = 0;
  for (std::size_t b = 0; b < job.model->num_blocks(); ++b) {
    for (const models::ParamTensor& t : job.model->block(b).layout().tensors()) {
      const std::string name = job.model->block(b).name() + "." + t.name;
      ASSERT_TRUE(header.contains(name)) << name;
      const nlohmann::json& entry = header[name];
      EXPECT_EQ(entry["dtype"], "F32");
      EXPECT_EQ(entry["shape"].get<std::vector<std::size_t>>(), t.shape) << name;
      const auto begin = entry["data_offsets"][0].get<std::size_t>(), end = entry["data_offsets"][1].get<std::size_t>();
      ASSERT_EQ(end - begin, t.numel * sizeof(float)) << name;
      std::vector<float> values(t.numel);
      std::memcpy(values.data(), data + begin, end - begin);
      EXPECT_EQ(values, std::vector<float>(want.begin() + static_cast<std::ptrdiff_t>(next),
                                           want.begin() + static_cast<std::ptrdiff_t>(next + t.numel)))
          << name;
      next += t.numel;
      ++tensors;
    }
  }
  EXPECT_EQ(next, want.size());
  EXPECT_EQ(tensors, result.tensors);
  EXPECT_EQ(header.size(), tensors + 1);
  if (kind == TinyModel::llama) {  // transformers' names under zerotrain's block names
    EXPECT_TRUE(header.contains("layers.1.self_attn.k_norm.weight"));
    EXPECT_TRUE(header.contains("head.lm_head.weight"));
    EXPECT_EQ(header["__metadata__"]["model"], "llama");
  }
}

// Each case damages a fresh copy of one good checkpoint and expects a message naming the problem.
TEST_F(CheckpointFilesTest, BadCheckpointsAreRefusedWithAMessageNamingFileAndReason) {
  TinyJob job(*world_, 1);
  job.engine->init_parameters(7);
  job.step(1);
  job.save(root_, 1);
  if (world_->rank() != 0) return;
  const fs::path good = root_ / "step_00000001";
  int copies = 0;
  auto damaged = [&](const std::function<void(const fs::path&)>& damage) {
    const fs::path copy = root_ / ("bad" + std::to_string(copies++));
    fs::copy(good, copy);
    damage(copy);
    return copy;
  };
  auto open_and_read_all = [](const fs::path& dir) {
    checkpoint::CheckpointReader reader(dir);
    reader.verify_all_files();
  };

  fs::path dir = damaged([](const fs::path& d) { fs::remove(d / "rank_00001.exp_avg.f32"); });
  EXPECT_THAT(message_of([&] { open_and_read_all(dir); }),
              testing::AllOf(testing::HasSubstr("missing shard file"), testing::HasSubstr("rank_00001.exp_avg.f32")));

  dir = damaged([](const fs::path& d) {
    std::fstream f(d / "rank_00000.master.f32", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
  });
  EXPECT_THAT(message_of([&] { open_and_read_all(dir); }),
              testing::AllOf(testing::HasSubstr("rank_00000.master.f32 is corrupt"), testing::HasSubstr("CRC32 expected"),
                             testing::HasSubstr("found")));

  dir = damaged([](const fs::path& d) { fs::resize_file(d / "rank_00001.master.f32", 1000); });
  EXPECT_THAT(message_of([&] { open_and_read_all(dir); }),
              testing::AllOf(testing::HasSubstr("rank_00001.master.f32 is truncated"), testing::HasSubstr("found 1000")));

  dir = damaged([](const fs::path& d) { fs::remove(d / "COMPLETE"); });
  EXPECT_THAT(message_of([&] { open_and_read_all(dir); }),
              testing::AllOf(testing::HasSubstr(dir.string()), testing::HasSubstr("no COMPLETE marker")));

  dir = damaged([](const fs::path& d) {
    nlohmann::json manifest = nlohmann::json::parse(read_text(d / "manifest.json"));
    manifest["format_version"] = 99;
    write_text(d / "manifest.json", manifest.dump());
  });
  EXPECT_THAT(message_of([&] { open_and_read_all(dir); }),
              testing::AllOf(testing::HasSubstr("manifest.json"), testing::HasSubstr("unsupported checkpoint format version 99")));

  dir = damaged([](const fs::path& d) {
    nlohmann::json manifest = nlohmann::json::parse(read_text(d / "manifest.json"));
    manifest.erase("loss_scaler");
    write_text(d / "manifest.json", manifest.dump());
  });
  EXPECT_THAT(message_of([&] { open_and_read_all(dir); }),
              testing::AllOf(testing::HasSubstr("not a valid checkpoint manifest"), testing::HasSubstr("loss_scaler")));

  // A config whose model differs names the key and both values.
  Config other = tiny_config();
  other.model.n_layer = 4;
  EXPECT_THAT(message_of([&] { checkpoint::CheckpointReader(good).check_model_matches(other.model); }),
              testing::HasSubstr("model.n_layer is 2 in the checkpoint, 4 in the config"));
  EXPECT_NO_THROW(checkpoint::CheckpointReader(good).check_model_matches(tiny_config().model));
}

}  // namespace
}  // namespace zt
