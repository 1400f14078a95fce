#include "runtime/data/gpt2_pretokenizer.h"

#include <array>
#include <cstddef>

namespace zt::data {
namespace {

enum class CharClass { letter, number, space, other };

CharClass classify_ascii(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return CharClass::letter;
  if (c >= '0' && c <= '9') return CharClass::number;
  if (c == ' ' || (c >= '\t' && c <= '\r')) return CharClass::space;
  return CharClass::other;
}

// Length in bytes of the UTF-8 sequence starting at `pos`, or 1 if it is not valid UTF-8.
std::size_t utf8_length_at(std::string_view text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  std::size_t length = 1;
  if (lead >= 0xF0 && lead <= 0xF4) length = 4;
  else if (lead >= 0xE0) length = 3;
  else if (lead >= 0xC2 && lead < 0xE0) length = 2;
  else return 1;  // ASCII, a stray continuation byte, or an invalid lead byte
  if (lead >= 0xF5 || pos + length > text.size()) return 1;
  for (std::size_t i = 1; i < length; ++i) {
    if ((static_cast<unsigned char>(text[pos + i]) & 0xC0) != 0x80) return 1;
  }
  return length;
}

// The text as a cursor over characters (code points), each with its class and byte length.
class CharCursor {
 public:
  explicit CharCursor(std::string_view text) : text_(text) {}

  bool at_end(std::size_t pos) const { return pos >= text_.size(); }
  CharClass class_at(std::size_t pos) const {
    const auto c = static_cast<unsigned char>(text_[pos]);
    return c < 0x80 ? classify_ascii(c) : CharClass::letter;
  }
  std::size_t length_at(std::size_t pos) const {
    return static_cast<unsigned char>(text_[pos]) < 0x80 ? 1 : utf8_length_at(text_, pos);
  }
  // The end of the run of characters of class `cls` starting at `pos`.
  std::size_t run_end(std::size_t pos, CharClass cls) const {
    while (!at_end(pos) && class_at(pos) == cls) pos += length_at(pos);
    return pos;
  }

 private:
  std::string_view text_;
};

constexpr std::array<std::string_view, 7> kContractions = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};

// The end of the piece that starts at `pos` (which is not the end of the text).
std::size_t piece_end(std::string_view text, const CharCursor& chars, std::size_t pos) {
  // 's|'t|'re|'ve|'m|'ll|'d  (case-sensitive, as in GPT-2)
  for (const std::string_view contraction : kContractions) {
    if (text.substr(pos).starts_with(contraction)) return pos + contraction.size();
  }
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional single space, then a run of one class.
  const std::size_t body = (text[pos] == ' ' && !chars.at_end(pos + 1)) ? pos + 1 : pos;
  for (const std::size_t start : {body, pos}) {
    if (chars.at_end(start)) continue;
    const CharClass cls = chars.class_at(start);
    if (cls != CharClass::space) return chars.run_end(start, cls);
  }
  // `\s+(?!\S)`: a whitespace run, giving back its last character when that is followed by a
  // non-space (so " word" keeps its space); `\s+` takes a lone space before a non-space.
  // Whitespace is ASCII only here, so the run's last character is its last byte.
  const std::size_t run_end = chars.run_end(pos, CharClass::space);
  if (chars.at_end(run_end)) return run_end;
  return run_end - pos >= 2 ? run_end - 1 : run_end;
}

}  // namespace

void split_gpt2_pieces(std::string_view text, std::vector<std::string_view>& pieces) {
  const CharCursor chars(text);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = piece_end(text, chars, pos);
    pieces.push_back(text.substr(pos, end - pos));
    pos = end;
  }
}

}  // namespace zt::data
