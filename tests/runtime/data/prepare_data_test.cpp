// Text -> train/val shards + dataset.json.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "runtime/data/byte_tokenizer.h"
#include "runtime/data/gpt2_tokenizer.h"
#include "runtime/data/prepare_data.h"
#include "runtime/data/shard_reader.h"
#include "tests/runtime/data/temp_dir.h"

namespace zt::data {
namespace {

using testing::TempDir;

std::vector<std::uint16_t> tokens_of(const std::vector<std::filesystem::path>& shards) {
  std::vector<std::uint16_t> all;
  for (const auto& path : shards) {
    TokenShard shard(path);
    const std::vector<std::uint32_t> read = shard.tokens();
    all.insert(all.end(), read.begin(), read.end());
  }
  return all;
}

// EOT + document, for each document, with the byte tokenizer.
std::vector<std::uint16_t> byte_stream(const std::vector<std::string>& documents) {
  std::vector<std::uint16_t> stream;
  for (const auto& document : documents) {
    stream.push_back(ByteTokenizer::kEndOfText);
    stream.insert(stream.end(), document.begin(), document.end());
  }
  return stream;
}

nlohmann::json read_json(const std::filesystem::path& path) { return nlohmann::json::parse(std::ifstream(path)); }

class PrepareDataTest : public ::testing::Test {
 protected:
  PrepareDataTest() {
    // 8 documents: 4 fortunes, then 4 paragraphs. With val_fraction 0.25, documents 3 and 7
    // (0-based) go to validation: floor((i+1)/4) > floor(i/4) exactly for i = 3, 7.
    dir.write("fortunes", "f0 zero\n%\nf1 one\n%\nf2 two two\n%\nf3 three\n%\n");
    dir.write("book.txt", "p4 four\nstill four\n\np5 five\n\n\np6 six\n\np7 seven.\n");
    options.inputs = {dir / "fortunes", dir / "book.txt"};
    options.output_dir = dir / "out";
    options.val_fraction = 0.25;
    options.shard_tokens = 16;
  }
  TempDir dir;
  PrepareDataOptions options;
  ByteTokenizer tokenizer;
};

TEST_F(PrepareDataTest, SplitsDocumentsIntoTrainAndValShards) {
  const PreparedDataset dataset = prepare_data(options, tokenizer);
  const std::vector<std::string> train_documents = {"f0 zero", "f1 one", "f2 two two", "p4 four\nstill four", "p5 five",
                                                    "p6 six"};
  const std::vector<std::string> val_documents = {"f3 three", "p7 seven."};
  const auto train = byte_stream(train_documents), val = byte_stream(val_documents);

  EXPECT_EQ(dataset.train.documents, 6u);
  EXPECT_EQ(dataset.val.documents, 2u);
  EXPECT_EQ(dataset.train.tokens, train.size());
  EXPECT_EQ(dataset.val.tokens, val.size());
  EXPECT_EQ(tokens_of(dataset.train.shards), train);
  EXPECT_EQ(tokens_of(dataset.val.shards), val);
  // 60 train tokens in shards of 16: 4 files (the last 12); 19 val tokens: 2 files.
  ASSERT_EQ(train.size(), 60u);
  ASSERT_EQ(dataset.train.shards.size(), 4u);
  EXPECT_EQ(dataset.train.shards[0], options.output_dir / "train_000000.bin");
  EXPECT_EQ(TokenShard(dataset.train.shards[3]).size(), 12u);
  ASSERT_EQ(dataset.val.shards.size(), 2u);
  EXPECT_EQ(dataset.val.shards[1], options.output_dir / "val_000001.bin");

  const auto summary = read_json(options.output_dir / "dataset.json");
  EXPECT_EQ(summary["tokenizer"], "byte");
  EXPECT_EQ(summary["vocab_size"], 256);
  EXPECT_EQ(summary["end_of_text"], 0);
  EXPECT_EQ(summary["train"]["tokens"], 60);
  EXPECT_EQ(summary["train"]["documents"], 6);
  EXPECT_EQ(summary["val"]["tokens"], 19);
  EXPECT_EQ(summary["val"]["shards"], (nlohmann::json{"val_000000.bin", "val_000001.bin"}));
  EXPECT_EQ(summary["inputs"][0]["document_rule"], "fortune");
  EXPECT_EQ(summary["inputs"][1]["document_rule"], "paragraph");
}

TEST_F(PrepareDataTest, RunningAgainReplacesEarlierShards) {
  prepare_data(options, tokenizer);
  options.shard_tokens = 1000;
  const PreparedDataset dataset = prepare_data(options, tokenizer);
  EXPECT_EQ(dataset.train.shards.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(options.output_dir / "train_000001.bin"));
  EXPECT_FALSE(std::filesystem::exists(options.output_dir / "val_000001.bin"));
}

TEST_F(PrepareDataTest, NoValidationSplitWithFractionZero) {
  options.val_fraction = 0;
  const PreparedDataset dataset = prepare_data(options, tokenizer);
  EXPECT_EQ(dataset.train.documents, 8u);
  EXPECT_TRUE(dataset.val.shards.empty());
}

TEST_F(PrepareDataTest, Gpt2DocumentsStartWithEndOfText) {
  const std::filesystem::path fixtures = ZT_DATA_FIXTURES;
  Gpt2Tokenizer gpt2(fixtures / "tiny_vocab.json", fixtures / "tiny_merges.txt");
  options.inputs = {dir.write("two", "the world\n%\nthe\n%\n")};
  options.val_fraction = 0;
  const PreparedDataset dataset = prepare_data(options, gpt2);
  EXPECT_EQ(dataset.vocab_size, 268);
  // <|endoftext|> "the" " world" | <|endoftext|> "the"
  EXPECT_EQ(tokens_of(dataset.train.shards), (std::vector<std::uint16_t>{267, 83, 257, 265, 75, 67, 267, 83, 257}));
  EXPECT_EQ(read_json(options.output_dir / "dataset.json")["tokenizer"], "gpt2");
}

TEST_F(PrepareDataTest, Errors) {
  options.inputs = {dir / "absent.txt"};
  EXPECT_USER_ERROR(prepare_data(options, tokenizer), "absent.txt", "no such input text file");
  // Something that is there but is not a text file is named as what it is, not as missing.
  std::filesystem::create_directories(dir / "a_dir");
  options.inputs = {dir / "a_dir"};
  EXPECT_USER_ERROR(prepare_data(options, tokenizer), "is a directory, not a text file");
  options.inputs = {"/dev/null"};
  EXPECT_USER_ERROR(prepare_data(options, tokenizer), "/dev/null: is a character device, not a text file");
  options.inputs = {dir.write("nul.txt", std::string("ok\n\nbad\0byte\n", 13))};
  EXPECT_USER_ERROR(prepare_data(options, tokenizer), "nul.txt", "document 2", "NUL byte");
  options.inputs = {dir.write("blank.txt", "\n \n")};
  EXPECT_USER_ERROR(prepare_data(options, tokenizer), "hold no documents");
  options.inputs = {dir.write("one.txt", "just one\n")};
  options.val_fraction = 0.5;
  EXPECT_USER_ERROR(prepare_data(options, tokenizer), "selects none", "--val-fraction 0");
  options.val_fraction = 1.0;
  EXPECT_USER_ERROR(prepare_data(options, tokenizer), "validation fraction must be in [0, 1)");
}

}  // namespace
}  // namespace zt::data
