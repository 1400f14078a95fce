// GPT-2 BPE on the tiny hand-made vocabulary in fixtures/ (see fixtures/README.md for its ids).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/data/gpt2_tokenizer.h"
#include "tests/runtime/data/temp_dir.h"

namespace zt::data {
namespace {

using testing::TempDir;

const std::filesystem::path kFixtures = ZT_DATA_FIXTURES;

// Byte ids in GPT-2's order: '!'..'~' are 0..93, so a letter's id is its ASCII code minus 33.
constexpr std::uint16_t id(char c) { return static_cast<std::uint16_t>(c - 33); }
constexpr std::uint16_t kSpace = 220, kNewline = 198;
constexpr std::uint16_t kGt = 256, kHe = 257, kGthe = 258, kIn = 259, kGa = 260, kLl = 262, kGw = 263,
                        kGwor = 265, k12 = 266, kEndOfText = 267;

class Gpt2TokenizerTest : public ::testing::Test {
 protected:
  std::vector<std::uint16_t> encode(std::string_view text) {
    std::vector<std::uint16_t> tokens;
    tokenizer.encode(text, tokens);
    return tokens;
  }
  Gpt2Tokenizer tokenizer{kFixtures / "tiny_vocab.json", kFixtures / "tiny_merges.txt"};
};

TEST_F(Gpt2TokenizerTest, VocabularyAndEndOfText) {
  EXPECT_EQ(tokenizer.name(), "gpt2");
  EXPECT_EQ(tokenizer.vocab_size(), 268);
  EXPECT_EQ(tokenizer.end_of_text(), kEndOfText);
}

TEST_F(Gpt2TokenizerTest, LowestRankMergesFirst) {
  // "the": t h e -> t he ("t he" is no merge).  " weather": "h e" (rank 1) before "Ġ w" (rank 7);
  // once "he" exists, "e r" (rank 5) no longer applies.
  EXPECT_EQ(encode("the weather"), (std::vector<std::uint16_t>{id('t'), kHe, kGw, id('e'), id('a'), id('t'), kHe, id('r')}));
  // " the": Ġ t h e -> Ġt h e -> Ġt he -> Ġthe.  " world": Ġw o r l d -> Ġw or l d -> Ġwor l d.
  EXPECT_EQ(encode(" the world"), (std::vector<std::uint16_t>{kGthe, kGwor, id('l'), id('d')}));
}

TEST_F(Gpt2TokenizerTest, ContractionsNumbersRepeatedPairsAndNewlines) {
  // Pieces "I", "'ll", " tell", " 123", " inin", "\n"; " inin" merges both "i n" pairs at once.
  EXPECT_EQ(encode("I'll tell 123 inin\n"),
            (std::vector<std::uint16_t>{id('I'), id('\''), kLl, kGt, id('e'), kLl, kSpace, k12, id('3'), kSpace, kIn,
                                        kIn, kNewline}));
  EXPECT_EQ(encode("aaa a"), (std::vector<std::uint16_t>{id('a'), id('a'), id('a'), kGa}));
}

TEST_F(Gpt2TokenizerTest, EncodingTheSameWordTwiceGivesTheSameIds) {  // through the word cache
  EXPECT_EQ(encode(" the the the"), (std::vector<std::uint16_t>{kGthe, kGthe, kGthe}));
}

TEST_F(Gpt2TokenizerTest, DecodeInvertsEncode) {
  const std::string text = "I'll tell the world: 1234!\n\tna\xC3\xAFve \x01\x7F";
  EXPECT_EQ(tokenizer.decode(encode(text)), text);
  const std::vector<std::uint16_t> end = {kEndOfText};
  EXPECT_EQ(tokenizer.decode(end), "<|endoftext|>");
}

TEST(Gpt2TokenizerErrors, MissingFilesAndBadMerges) {
  const TempDir dir;
  const auto vocab = kFixtures / "tiny_vocab.json";
  EXPECT_USER_ERROR(Gpt2Tokenizer(dir / "absent.json", kFixtures / "tiny_merges.txt"), "absent.json", "cannot open");
  dir.write("bad.json", "{\"a\": ");
  EXPECT_USER_ERROR(Gpt2Tokenizer(dir / "bad.json", kFixtures / "tiny_merges.txt"), "bad.json", "not valid JSON");
  dir.write("wide.json", "{\"a\": 70000}");
  EXPECT_USER_ERROR(Gpt2Tokenizer(dir / "wide.json", kFixtures / "tiny_merges.txt"), "wide.json", "70000", "[0, 65535]");
  dir.write("few.json", "{\"a\": 0, \"<|endoftext|>\": 1}");
  EXPECT_USER_ERROR(Gpt2Tokenizer(dir / "few.json", kFixtures / "tiny_merges.txt"), "few.json", "no token for byte 0x00");
  dir.write("merges.txt", "#version: 0.2\nh e\nq z\n");
  EXPECT_USER_ERROR(Gpt2Tokenizer(vocab, dir / "merges.txt"), "merges.txt:3", "\"qz\"", "not in the vocabulary");
  dir.write("odd.txt", "h e x\n");
  EXPECT_USER_ERROR(Gpt2Tokenizer(vocab, dir / "odd.txt"), "odd.txt:1", "LEFT RIGHT");
}

}  // namespace
}  // namespace zt::data
