// TokenBatches with the prefetch a GPU run uses: the same micro batches in the same order and the
// same position() as without it, restore() dropping the batch read ahead, and a data error raised
// by the next() that hands out the batch it concerns, not before. peek() shows that batch early.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "core/error.h"
#include "models/activations.h"
#include "models/gpt2.h"
#include "runtime/data/shard_writer.h"
#include "runtime/train/batch_source.h"
#include "tests/runtime/data/temp_dir.h"

namespace zt {
namespace {

using data::testing::TempDir;

constexpr int B = 2, T = 8;

class BatchPrefetch : public ::testing::Test {
 protected:
  BatchPrefetch() { write_shards(); }
  void write_shards() const {
    for (std::size_t s = 0; s < 3; ++s) {
      std::vector<std::uint16_t> tokens(97 + 31 * s);
      for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>((s * 37 + i * 11) % 61);
      data::write_token_shard(dir / data::shard_file_name("train", s), tokens);
    }
  }
  data::TokenLoaderOptions options() const {
    return {(dir / "train_*.bin").string(), B, T, 0, 1, 7, 64, data::WindowOrder::shuffled};
  }
  // What a batch put into the activations: the input tokens and the targets, as the device holds them.
  std::vector<std::int32_t> loaded(models::Activations& acts) const {
    std::vector<std::int32_t> out(acts.input().as<std::int32_t>(), acts.input().as<std::int32_t>() + B * T);
    out.insert(out.end(), acts.targets().as<std::int32_t>(), acts.targets().as<std::int32_t>() + B * T);
    return out;
  }

  TempDir dir;
  models::GPT2 model{[] {
    models::GPT2Config c = models::GPT2Config::preset("tiny");
    c.vocab_size = c.padded_vocab_size = 64;
    return c;
  }()};
  models::Activations acts{model, B, T, Device::cpu(), DType::f32};
};

TEST_F(BatchPrefetch, SameBatchesAndPositionsAsReadingEachWhenAsked) {
  TokenBatches plain(options()), ahead(options(), /*prefetch=*/true);
  for (int step = 0; step < 40; ++step) {  // several epochs of 40 windows / 2
    SCOPED_TRACE(step);
    EXPECT_EQ(ahead.position(), plain.position());
    plain.next(acts);
    const std::vector<std::int32_t> expected = loaded(acts);
    const int valid = acts.valid_targets();
    ahead.next(acts);
    EXPECT_EQ(loaded(acts), expected);
    EXPECT_EQ(acts.valid_targets(), valid);
  }
  // A restore drops the batch read ahead: both continue from the saved position alike.
  const data::LoaderPosition saved = plain.position();
  plain.next(acts);
  ahead.next(acts);
  plain.restore(saved);
  ahead.restore(saved);
  EXPECT_EQ(ahead.position(), saved);
  for (int step = 0; step < 5; ++step) {
    plain.next(acts);
    const std::vector<std::int32_t> expected = loaded(acts);
    ahead.next(acts);
    EXPECT_EQ(loaded(acts), expected);
  }
}

// peek(): the batch the next next() hands out, read ahead where it was not yet (with or without
// the prefetch thread), without moving position(); restore() drops a peeked batch like a prefetched one.
TEST_F(BatchPrefetch, PeekShowsTheNextBatchWithoutTakingIt) {
  for (bool prefetch : {false, true}) {
    SCOPED_TRACE(prefetch ? "prefetch" : "no prefetch");
    TokenBatches plain(options()), peeking(options(), prefetch);
    for (int step = 0; step < 30; ++step) {
      SCOPED_TRACE(step);
      const data::LoaderPosition before = peeking.position();
      const models::TokenBatch* next = peeking.peek();
      ASSERT_NE(next, nullptr);
      EXPECT_EQ(peeking.position(), before);
      EXPECT_EQ(peeking.peek(), next) << "a second peek shows the same batch";
      plain.next(acts);
      const std::vector<std::int32_t> expected = loaded(acts);
      EXPECT_EQ(std::vector<std::int32_t>(expected.begin(), expected.begin() + B * T), next->tokens);
      peeking.next(acts);
      EXPECT_EQ(loaded(acts), expected);
      EXPECT_EQ(peeking.position(), plain.position());
    }
    const data::LoaderPosition saved = plain.position();
    plain.next(acts);
    const std::vector<std::int32_t> after_saved = loaded(acts);
    peeking.next(acts);
    peeking.peek();
    peeking.restore(saved);
    EXPECT_EQ(peeking.position(), saved);
    peeking.next(acts);
    EXPECT_EQ(loaded(acts), after_saved);
  }
}

// A peek whose read fails shows nothing, and the next() that would hand that batch out raises the error.
TEST_F(BatchPrefetch, APeekThatCannotReadShowsNothingAndNextRaises) {
  for (bool prefetch : {false, true}) {
    SCOPED_TRACE(prefetch ? "prefetch" : "no prefetch");
    write_shards();
    TokenBatches source(options(), prefetch);
    source.next(acts);
    for (std::size_t s = 0; s < 3; ++s) std::filesystem::resize_file(dir / data::shard_file_name("train", s), 1024 + 8);
    bool raised = false;
    for (int step = 0; step < 4 && !raised; ++step) {
      if (source.peek() != nullptr) {
        source.next(acts);
        continue;
      }
      EXPECT_THROW(source.next(acts), UserError);
      raised = true;
    }
    EXPECT_TRUE(raised);
  }
}

// The batch index the GPU's embedding backward reads: positions grouped by token, ascending.
TEST_F(BatchPrefetch, TheTokenIndexGroupsPositionsByToken) {
  models::TokenBatch batch{{5, 3, 5, 1, 3, 5}, {1, -1, 2, 3, 4, 5}, {}, {}, {}, 0};
  batch.build_index();
  EXPECT_EQ(batch.positions, (std::vector<std::int32_t>{3, 1, 4, 0, 2, 5}));
  EXPECT_EQ(batch.starts, (std::vector<std::int32_t>{0, 1, 3, 6}));
  EXPECT_EQ(batch.ids, (std::vector<std::int32_t>{1, 3, 5}));
  EXPECT_EQ(batch.valid_targets, 5);
}

// Shards cut short under the run: the error of a batch read ahead is raised by the next() that
// hands that batch out (here one of the next few), and one that is never handed out (dropped by a
// restore or the end of the run) raises nothing.
TEST_F(BatchPrefetch, ADataErrorIsRaisedWhenItsBatchIsHandedOut) {
  TokenBatches ahead(options(), /*prefetch=*/true);
  ahead.next(acts);
  for (std::size_t s = 0; s < 3; ++s) std::filesystem::resize_file(dir / data::shard_file_name("train", s), 1024 + 8);
  bool raised = false;
  for (int step = 0; step < 4 && !raised; ++step) {
    try {
      ahead.next(acts);
    } catch (const UserError&) {
      raised = true;
    }
  }
  EXPECT_TRUE(raised);
}

TEST_F(BatchPrefetch, ABatchNeverHandedOutRaisesNothing) {
  auto ahead = std::make_unique<TokenBatches>(options(), /*prefetch=*/true);
  const data::LoaderPosition start = ahead->position();
  ahead->next(acts);
  for (std::size_t s = 0; s < 3; ++s) std::filesystem::resize_file(dir / data::shard_file_name("train", s), 1024 + 8);
  EXPECT_NO_THROW(ahead->restore(start));  // drops the batch read ahead, whatever its read met
  EXPECT_EQ(ahead->position(), start);
  write_shards();  // whole again, for a run that ends with a batch read ahead
  auto last = std::make_unique<TokenBatches>(options(), /*prefetch=*/true);
  last->next(acts);
  for (std::size_t s = 0; s < 3; ++s) std::filesystem::resize_file(dir / data::shard_file_name("train", s), 1024 + 8);
  EXPECT_NO_THROW(last.reset());  // the end of the run drops it too
}

}  // namespace
}  // namespace zt
