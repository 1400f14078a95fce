// `zerotrain prepare-data`: text files -> llm.c-format train/val token shards + dataset.json
// (see runtime/data/prepare_data.h for the document rule and the split).
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/cli/command.h"
#include "runtime/data/prepare_data.h"
#include "runtime/data/tokenizer.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  options.add_options()
      ("input", po::value<std::vector<std::string>>()->value_name("TEXT")->multitoken()->required(),
       "text files to tokenize, in order (repeatable)")
      ("output", po::value<std::string>()->value_name("DIR")->required(),
       "directory for train_*.bin, val_*.bin and dataset.json (earlier shards there are replaced)")
      ("val-fraction", po::value<double>()->value_name("F")->default_value(0.1, "0.1"),
       "fraction of the documents, evenly spread, that go to the validation split; 0 for none")
      ("tokenizer", po::value<std::string>()->value_name("byte|gpt2")->default_value("byte"),
       "byte: one token per byte (vocabulary 256, NUL = end-of-text); gpt2: GPT-2 BPE from --vocab and --merges")
      ("vocab", po::value<std::string>()->value_name("FILE"), "GPT-2 vocab.json (with --tokenizer gpt2)")
      ("merges", po::value<std::string>()->value_name("FILE"), "GPT-2 merges.txt (with --tokenizer gpt2)")
      ("shard-tokens", po::value<std::uint64_t>()->value_name("N")->default_value(100'000'000),
       "tokens per shard file")
      ("shard-format", po::value<std::string>()->value_name("gpt2|llama3")->default_value("gpt2"),
       "llm.c's shard layout: gpt2 (magic 20240520, uint16 tokens) or llama3 (magic 20240801, uint32 tokens)")
      ("documents", po::value<std::string>()->value_name("RULE")->default_value("auto"),
       "how a file splits into documents: fortune ('%' lines), paragraph (blank lines), file (whole file), "
       "auto (fortune if the file has a '%' line, else paragraph)");
}

std::string optional_path(const po::variables_map& options, const char* key) {
  return options.count(key) > 0 ? options[key].as<std::string>() : std::string();
}

int run(const po::variables_map& options, std::ostream& out) {
  const auto tokenizer = data::make_tokenizer(options["tokenizer"].as<std::string>(), optional_path(options, "vocab"),
                                              optional_path(options, "merges"));
  data::PrepareDataOptions prepare;
  for (const std::string& input : options["input"].as<std::vector<std::string>>()) prepare.inputs.emplace_back(input);
  prepare.output_dir = options["output"].as<std::string>();
  prepare.val_fraction = options["val-fraction"].as<double>();
  prepare.shard_tokens = options["shard-tokens"].as<std::uint64_t>();
  prepare.shard_format = data::parse_shard_format(options["shard-format"].as<std::string>());
  prepare.document_rule = data::parse_document_rule(options["documents"].as<std::string>());

  const data::PreparedDataset dataset = data::prepare_data(prepare, *tokenizer);
  out << fmt::format("{}: tokenizer {} (vocabulary {}, end-of-text {})\n", prepare.output_dir.string(),
                     dataset.tokenizer, dataset.vocab_size, dataset.end_of_text);
  for (const auto& [name, split] : {std::pair{"train", &dataset.train}, std::pair{"val", &dataset.val}}) {
    out << fmt::format("  {:<5} {} documents, {} tokens, {} shard file(s)\n", name, split->documents, split->tokens,
                       split->shards.size());
  }
  return 0;
}

}  // namespace

Command prepare_data_command() {
  return {
      .name = "prepare-data",
      .summary = "Tokenize text files into train/val token shards (llm.c format) and dataset.json",
      .usage = "zerotrain prepare-data --input TEXT... --output DIR [--val-fraction F]\n"
               "       [--tokenizer byte|gpt2 [--vocab vocab.json --merges merges.txt]] [--shard-tokens N]\n"
               "       [--documents auto|fortune|paragraph|file]",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
