// Turns text into token ids and back. Two kinds:
//
//   byte  (default): one token per byte, vocabulary 256. There is no id left for an end-of-text
//         token, so byte 0 (NUL, which never occurs in text files) is reserved for it: documents
//         are separated by token 0, and text containing a NUL byte is rejected when preparing data.
//   gpt2: GPT-2's byte-level BPE from the standard vocab.json + merges.txt (see gpt2_tokenizer.h);
//         end-of-text is the vocabulary's "<|endoftext|>" (50256 in GPT-2's own vocabulary).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zt::data {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  virtual std::string_view name() const = 0;  // "byte" or "gpt2", as written in dataset.json
  virtual int vocab_size() const = 0;         // every id is below this
  virtual std::uint16_t end_of_text() const = 0;

  // Appends the ids of `text` to `tokens` (never the end-of-text id by itself: documents are
  // separated by the caller). Not thread-safe: BPE keeps a cache of words it has seen.
  virtual void encode(std::string_view text, std::vector<std::uint16_t>& tokens) = 0;
  virtual std::string decode(std::span<const std::uint16_t> tokens) const = 0;
};

std::unique_ptr<Tokenizer> make_byte_tokenizer();

// Reads GPT-2's vocab.json and merges.txt; throws zt::UserError naming the file on a mistake.
std::unique_ptr<Tokenizer> load_gpt2_tokenizer(const std::filesystem::path& vocab_json,
                                               const std::filesystem::path& merges_txt);

}  // namespace zt::data

namespace zt::data {

// The tokenizer a user asked for by name: "byte" (no files) or "gpt2" (both files). Throws
// zt::UserError on an unknown name or a missing or superfluous file.
std::unique_ptr<Tokenizer> make_tokenizer(std::string_view kind, const std::filesystem::path& vocab_json = {},
                                          const std::filesystem::path& merges_txt = {});

}  // namespace zt::data
