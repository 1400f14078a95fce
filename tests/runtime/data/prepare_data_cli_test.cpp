// `zerotrain prepare-data`, run in-process through zt::cli::run_cli.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "runtime/cli/cli.h"
#include "runtime/data/shard_reader.h"
#include "tests/runtime/data/temp_dir.h"

namespace zt::data {
namespace {

using testing::TempDir;

struct CliResult {
  int status;
  std::string out, err;
};

CliResult run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = cli::run_cli(args, out, err);
  return {status, out.str(), err.str()};
}

TEST(PrepareDataCli, WritesShardsAndReportsTheSplits) {
  const TempDir dir;
  const auto text = dir.write("fortunes", "one\n%\ntwo\n%\nthree\n%\nfour\n%\n");
  const CliResult result = run({"prepare-data", "--input", text.string(), "--output", (dir / "out").string(),
                                "--val-fraction", "0.5", "--shard-tokens", "8"});
  ASSERT_EQ(result.status, cli::kExitSuccess) << result.err;
  EXPECT_NE(result.out.find("train 2 documents, 10 tokens, 2 shard file(s)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("val   2 documents, 9 tokens, 2 shard file(s)"), std::string::npos) << result.out;
  EXPECT_EQ(TokenShard(dir / "out" / "train_000001.bin").size(), 2u);
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "dataset.json"));
}

TEST(PrepareDataCli, MistakesAreReportedWithTheirExitStatus) {
  const TempDir dir;
  const CliResult no_input = run({"prepare-data", "--output", (dir / "out").string()});
  EXPECT_EQ(no_input.status, cli::kExitUsage);
  EXPECT_NE(no_input.err.find("'--input'"), std::string::npos) << no_input.err;

  const CliResult missing = run({"prepare-data", "--input", (dir / "absent.txt").string(), "--output", "x"});
  EXPECT_EQ(missing.status, cli::kExitFailure);
  EXPECT_NE(missing.err.find("absent.txt: no such input text file"), std::string::npos) << missing.err;

  const auto text = dir.write("t.txt", "text\n");
  const CliResult no_vocab = run({"prepare-data", "--input", text.string(), "--output", "x", "--tokenizer", "gpt2"});
  EXPECT_EQ(no_vocab.status, cli::kExitFailure);
  EXPECT_NE(no_vocab.err.find("vocab.json and merges.txt"), std::string::npos) << no_vocab.err;
}

TEST(PrepareDataCli, WritesLlama3ShardsWithTheSameTokens) {
  const TempDir dir;
  const auto text = dir.write("fortunes", "one\n%\ntwo\n%\nthree\n%\nfour\n%\n");
  for (const char* format : {"gpt2", "llama3"}) {
    const CliResult result = run({"prepare-data", "--input", text.string(), "--output", (dir / format).string(),
                                  "--val-fraction", "0.5", "--shard-format", format});
    ASSERT_EQ(result.status, cli::kExitSuccess) << result.err;
  }
  TokenShard narrow(dir / "gpt2" / "train_000000.bin"), wide(dir / "llama3" / "train_000000.bin");
  EXPECT_EQ(narrow.format(), ShardFormat::gpt2);
  EXPECT_EQ(wide.format(), ShardFormat::llama3);
  EXPECT_EQ(wide.tokens(), narrow.tokens());
  EXPECT_EQ(std::filesystem::file_size(dir / "llama3" / "train_000000.bin"), 1024 + 4 * wide.size());

  const CliResult bad = run({"prepare-data", "--input", text.string(), "--output", (dir / "x").string(),
                             "--shard-format", "llama2"});
  EXPECT_EQ(bad.status, cli::kExitFailure);
  EXPECT_NE(bad.err.find("unknown shard format 'llama2' (known: gpt2 = uint16 tokens, llama3 = uint32 tokens)"),
            std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace zt::data
