// The tokenizer of a run's data: the one named in dataset.json beside its training shards
// (written by `zerotrain prepare-data`), or the one the user names.
#pragma once

#include <filesystem>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "runtime/config/config.h"
#include "runtime/data/tokenizer.h"

namespace zt {

// kind: "" (from dataset.json; a vocabulary of 256 without one means bytes), "byte" or "gpt2"
// (GPT-2's BPE needs vocab_json and merges_txt). Throws zt::UserError saying what to pass when
// the tokenizer cannot be found, or when its vocabulary does not fit the model.
std::unique_ptr<data::Tokenizer> run_tokenizer(const Config& config, std::string kind,
                                               const std::filesystem::path& vocab_json = {},
                                               const std::filesystem::path& merges_txt = {});

// `tokens` as text for people: end-of-text shows as <|endoftext|> (the byte tokenizer's is a NUL).
std::string decode_for_display(const data::Tokenizer& tokenizer, std::span<const std::int32_t> tokens);

}  // namespace zt
