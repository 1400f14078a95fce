// `zerotrain sample`: text from a checkpoint's weights and the run's tokenizer, on the CPU, one
// process. Deterministic for a seed.
#include <fmt/format.h>

#include <ostream>
#include <string>

#include "models/family.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/cli/command.h"
#include "runtime/cli/numeric_option.h"
#include "runtime/train/job_settings.h"
#include "runtime/train/run_tokenizer.h"
#include "runtime/train/text_sampler.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  options.add_options()
      ("checkpoint", po::value<std::string>()->value_name("DIR")->required(), "a complete checkpoint directory")
      ("prompt", po::value<std::string>()->value_name("TEXT")->required(), "the text to continue")
      ("max-new-tokens", po::value<int>()->value_name("N")->default_value(64), "tokens to generate")
      ("temperature", po::value<double>()->value_name("T")->default_value(1.0),
       "softmax temperature; 0 = always the most likely token")
      ("top-k", po::value<int>()->value_name("K")->default_value(0), "sample among the K likeliest tokens; 0 = all")
      ("seed", po::value<std::uint64_t>()->value_name("S")->default_value(0), "the same seed gives the same text")
      ("tokenizer", po::value<std::string>()->value_name("byte|gpt2"),
       "default: the one in dataset.json beside the run's training shards")
      ("vocab", po::value<std::string>()->value_name("FILE"), "GPT-2 vocab.json (with the gpt2 tokenizer)")
      ("merges", po::value<std::string>()->value_name("FILE"), "GPT-2 merges.txt (with the gpt2 tokenizer)");
}

int run(const po::variables_map& options, std::ostream& out) {
  SampleOptions sample;
  sample.max_new_tokens = option_in(options, "max-new-tokens", 1, 1 << 20);
  sample.temperature = option_in(options, "temperature", 0.0, 1e6);  // 0: always the likeliest
  sample.top_k = option_in(options, "top-k", 0, 1 << 30);            // 0: all tokens
  sample.seed = options["seed"].as<std::uint64_t>();

  checkpoint::CheckpointReader reader(options["checkpoint"].as<std::string>());
  const Config config = reader.config();
  if (!models::model_family(config.model.type).reads_tokens())
    throw UserError(fmt::format("checkpoint {} holds a {} model; only token models (gpt2, llama) generate text",
                                reader.dir().string(), choice_name(config.model.type)));
  auto tokenizer = run_tokenizer(config, options.count("tokenizer") ? options["tokenizer"].as<std::string>() : "",
                                 options.count("vocab") ? options["vocab"].as<std::string>() : "",
                                 options.count("merges") ? options["merges"].as<std::string>() : "");
  auto model = build_model(config.model);
  reader.check_blocks_match(*model);
  std::vector<float> params(model->param_count());
  std::size_t offset = 0;
  for (std::size_t b = 0; b < model->num_blocks(); ++b) {
    const std::size_t numel = model->block(b).layout().numel();
    reader.read_kind("master", b, 0, numel, params.data() + offset);
    offset += numel;
  }
  TextSampler sampler(*model, params);

  std::vector<std::uint16_t> prompt_ids;
  tokenizer->encode(options["prompt"].as<std::string>(), prompt_ids);
  std::vector<std::int32_t> prompt(prompt_ids.begin(), prompt_ids.end());
  const std::vector<std::int32_t> generated = sampler.generate(prompt, sample);
  out << options["prompt"].as<std::string>() << decode_for_display(*tokenizer, generated) << "\n";
  return 0;
}

}  // namespace

Command sample_command() {
  return {
      .name = "sample",
      .summary = "Generate text from a checkpoint with the run's tokenizer (CPU, deterministic for a seed)",
      .usage = "zerotrain sample --checkpoint DIR --prompt TEXT [--max-new-tokens N] [--temperature T] [--top-k K] "
               "[--seed S]",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
