// Byte-level tokenization, GPT-2's byte <-> unicode map, GPT-2 pre-tokenisation, the tokenizer factory.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/data/byte_tokenizer.h"
#include "runtime/data/gpt2_byte_map.h"
#include "runtime/data/gpt2_pretokenizer.h"
#include "tests/runtime/data/temp_dir.h"

namespace zt::data {
namespace {

TEST(ByteTokenizer, OneTokenPerByteAndBack) {
  ByteTokenizer tokenizer;
  EXPECT_EQ(tokenizer.vocab_size(), 256);
  EXPECT_EQ(tokenizer.end_of_text(), 0);
  EXPECT_EQ(tokenizer.name(), "byte");
  std::vector<std::uint16_t> tokens = {7};  // encode appends
  const std::string text = "Hi\n\xC3\xA9\xFF";
  tokenizer.encode(text, tokens);
  EXPECT_EQ(tokens, (std::vector<std::uint16_t>{7, 'H', 'i', '\n', 0xC3, 0xA9, 0xFF}));
  EXPECT_EQ(tokenizer.decode(std::span(tokens).subspan(1)), text);
}

TEST(Gpt2ByteMap, PrintableBytesStandForThemselvesOthersAreShifted) {
  const Gpt2ByteMap map;
  EXPECT_EQ(map.symbol('A'), "A");
  EXPECT_EQ(map.symbol('!'), "!");
  EXPECT_EQ(map.symbol(' '), "\xC4\xA0");   // U+0120 'Ġ': space is the 33rd shifted byte (256 + 32)
  EXPECT_EQ(map.symbol('\n'), "\xC4\x8A");  // U+010A 'Ċ'
  EXPECT_EQ(map.symbol(0), "\xC4\x80");     // U+0100
  EXPECT_EQ(map.symbol(0xE9), "\xC3\xA9");  // 'é' is printable Latin-1
  EXPECT_EQ(map.symbol(0xAD), "\xC5\x83");  // soft hyphen, the last shifted byte: U+0143
  for (int byte = 0; byte < 256; ++byte) {
    // Every byte comes back from its own code point.
    const std::string& symbol = map.symbol(static_cast<std::uint8_t>(byte));
    char32_t cp = symbol.size() == 1 ? static_cast<unsigned char>(symbol[0])
                                     : ((symbol[0] & 0x1F) << 6) | (symbol[1] & 0x3F);
    EXPECT_EQ(map.byte_of(cp), byte);
  }
}

std::vector<std::string> pieces_of(std::string_view text) {
  std::vector<std::string_view> pieces;
  split_gpt2_pieces(text, pieces);
  return {pieces.begin(), pieces.end()};
}

// Expected pieces are those of GPT-2's regular expression (checked with Python's `regex` module).
TEST(Gpt2Pretokenizer, WordsContractionsAndSpaces) {
  EXPECT_EQ(pieces_of("Hello world's  end"), (std::vector<std::string>{"Hello", " world", "'s", " ", " end"}));
  EXPECT_EQ(pieces_of("don't'S  "), (std::vector<std::string>{"don", "'t", "'", "S", "  "}));
}

TEST(Gpt2Pretokenizer, NumbersPunctuationAndWhitespaceRuns) {
  EXPECT_EQ(pieces_of("I'll say: \"12ab\"!!\n\n  x \t\ty  "),
            (std::vector<std::string>{"I", "'ll", " say", ":", " \"", "12", "ab", "\"!!", "\n\n ", " x", " \t", "\t",
                                      "y", "  "}));
  EXPECT_EQ(pieces_of("x  \n"), (std::vector<std::string>{"x", "  \n"}));
  EXPECT_EQ(pieces_of(" "), (std::vector<std::string>{" "}));
  EXPECT_EQ(pieces_of(""), (std::vector<std::string>{}));
}

TEST(Gpt2Pretokenizer, NonAsciiCountsAsLetters) {
  EXPECT_EQ(pieces_of("na\xC3\xAFve caf\xC3\xA9"), (std::vector<std::string>{"na\xC3\xAFve", " caf\xC3\xA9"}));
  // An invalid UTF-8 byte is one letter of its own, glued to the letters around it.
  EXPECT_EQ(pieces_of("a\xFF" "b 1"), (std::vector<std::string>{"a\xFF" "b", " 1"}));
}

TEST(MakeTokenizer, ByNameWithItsFiles) {
  EXPECT_EQ(make_tokenizer("byte")->name(), "byte");
  EXPECT_USER_ERROR(make_tokenizer("bpe"), "unknown tokenizer \"bpe\"", "byte", "gpt2");
  EXPECT_USER_ERROR(make_tokenizer("gpt2"), "vocab.json and merges.txt");
  EXPECT_USER_ERROR(make_tokenizer("byte", "vocab.json", "merges.txt"), "takes no vocab");
}

}  // namespace
}  // namespace zt::data
