// GPT-2's pre-tokenisation: text is cut into pieces before BPE, and merges never cross a piece
// boundary. GPT-2 does this with the regular expression
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// which this file follows by hand, alternative by alternative, in the same order. Differences,
// all confined to non-ASCII text:
//   - every code point >= 0x80 counts as a letter (\p{L}), including non-ASCII digits,
//     punctuation and spaces (U+00A0, U+2003, ...); only ASCII 0-9 are numbers (\p{N});
//   - whitespace (\s) is \t \n \v \f \r and space (Unicode White_Space within ASCII, as in
//     the `regex` module GPT-2 uses; 0x1C-0x1F are not, unlike Python's `re`);
//   - a byte that is not part of valid UTF-8 is one letter on its own.
// For ASCII text the pieces are exactly GPT-2's.
#pragma once

#include <string_view>
#include <vector>

namespace zt::data {

// Appends the pieces of `text`, in order; together they are exactly `text`.
void split_gpt2_pieces(std::string_view text, std::vector<std::string_view>& pieces);

}  // namespace zt::data
