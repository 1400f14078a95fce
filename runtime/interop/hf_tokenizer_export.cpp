#include "runtime/interop/hf_tokenizer_export.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/safe_file.h"
#include "runtime/data/gpt2_byte_map.h"

namespace zt::interop {
namespace {

using nlohmann::ordered_json;

constexpr const char* kEndOfText = "<|endoftext|>";

ordered_json byte_level(bool regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", regex}};
}

// zerotrain's byte tokenizer as `tokenizers` JSON: no normaliser, no regex split (bytes never
// merge, so pieces do not matter), ids 1..255 for the bytes' GPT-2 symbols.
std::string byte_tokenizer_json() {
  const data::Gpt2ByteMap symbols;
  ordered_json vocab = ordered_json::object();
  // Id 0 is the end-of-text token itself: NUL never occurs in the run's text (prepare-data refuses it).
  vocab[kEndOfText] = 0;
  for (int b = 1; b < 256; ++b) vocab[symbols.symbol(static_cast<std::uint8_t>(b))] = b;
  ordered_json model = {{"type", "BPE"},          {"dropout", nullptr},     {"unk_token", nullptr},
                        {"continuing_subword_prefix", nullptr},              {"end_of_word_suffix", nullptr},
                        {"fuse_unk", false},      {"byte_fallback", false}, {"ignore_merges", false},
                        {"vocab", vocab},         {"merges", ordered_json::array()}};
  ordered_json end_of_text = {{"id", 0},          {"content", kEndOfText}, {"single_word", false}, {"lstrip", false},
                              {"rstrip", false},  {"normalized", false},   {"special", true}};
  ordered_json j = {{"version", "1.0"},
                    {"truncation", nullptr},
                    {"padding", nullptr},
                    {"added_tokens", ordered_json::array({end_of_text})},
                    {"normalizer", nullptr},
                    {"pre_tokenizer", byte_level(false)},
                    {"post_processor", nullptr},
                    {"decoder", byte_level(false)},
                    {"model", model}};
  return j.dump(2) + "\n";
}

std::string read_file_for_export(const std::filesystem::path& path) {
  std::string why;
  std::optional<std::string> text = read_regular_file(path, why);
  if (!text) throw UserError(fmt::format("cannot read {} for the export's tokenizer: {}", path.string(), why));
  return std::move(*text);
}

}  // namespace

HfTokenizerExport hf_tokenizer_export(const data::Tokenizer& tokenizer, const std::filesystem::path& vocab_json,
                                      const std::filesystem::path& merges_txt, std::int64_t model_max_length) {
  HfTokenizerExport out;
  out.end_of_text = tokenizer.end_of_text();
  ordered_json config = {{"bos_token", kEndOfText}, {"eos_token", kEndOfText}, {"pad_token", kEndOfText},
                         {"model_max_length", model_max_length}, {"clean_up_tokenization_spaces", false},
                         // No token_type_ids: GPT-2 would add their embedding to every position.
                         {"model_input_names", {"input_ids", "attention_mask"}}};
  if (tokenizer.name() == "gpt2") {
    config["tokenizer_class"] = "GPT2Tokenizer";
    config["unk_token"] = kEndOfText;
    config["add_prefix_space"] = false;
    out.files.emplace_back("vocab.json", read_file_for_export(vocab_json));
    out.files.emplace_back("merges.txt", read_file_for_export(merges_txt));
  } else {
    config["tokenizer_class"] = "PreTrainedTokenizerFast";
    out.files.emplace_back("tokenizer.json", byte_tokenizer_json());
  }
  out.files.emplace_back("tokenizer_config.json", config.dump(2) + "\n");
  const ordered_json generation = {{"bos_token_id", out.end_of_text},
                                   {"eos_token_id", out.end_of_text},
                                   {"pad_token_id", out.end_of_text}};
  out.files.emplace_back("generation_config.json", generation.dump(2) + "\n");
  return out;
}

}  // namespace zt::interop
