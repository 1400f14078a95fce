#include "runtime/train/run_tokenizer.h"

#include <fmt/format.h>

#include <fstream>
#include <vector>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "runtime/data/prepare_data.h"
#include "core/safe_file.h"

namespace zt {

std::unique_ptr<data::Tokenizer> run_tokenizer(const Config& config, std::string kind,
                                               const std::filesystem::path& vocab_json,
                                               const std::filesystem::path& merges_txt) {
  const std::filesystem::path summary =
      std::filesystem::path(config.data.train_files).parent_path() / std::string(data::kDatasetSummaryFile);
  const bool asked = !kind.empty();  // --tokenizer given, rather than read from the data's summary
  if (kind.empty()) {
    std::string why;
    const std::optional<std::string> text = read_regular_file(summary, why);
    std::error_code error;
    if (!text && std::filesystem::exists(std::filesystem::symlink_status(summary, error)))
      throw UserError(fmt::format("cannot read {}: {}", summary.string(), why));
    const nlohmann::json json = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
    if (json.is_object() && json.contains("tokenizer") && json["tokenizer"].is_string())
      kind = json["tokenizer"].get<std::string>();
    else if (config.model.vocab_size == 256)
      kind = "byte";
    else
      throw UserError(fmt::format("cannot tell the run's tokenizer: {} is missing or names none, and the vocabulary "
                                  "has {} tokens; pass --tokenizer byte, or --tokenizer gpt2 --vocab FILE --merges FILE",
                                  summary.string(), config.model.vocab_size));
  }
  if (kind == "gpt2" && (vocab_json.empty() || merges_txt.empty()))
    throw UserError(asked ? "--tokenizer gpt2 needs GPT-2's vocabulary: pass --vocab vocab.json --merges merges.txt"
                          : "the run's data was tokenized with GPT-2's BPE: pass --vocab vocab.json --merges merges.txt");
  std::unique_ptr<data::Tokenizer> tokenizer = data::make_tokenizer(kind, vocab_json, merges_txt);
  if (tokenizer->vocab_size() > config.model.vocab_size)
    throw UserError(fmt::format("the {} tokenizer has {} tokens, more than the model's vocab_size {}", kind,
                                tokenizer->vocab_size(), config.model.vocab_size));
  return tokenizer;
}

std::string decode_for_display(const data::Tokenizer& tokenizer, std::span<const std::int32_t> tokens) {
  std::string text;
  std::vector<std::uint16_t> run;
  auto flush = [&] {
    text += tokenizer.decode(run);
    run.clear();
  };
  for (std::int32_t t : tokens) {
    if (t == tokenizer.end_of_text()) {
      flush();
      text += "<|endoftext|>";
    } else {
      run.push_back(static_cast<std::uint16_t>(t));
    }
  }
  flush();
  return text;
}

}  // namespace zt
