// GPT-2's reversible byte <-> unicode mapping. GPT-2's vocabulary stores every token as a string of
// printable characters: bytes that are printable Latin-1 characters ('!'..'~', '¡'..'¬', '®'..'ÿ')
// stand for themselves, and each of the other 68 bytes (controls, space, DEL, NBSP, soft hyphen)
// is shifted to code point 256 + n, n counting those bytes in increasing order (so space -> 'Ġ',
// U+0120, and newline -> 'Ċ', U+010A).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zt::data {

class Gpt2ByteMap {
 public:
  Gpt2ByteMap();

  // The UTF-8 encoding of the character that stands for `byte`.
  const std::string& symbol(std::uint8_t byte) const { return symbols_[byte]; }
  // The byte a code point stands for, if any.
  std::optional<std::uint8_t> byte_of(char32_t code_point) const;

 private:
  std::array<std::string, 256> symbols_;
  std::array<char32_t, 256> code_points_{};
};

// Appends the UTF-8 encoding of `code_point` to `out`.
void append_utf8(std::string& out, char32_t code_point);

}  // namespace zt::data
