#include "runtime/data/prepare_data.h"

#include <cmath>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/safe_file.h"
#include "runtime/data/mapped_file.h"
#include "runtime/data/shard_writer.h"

namespace zt::data {
namespace {

void check_options(const PrepareDataOptions& options) {
  if (options.inputs.empty()) throw UserError("prepare-data needs at least one input text file");
  if (!(options.val_fraction >= 0.0 && options.val_fraction < 1.0)) {
    throw UserError(fmt::format("the validation fraction must be in [0, 1), got {}", options.val_fraction));
  }
  if (options.output_dir.empty()) throw UserError("prepare-data needs an output directory");
}

bool goes_to_validation(std::uint64_t document_index, double val_fraction) {
  const auto i = static_cast<double>(document_index);
  return std::floor((i + 1.0) * val_fraction) > std::floor(i * val_fraction);
}

void remove_earlier_output(const std::filesystem::path& dir) {
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const bool is_shard = name.ends_with(".bin") && (name.starts_with("train_") || name.starts_with("val_"));
    if (is_shard || name == kDatasetSummaryFile) std::filesystem::remove(entry.path(), ignored);
  }
}

// Replaces the earlier dataset in `dir` by the files built in `staging` (a rename each).
void swap_in(const std::filesystem::path& staging, const std::filesystem::path& dir, PreparedDataset& dataset) {
  remove_earlier_output(dir);
  for (const auto& entry : std::filesystem::directory_iterator(staging)) {
    std::error_code error;
    std::filesystem::rename(entry.path(), dir / entry.path().filename(), error);
    if (error)
      throw UserError(fmt::format("{}: cannot move it into {}: {}", entry.path().string(), dir.string(), error.message()));
  }
  for (SplitSummary* split : {&dataset.train, &dataset.val})
    for (auto& shard : split->shards) shard = dir / shard.filename();
}

nlohmann::json split_json(const SplitSummary& split) {
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& shard : split.shards) shards.push_back(shard.filename().string());
  return {{"documents", split.documents}, {"tokens", split.tokens}, {"shards", shards}};
}

void write_summary(const PrepareDataOptions& options, const PreparedDataset& dataset, const nlohmann::json& inputs,
                   const std::filesystem::path& dir) {
  const nlohmann::json summary = {
      {"format", options.shard_format == ShardFormat::gpt2
                     ? "llm.c token shards: 256 x int32 header (magic 20240520, version 1, count), uint16 tokens"
                     : "llm.c Llama 3 token shards: 256 x int32 header (magic 20240801, version 7, count), uint32 tokens"},
      {"tokenizer", dataset.tokenizer},
      {"vocab_size", dataset.vocab_size},
      {"end_of_text", dataset.end_of_text},
      {"val_fraction", options.val_fraction},
      {"shard_tokens", options.shard_tokens},
      {"inputs", inputs},
      {"train", split_json(dataset.train)},
      {"val", split_json(dataset.val)},
  };
  const auto path = dir / kDatasetSummaryFile;
  std::ofstream out(path);
  out << summary.dump(2) << '\n';
  out.close();
  if (!out) throw UserError(fmt::format("{}: cannot write the dataset summary", path.string()));
}

}  // namespace

PreparedDataset prepare_data(const PrepareDataOptions& options, Tokenizer& tokenizer) {
  check_options(options);
  std::error_code error;
  std::filesystem::create_directories(options.output_dir, error);
  if (error) throw UserError(fmt::format("{}: cannot create the output directory: {}", options.output_dir.string(), error.message()));
  // Everything is built aside and swapped in only once it is complete: bad inputs (or a full disk)
  // leave the earlier dataset as it was.
  // Inside the output directory, so that its files rename into place on the same filesystem.
  const TemporaryDirectory staging(options.output_dir / ".prepare-data.");

  PreparedDataset dataset;
  dataset.tokenizer = tokenizer.name();
  dataset.vocab_size = tokenizer.vocab_size();
  dataset.end_of_text = tokenizer.end_of_text();
  ShardSequenceWriter train_writer(staging.path(), "train", options.shard_tokens, options.shard_format);
  ShardSequenceWriter val_writer(staging.path(), "val", options.shard_tokens, options.shard_format);
  nlohmann::json inputs = nlohmann::json::array();
  std::uint64_t document_index = 0;
  std::vector<std::string> documents;
  std::vector<std::uint16_t> tokens;

  for (const auto& input : options.inputs) {
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(input, error);
    if (!std::filesystem::exists(status))
      throw UserError(fmt::format("{}: no such input text file", input.string()));
    if (!std::filesystem::is_regular_file(status))
      throw UserError(fmt::format("{}: is {}, not a text file (name the text files themselves)", input.string(),
                                  std::filesystem::is_directory(status) ? "a directory"
                                  : std::filesystem::is_fifo(status)    ? "a named pipe"
                                  : std::filesystem::is_character_file(status) ? "a character device"
                                                                               : "not a regular file"));
    const MappedFile file(input);
    const std::string_view text(reinterpret_cast<const char*>(file.bytes().data()), file.size());
    const DocumentRule rule = resolve_document_rule(text, options.document_rule);
    documents.clear();
    split_documents(text, rule, documents);
    inputs.push_back({{"path", input.string()}, {"document_rule", document_rule_name(rule)}, {"documents", documents.size()}});

    for (std::size_t d = 0; d < documents.size(); ++d, ++document_index) {
      tokens.clear();
      tokens.push_back(tokenizer.end_of_text());
      tokenizer.encode(documents[d], tokens);
      for (std::size_t t = 1; t < tokens.size(); ++t) {
        if (tokens[t] == tokenizer.end_of_text()) {
          throw UserError(fmt::format("{}: document {} of this file encodes to the end-of-text token {} (with the byte "
                                      "tokenizer: the text has a NUL byte, which is reserved for end-of-text)",
                                      input.string(), d + 1, tokenizer.end_of_text()));
        }
      }
      const bool to_val = goes_to_validation(document_index, options.val_fraction);
      (to_val ? val_writer : train_writer).append(tokens);
      SplitSummary& split = to_val ? dataset.val : dataset.train;
      split.documents += 1;
      split.tokens += tokens.size();
    }
    log::info("{}: {} documents ({} rule)", input.string(), documents.size(), document_rule_name(rule));
  }
  train_writer.finish();
  val_writer.finish();
  dataset.train.shards = train_writer.files();
  dataset.val.shards = val_writer.files();

  if (document_index == 0) throw UserError("the input files hold no documents (they are empty or blank)");
  if (dataset.train.documents == 0) {
    throw UserError(fmt::format("all {} documents went to validation; use a smaller validation fraction", document_index));
  }
  if (options.val_fraction > 0 && dataset.val.documents == 0) {
    throw UserError(fmt::format("a validation fraction of {} of {} documents selects none; use a larger fraction or "
                                "more text (or --val-fraction 0 for no validation split)",
                                options.val_fraction, document_index));
  }
  write_summary(options, dataset, inputs, staging.path());
  swap_in(staging.path(), options.output_dir, dataset);
  return dataset;
}

}  // namespace zt::data
