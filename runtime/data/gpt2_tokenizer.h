// GPT-2's byte-level BPE, read from the standard vocab.json (token string -> id) and merges.txt
// (one merge "left right" per line, earlier lines first; an optional "#version" first line).
//
// Encoding: the text is cut into pieces (gpt2_pretokenizer.h); each piece's bytes become their
// GPT-2 characters (gpt2_byte_map.h); then, repeatedly, the adjacent pair with the lowest merge
// rank is merged everywhere in the piece, until no adjacent pair has a rank. The resulting
// symbols are looked up in the vocabulary.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/data/gpt2_byte_map.h"
#include "runtime/data/tokenizer.h"

namespace zt::data {

// Lets string-keyed maps be searched with a string_view, without building a std::string.
struct StringViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};
template <typename Value>
using StringMap = std::unordered_map<std::string, Value, StringViewHash, std::equal_to<>>;

class Gpt2Tokenizer final : public Tokenizer {
 public:
  // Throws zt::UserError naming the file on a missing or malformed file, an id that does not fit
  // in uint16, a byte or merge result missing from the vocabulary, or no "<|endoftext|>" entry.
  Gpt2Tokenizer(const std::filesystem::path& vocab_json, const std::filesystem::path& merges_txt);

  std::string_view name() const override { return "gpt2"; }
  int vocab_size() const override { return vocab_size_; }
  std::uint16_t end_of_text() const override { return end_of_text_; }
  void encode(std::string_view text, std::vector<std::uint16_t>& tokens) override;
  std::string decode(std::span<const std::uint16_t> tokens) const override;

 private:
  void read_vocab(const std::filesystem::path& vocab_json);
  void read_merges(const std::filesystem::path& merges_txt);
  void encode_piece(std::string_view piece, std::vector<std::uint16_t>& tokens);

  Gpt2ByteMap byte_map_;
  StringMap<std::uint16_t> id_of_symbol_;
  std::vector<std::string> bytes_of_id_;             // decoding table; empty for unused ids
  StringMap<int> merge_rank_;  // "left right" -> rank (0 merges first)
  int vocab_size_ = 0;
  std::uint16_t end_of_text_ = 0;

  // Scratch reused across calls so that encoding allocates only for words it has not seen.
  StringMap<std::vector<std::uint16_t>> piece_cache_;
  std::vector<std::string_view> pieces_;
  std::vector<std::string> symbols_;
  std::string pair_key_;
};

}  // namespace zt::data
