#include "runtime/data/gpt2_byte_map.h"

namespace zt::data {
namespace {

bool stands_for_itself(int byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

}  // namespace

void append_utf8(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

Gpt2ByteMap::Gpt2ByteMap() {
  char32_t next_shifted = 256;
  for (int byte = 0; byte < 256; ++byte) {
    code_points_[byte] = stands_for_itself(byte) ? static_cast<char32_t>(byte) : next_shifted++;
    append_utf8(symbols_[byte], code_points_[byte]);
  }
}

std::optional<std::uint8_t> Gpt2ByteMap::byte_of(char32_t code_point) const {
  if (code_point < 256 && stands_for_itself(static_cast<int>(code_point))) return static_cast<std::uint8_t>(code_point);
  for (int byte = 0; byte < 256; ++byte) {
    if (code_points_[byte] == code_point) return static_cast<std::uint8_t>(byte);
  }
  return std::nullopt;
}

}  // namespace zt::data
