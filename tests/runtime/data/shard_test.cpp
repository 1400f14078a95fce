// Token shard files: the llm.c layout byte by byte, round trips, and every format error.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/error.h"
#include "runtime/data/shard_files.h"
#include "runtime/data/shard_format.h"
#include "runtime/data/shard_reader.h"
#include "runtime/data/shard_writer.h"
#include "runtime/data/token_loader.h"
#include "tests/runtime/data/temp_dir.h"

namespace zt::data {
namespace {

using testing::TempDir;

std::vector<unsigned char> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A file whose header ints are `header` (the rest zero) followed by `payload_bytes` bytes.
std::filesystem::path write_raw_shard(const TempDir& dir, std::string_view name, std::vector<std::int32_t> header,
                                      std::size_t payload_bytes) {
  header.resize(kShardHeaderInts, 0);
  std::string bytes(reinterpret_cast<const char*>(header.data()), kShardHeaderBytes);
  bytes.append(payload_bytes, '\0');
  return dir.write(name, bytes);
}

TEST(Shard, HeaderLayoutIsLlmcByteByByte) {
  const TempDir dir;
  const std::vector<std::uint16_t> tokens = {1, 0x0203, 65535};
  write_token_shard(dir / "s.bin", tokens);
  const auto bytes = read_bytes(dir / "s.bin");
  ASSERT_EQ(bytes.size(), 1024u + 6u);
  // 20240520 = 0x0134D888, little-endian
  EXPECT_EQ((std::vector<unsigned char>(bytes.begin(), bytes.begin() + 12)),
            (std::vector<unsigned char>{0x88, 0xD8, 0x34, 0x01, 1, 0, 0, 0, 3, 0, 0, 0}));
  for (std::size_t i = 12; i < 1024; ++i) ASSERT_EQ(bytes[i], 0) << "header byte " << i;
  EXPECT_EQ((std::vector<unsigned char>(bytes.begin() + 1024, bytes.end())),
            (std::vector<unsigned char>{0x01, 0x00, 0x03, 0x02, 0xFF, 0xFF}));
}

TEST(Shard, RoundTrip) {
  const TempDir dir;
  std::vector<std::uint16_t> tokens(5000);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i * 7919);
  write_token_shard(dir / "s.bin", tokens);
  TokenShard shard(dir / "s.bin");
  EXPECT_EQ(shard.size(), tokens.size());
  const std::vector<std::uint32_t> read = shard.tokens();
  EXPECT_EQ(std::vector<std::uint16_t>(read.begin(), read.end()), tokens);
}

TEST(Shard, EmptyShardRoundTrips) {
  const TempDir dir;
  write_token_shard(dir / "s.bin", {});
  EXPECT_EQ(TokenShard(dir / "s.bin").size(), 0u);
}

TEST(Shard, SequenceWriterRollsOverAtTheShardSize) {
  const TempDir dir;
  ShardSequenceWriter writer(dir.path(), "train", 4);
  const std::vector<std::uint16_t> first = {1, 2, 3}, second = {4, 5, 6, 7, 8, 9, 10};
  writer.append(first);
  writer.append(second);
  writer.finish();
  ASSERT_EQ(writer.files().size(), 3u);
  EXPECT_EQ(writer.files()[0].filename(), "train_000000.bin");
  EXPECT_EQ(writer.files()[2].filename(), "train_000002.bin");
  EXPECT_EQ(writer.tokens_written(), 10u);
  std::vector<std::uint16_t> all;
  std::vector<std::size_t> sizes;
  for (const auto& file : writer.files()) {
    TokenShard shard(file);
    sizes.push_back(shard.size());
    const std::vector<std::uint32_t> read = shard.tokens();
    all.insert(all.end(), read.begin(), read.end());
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{4, 4, 2}));
  EXPECT_EQ(all, (std::vector<std::uint16_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST(ShardErrors, MissingFile) {
  const TempDir dir;
  EXPECT_USER_ERROR(TokenShard(dir / "absent.bin"), "absent.bin", "cannot open");
}

TEST(ShardErrors, PatternMatchesNothing) {
  const TempDir dir;
  const std::string pattern = (dir / "train_*.bin").string();
  EXPECT_USER_ERROR(expand_shard_pattern(pattern), pattern, "no token shard files match");
  EXPECT_USER_ERROR(expand_shard_pattern((dir / "one.bin").string()), "one.bin", "no such token shard file");
}

TEST(ShardErrors, PatternExpandsSorted) {
  const TempDir dir;
  for (const char* name : {"train_000002.bin", "train_000000.bin", "train_000001.bin", "val_000000.bin"}) {
    write_token_shard(dir / name, {});
  }
  const auto files = expand_shard_pattern((dir / "train_*.bin").string());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].filename(), "train_000000.bin");
  EXPECT_EQ(files[2].filename(), "train_000002.bin");
}

TEST(ShardErrors, TruncatedHeader) {
  const TempDir dir;
  dir.write("short.bin", std::string(100, '\0'));
  EXPECT_USER_ERROR(TokenShard(dir / "short.bin"), "short.bin", "truncated header", "1024-byte header", "100 bytes");
}

TEST(ShardErrors, TruncatedPayloadSaysExpectedAndFoundBytes) {
  const TempDir dir;
  write_raw_shard(dir, "cut.bin", {kShardMagic, kShardVersion, 10}, 10);  // 5 of 10 tokens
  EXPECT_USER_ERROR(TokenShard(dir / "cut.bin"), "cut.bin", "truncated token payload", "10 tokens",
                    "expected 1044 bytes", "found 1034 bytes");
}

TEST(ShardErrors, TrailingBytes) {
  const TempDir dir;
  write_raw_shard(dir, "long.bin", {kShardMagic, kShardVersion, 2}, 7);
  EXPECT_USER_ERROR(TokenShard(dir / "long.bin"), "long.bin", "3 trailing bytes", "expected 1028 bytes",
                    "found 1031 bytes");
}

TEST(ShardErrors, WrongMagicSaysFoundAndExpected) {
  const TempDir dir;
  write_raw_shard(dir, "magic.bin", {12345, kShardVersion, 0}, 0);
  EXPECT_USER_ERROR(TokenShard(dir / "magic.bin"), "magic.bin", "magic number 12345",
                    "the known formats are 20240520 (llm.c GPT-2: version 1, uint16 tokens), "
                    "20240801 (llm.c Llama 3: version 7, uint32 tokens)");
}

TEST(ShardErrors, UnsupportedVersion) {
  const TempDir dir;
  write_raw_shard(dir, "v2.bin", {kShardMagic, 2, 0}, 0);
  EXPECT_USER_ERROR(TokenShard(dir / "v2.bin"), "v2.bin", "unsupported token shard version 2", "expected 1");
}

TEST(Shard, Llama3LayoutIsLlmcByteByByteAndRoundTrips) {
  const TempDir dir;
  // Ids above 65535 need the uint32 format (Llama 3's vocabulary has 128,256 tokens).
  const std::vector<std::uint16_t> small = {1, 0x0203, 65535};
  write_token_shard(dir / "s.bin", small, ShardFormat::llama3);
  const auto bytes = read_bytes(dir / "s.bin");
  ASSERT_EQ(bytes.size(), 1024u + 12u);
  // 20240801 = 0x0134D9A1, version 7, little-endian
  EXPECT_EQ((std::vector<unsigned char>(bytes.begin(), bytes.begin() + 12)),
            (std::vector<unsigned char>{0xA1, 0xD9, 0x34, 0x01, 7, 0, 0, 0, 3, 0, 0, 0}));
  EXPECT_EQ((std::vector<unsigned char>(bytes.begin() + 1024, bytes.end())),
            (std::vector<unsigned char>{1, 0, 0, 0, 3, 2, 0, 0, 0xFF, 0xFF, 0, 0}));
  TokenShard shard(dir / "s.bin");
  EXPECT_EQ(shard.format(), ShardFormat::llama3);
  EXPECT_EQ(shard.tokens(), (std::vector<std::uint32_t>{1, 0x0203, 65535}));
}

TEST(Shard, Llama3ReadsIdsAbove65535) {
  const TempDir dir;
  // Written as llm.c's dev/data scripts write it: header, then uint32 ids.
  std::vector<std::int32_t> header(kShardHeaderInts, 0);
  header[0] = 20240801, header[1] = 7, header[2] = 3;
  std::string bytes(reinterpret_cast<const char*>(header.data()), kShardHeaderBytes);
  const std::uint32_t ids[] = {128000, 70000, 5};
  bytes.append(reinterpret_cast<const char*>(ids), sizeof ids);
  dir.write("l3.bin", bytes);
  TokenShard shard(dir / "l3.bin");
  EXPECT_EQ(shard.tokens(), (std::vector<std::uint32_t>{128000, 70000, 5}));
  EXPECT_NO_THROW(shard.check_tokens_below(128256));
  EXPECT_USER_ERROR(shard.check_tokens_below(100000), "l3.bin", "token 128000", "index 0", "byte offset 1024",
                    "vocabulary size 100000");
}

TEST(Shard, Llama3ShardsFeedTheLoaderIdsAbove65535) {
  const TempDir dir;
  std::vector<std::int32_t> header(kShardHeaderInts, 0);
  header[0] = 20240801, header[1] = 7, header[2] = 9;
  std::string bytes(reinterpret_cast<const char*>(header.data()), kShardHeaderBytes);
  std::vector<std::uint32_t> ids(9);
  for (std::uint32_t i = 0; i < 9; ++i) ids[i] = 100000 + 1000 * i;
  bytes.append(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(std::uint32_t));
  dir.write("train_000.bin", bytes);
  TokenLoader loader({(dir / "train_*.bin").string(), 2, 4, 0, 1, 0, 128256, WindowOrder::sequential});
  std::vector<std::int32_t> inputs(8), targets(8);
  loader.next(inputs, targets);
  EXPECT_EQ(inputs, (std::vector<std::int32_t>{100000, 101000, 102000, 103000, 104000, 105000, 106000, 107000}));
  EXPECT_EQ(targets, (std::vector<std::int32_t>{101000, 102000, 103000, 104000, 105000, 106000, 107000, 108000}));
}

TEST(ShardErrors, Llama3MagicWithGpt2Version) {
  const TempDir dir;
  write_raw_shard(dir, "mixed.bin", {20240801, 1, 0}, 0);
  EXPECT_USER_ERROR(TokenShard(dir / "mixed.bin"), "mixed.bin", "unsupported token shard version 1 for magic 20240801",
                    "expected 7 (uint32 tokens)");
}

TEST(ShardErrors, TokenNotBelowVocabularyNamesFileOffsetTokenAndVocab) {
  const TempDir dir;
  write_token_shard(dir / "big.bin", std::vector<std::uint16_t>{5, 255, 256, 7});
  TokenShard shard(dir / "big.bin");
  EXPECT_NO_THROW(shard.check_tokens_below(257));
  EXPECT_USER_ERROR(shard.check_tokens_below(256), "big.bin", "token 256", "index 2", "byte offset 1028",
                    "vocabulary size 256");
}

}  // namespace
}  // namespace zt::data
