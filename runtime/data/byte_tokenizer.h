// Byte-level tokenization: token id = byte value (vocabulary 256, end-of-text = 0; see tokenizer.h).
#pragma once

#include "runtime/data/tokenizer.h"

namespace zt::data {

class ByteTokenizer final : public Tokenizer {
 public:
  static constexpr int kVocabSize = 256;
  static constexpr std::uint16_t kEndOfText = 0;

  std::string_view name() const override { return "byte"; }
  int vocab_size() const override { return kVocabSize; }
  std::uint16_t end_of_text() const override { return kEndOfText; }
  void encode(std::string_view text, std::vector<std::uint16_t>& tokens) override;
  std::string decode(std::span<const std::uint16_t> tokens) const override;
};

}  // namespace zt::data
