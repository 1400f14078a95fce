// TokenLoader: windows and targets, rank slices of the global batch, determinism, epochs,
// save/restore (also across world sizes), validation order, and errors.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "runtime/data/shard_writer.h"
#include "runtime/data/token_loader.h"
#include "tests/runtime/data/temp_dir.h"

namespace zt::data {
namespace {

using testing::TempDir;

constexpr int T = 4;

struct Batch {
  std::vector<std::int32_t> inputs, targets;  // (B, T) each
  bool operator==(const Batch&) const = default;
};

Batch next_batch(TokenLoader& loader) {
  const auto size = static_cast<std::size_t>(loader.options().batch_size * loader.options().seq_len);
  Batch batch{std::vector<std::int32_t>(size), std::vector<std::int32_t>(size)};
  loader.next(batch.inputs, batch.targets);
  return batch;
}

// The first input token of each row: it names the window (see LoaderTest's shards).
std::vector<std::int32_t> window_starts(const Batch& batch) {
  std::vector<std::int32_t> starts;
  for (std::size_t i = 0; i < batch.inputs.size(); i += T) starts.push_back(batch.inputs[i]);
  return starts;
}

// Rows of ranks 0..N-1, in rank order: the global batch as one rank-0 loader would see it.
Batch concatenate(const std::vector<Batch>& per_rank) {
  Batch global;
  for (const Batch& part : per_rank) {
    global.inputs.insert(global.inputs.end(), part.inputs.begin(), part.inputs.end());
    global.targets.insert(global.targets.end(), part.targets.begin(), part.targets.end());
  }
  return global;
}

class LoaderTest : public ::testing::Test {
 protected:
  // Shard s holds tokens s*1000 + i, so a token tells where it came from. With T = 4:
  // 41 tokens -> 10 windows, 29 -> 7, 3 -> 0 (too short), 53 -> 13: W = 30 windows.
  LoaderTest() {
    const std::vector<std::size_t> sizes = {41, 29, 3, 53};
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      std::vector<std::uint16_t> tokens(sizes[s]);
      for (std::size_t i = 0; i < sizes[s]; ++i) tokens[i] = static_cast<std::uint16_t>(s * 1000 + i);
      write_token_shard(dir / shard_file_name("train", s), tokens);
    }
  }

  TokenLoader make(int batch_size, int rank = 0, int world_size = 1, std::uint64_t seed = 1234,
                   WindowOrder order = WindowOrder::shuffled) const {
    return TokenLoader({.shard_pattern = (dir / "train_*.bin").string(),
                        .batch_size = batch_size,
                        .seq_len = T,
                        .rank = rank,
                        .world_size = world_size,
                        .seed = seed,
                        .vocab_size = 65536,
                        .order = order});
  }

  // The next `steps` global batches of a world of `world_size` ranks splitting global batch size 6.
  std::vector<Batch> global_batches(int world_size, int steps, LoaderPosition from = {}) const {
    std::vector<TokenLoader> ranks;
    for (int r = 0; r < world_size; ++r) {
      ranks.push_back(make(6 / world_size, r, world_size));
      ranks.back().restore(from);
    }
    std::vector<Batch> batches;
    for (int step = 0; step < steps; ++step) {
      std::vector<Batch> parts;
      for (auto& rank : ranks) parts.push_back(next_batch(rank));
      batches.push_back(concatenate(parts));
    }
    return batches;
  }

  TempDir dir;
};

TEST_F(LoaderTest, RowsAreWindowsOfTPlusOneTokensWithNextTokenTargets) {
  TokenLoader loader = make(6);
  EXPECT_EQ(loader.windows_per_epoch(), 30u);
  EXPECT_EQ(loader.batches_per_epoch(), 5u);
  EXPECT_EQ(loader.total_tokens(), 41u + 29u + 3u + 53u);
  EXPECT_EQ(loader.shard_count(), 4u);
  const std::vector<std::size_t> sizes = {41, 29, 3, 53};
  for (int step = 0; step < 5; ++step) {
    const Batch batch = next_batch(loader);
    for (std::size_t row = 0; row < 6; ++row) {
      const std::int32_t first = batch.inputs[row * T];
      const std::int32_t shard = first / 1000, offset = first % 1000;
      EXPECT_EQ(offset % T, 0) << "windows start at multiples of T";
      EXPECT_LT(static_cast<std::size_t>(offset + T), sizes[shard]) << "the last target is inside the shard";
      for (int t = 0; t < T; ++t) {
        EXPECT_EQ(batch.inputs[row * T + t], first + t);
        EXPECT_EQ(batch.targets[row * T + t], first + t + 1);
      }
    }
  }
}

TEST_F(LoaderTest, RankSlicesPartitionTheGlobalBatch) {
  const auto single = global_batches(1, 12);  // 12 steps: more than two epochs of 5 batches
  EXPECT_EQ(global_batches(2, 12), single);
  EXPECT_EQ(global_batches(3, 12), single);
  // Within a global batch no two rows (of any ranks) are the same window.
  for (const Batch& batch : single) {
    const auto starts = window_starts(batch);
    EXPECT_EQ(std::set<std::int32_t>(starts.begin(), starts.end()).size(), starts.size());
  }
}

TEST_F(LoaderTest, DeterministicFromTheSeed) {
  TokenLoader a = make(6, 0, 1, 7), b = make(6, 0, 1, 7), c = make(6, 0, 1, 8);
  bool differs_from_other_seed = false;
  for (int step = 0; step < 10; ++step) {
    const Batch batch = next_batch(a);
    EXPECT_EQ(next_batch(b), batch);
    differs_from_other_seed = differs_from_other_seed || next_batch(c) != batch;
  }
  EXPECT_TRUE(differs_from_other_seed);
}

TEST_F(LoaderTest, EachEpochVisitsEveryWindowOnceInANewOrder) {
  TokenLoader loader = make(6);
  std::vector<std::vector<std::int32_t>> epochs(3);
  for (auto& epoch : epochs) {
    for (int step = 0; step < 5; ++step) {
      const auto starts = window_starts(next_batch(loader));
      epoch.insert(epoch.end(), starts.begin(), starts.end());
    }
    std::vector<std::int32_t> sorted = epoch;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "a window repeats within an epoch";
    EXPECT_EQ(sorted.size(), 30u);
  }
  EXPECT_EQ(loader.position(), (LoaderPosition{.epoch = 2, .window = 30}));
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[1], epochs[2]);
}

TEST_F(LoaderTest, WindowsLeftOverAtTheEndOfAnEpochAreSkipped) {
  TokenLoader loader = make(7);  // 30 windows: 4 batches of 7, 2 left over
  EXPECT_EQ(loader.batches_per_epoch(), 4u);
  for (int step = 0; step < 4; ++step) next_batch(loader);
  EXPECT_EQ(loader.position(), (LoaderPosition{.epoch = 0, .window = 28}));
  next_batch(loader);
  EXPECT_EQ(loader.position(), (LoaderPosition{.epoch = 1, .window = 7}));
}

TEST_F(LoaderTest, RestoredPositionGivesTheSameFollowingBatches) {
  TokenLoader original = make(3, 1, 2);
  for (int step = 0; step < 7; ++step) next_batch(original);
  // Through JSON, as a checkpoint stores it.
  const nlohmann::json saved = loader_position_to_json(original.position());
  EXPECT_EQ(saved, (nlohmann::json{{"epoch", 1}, {"window", 12}}));
  TokenLoader resumed = make(3, 1, 2);
  resumed.restore(loader_position_from_json(saved, "checkpoint.json"));
  for (int step = 0; step < 8; ++step) EXPECT_EQ(next_batch(resumed), next_batch(original)) << "step " << step;
}

TEST_F(LoaderTest, ResumingWithAnotherWorldSizeContinuesTheSameStream) {
  const auto reference = global_batches(1, 9);
  // Two ranks run 4 steps, then three ranks resume from where they stood.
  TokenLoader rank0 = make(3, 0, 2);
  for (int step = 0; step < 4; ++step) next_batch(rank0);
  const auto resumed = global_batches(3, 5, rank0.position());
  EXPECT_EQ(resumed, std::vector<Batch>(reference.begin() + 4, reference.end()));
}

TEST_F(LoaderTest, ValidationReadsWindowsInFileOrderEveryPass) {
  TokenLoader loader = make(4, 0, 1, 99, WindowOrder::sequential);
  EXPECT_EQ(loader.batches_per_epoch(), 7u);  // 30 windows / 4
  EXPECT_EQ(window_starts(next_batch(loader)), (std::vector<std::int32_t>{0, 4, 8, 12}));
  EXPECT_EQ(window_starts(next_batch(loader)), (std::vector<std::int32_t>{16, 20, 24, 28}));
  // Across the boundary of shard 0 (10 windows) into shard 1; the 3-token shard 2 has none.
  EXPECT_EQ(window_starts(next_batch(loader)), (std::vector<std::int32_t>{32, 36, 1000, 1004}));
  for (int step = 3; step < 7; ++step) next_batch(loader);
  loader.rewind();
  EXPECT_EQ(window_starts(next_batch(loader)), (std::vector<std::int32_t>{0, 4, 8, 12}));
  // Rank 1 of 2 takes the second half of each global batch of 4.
  TokenLoader rank1 = make(2, 1, 2, 99, WindowOrder::sequential);
  EXPECT_EQ(window_starts(next_batch(rank1)), (std::vector<std::int32_t>{8, 12}));
}

TEST_F(LoaderTest, DatasetSmallerThanOneGlobalBatch) {
  const std::string pattern = (dir / "train_*.bin").string();
  EXPECT_USER_ERROR(make(16, 0, 2), pattern, "too little data for one global batch", "126 tokens", "30 windows",
                    "needs 32 windows (2 ranks x batch size 16)", "at least 129 tokens");
}

TEST_F(LoaderTest, TokenNotBelowTheModelsVocabulary) {
  TokenLoaderOptions options = make(1).options();
  options.vocab_size = 1025;
  EXPECT_USER_ERROR(TokenLoader{options}, "train_000001.bin", "token 1025", "index 25", "byte offset 1074",
                    "vocabulary size 1025");
}

TEST_F(LoaderTest, NoShardFilesAndBadPositions) {
  TokenLoaderOptions options = make(1).options();
  options.shard_pattern = (dir / "val_*.bin").string();
  EXPECT_USER_ERROR(TokenLoader{options}, "val_*.bin", "no token shard files match");
  TokenLoader loader = make(2);
  EXPECT_USER_ERROR(loader.restore({.epoch = 3, .window = 31}), "position 31", "30 windows");
  EXPECT_USER_ERROR(loader_position_from_json(nlohmann::json{{"epoch", 1}}, "ckpt/state.json"), "ckpt/state.json",
                    "\"window\"");
  std::vector<std::int32_t> wrong(3);
  EXPECT_THROW(loader.next(wrong, wrong), std::invalid_argument);
}

// A shard changed under a running loader: every read goes through pread into the loader's own
// buffer and is checked, so each case is one clear error naming the file and the byte offset
// (no SIGBUS, no read past the end, no token >= vocab_size reaching the model).
class ChangedShardTest : public ::testing::Test {
 protected:
  ChangedShardTest() {
    std::vector<std::uint16_t> tokens(4001);
    for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i % 200);
    write_token_shard(file(), tokens);
  }
  std::filesystem::path file() const { return dir_ / "train_000000.bin"; }
  TokenLoader loader() const {
    return TokenLoader({file().string(), 4, 8, 0, 1, 3, 256, WindowOrder::shuffled});
  }
  TempDir dir_;
};

TEST_F(ChangedShardTest, TruncatedAfterStartUpIsAClearErrorNotSigbus) {
  TokenLoader l = loader();
  next_batch(l);
  std::filesystem::resize_file(file(), 1024 + 2 * 100);  // most windows now lie beyond the end
  EXPECT_USER_ERROR(for (int i = 0; i < 200; ++i) next_batch(l), "train_000000.bin", "the file ends at byte",
                    "byte offset", "truncated or rewritten");
}

TEST_F(ChangedShardTest, RewrittenInPlaceWithTokensBeyondTheVocabularyIsCaught) {
  TokenLoader l = loader();
  next_batch(l);
  {
    // Same size, same inode: every token becomes 0xffff (>= 256).
    std::fstream f(file(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1024);
    const std::string ones(2 * 4001, '\xff');
    f.write(ones.data(), static_cast<std::streamsize>(ones.size()));
  }
  EXPECT_USER_ERROR(next_batch(l), "train_000000.bin", "token 65535", "byte offset", "vocabulary size 256");
}

TEST_F(ChangedShardTest, ReplacedByAnotherFileIsNamed) {
  TokenLoader l = loader();
  std::vector<std::uint16_t> other(50, 1);
  write_token_shard(dir_ / "other.bin", other);
  std::filesystem::rename(dir_ / "other.bin", file());
  EXPECT_USER_ERROR(next_batch(l), "train_000000.bin", "changed while training read it", "another file");
}

TEST(TokenLoaderErrors, AFifoMatchingTheGlobIsRefusedWithoutBlocking) {
  const TempDir dir;
  write_token_shard(dir / "train_000000.bin", std::vector<std::uint16_t>(100, 1));
  ASSERT_EQ(::mkfifo((dir / "train_000001.bin").c_str(), 0600), 0);
  EXPECT_USER_ERROR(TokenLoader({(dir / "train_*.bin").string(), 1, 4, 0, 1, 3, 256, WindowOrder::shuffled}),
                    "train_000001.bin", "not a regular file");
}

std::size_t open_descriptors() {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                                std::filesystem::directory_iterator{}));
}

// More shards than the kernel's default vm.max_map_count (65530) allows mappings: shards are read
// with pread through at most one open descriptor, so the count is bounded by disk only.
TEST(TokenLoaderScale, SeventyThousandShardsNeedNeitherAMappingNorADescriptorEach) {
  const TempDir dir;
  const std::vector<std::uint16_t> tokens = {1, 2, 3};
  for (int s = 0; s < 70'000; ++s) write_token_shard(dir / fmt::format("train_{:06}.bin", s), tokens);
  const std::size_t before = open_descriptors();
  TokenLoader loader({(dir / "train_*.bin").string(), 8, 2, 0, 1, 3, 256, WindowOrder::shuffled});
  EXPECT_EQ(loader.shard_count(), 70'000u);
  std::vector<std::int32_t> inputs(16), targets(16);
  for (int i = 0; i < 100; ++i) loader.next(inputs, targets);
  EXPECT_LE(open_descriptors(), before + 1);
  EXPECT_EQ(inputs[0], 1);
  EXPECT_EQ(targets[1], 3);
}

}  // namespace
}  // namespace zt::data
