#include "runtime/data/byte_tokenizer.h"

#include <stdexcept>

#include <fmt/format.h>

namespace zt::data {

void ByteTokenizer::encode(std::string_view text, std::vector<std::uint16_t>& tokens) {
  tokens.reserve(tokens.size() + text.size());
  for (const char c : text) tokens.push_back(static_cast<unsigned char>(c));
}

std::string ByteTokenizer::decode(std::span<const std::uint16_t> tokens) const {
  std::string text;
  text.reserve(tokens.size());
  for (const std::uint16_t token : tokens) {
    if (token >= kVocabSize) throw std::invalid_argument(fmt::format("token {} is not a byte", token));
    text.push_back(static_cast<char>(token));
  }
  return text;
}

std::unique_ptr<Tokenizer> make_byte_tokenizer() { return std::make_unique<ByteTokenizer>(); }

}  // namespace zt::data
