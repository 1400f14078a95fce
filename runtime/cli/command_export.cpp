// `zerotrain export`: a checkpoint's weights for inference or other tools. One process reads every
// rank's shard; no MPI.
//   --format safetensors: one fp32 safetensors file in zerotrain's own names and layouts;
//   --format hf: a directory that transformers.AutoModelForCausalLM.from_pretrained loads.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "runtime/checkpoint/checkpoint_reader.h"
#include "core/stop_signal.h"
#include "runtime/checkpoint/safetensors_export.h"
#include "runtime/cli/command.h"
#include "core/error.h"
#include "core/memory.h"
#include "runtime/interop/hf_export.h"
#include "runtime/train/job_settings.h"
#include "runtime/train/run_tokenizer.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  options.add_options()
      ("checkpoint", po::value<std::string>()->value_name("DIR")->required(),
       "a complete checkpoint directory, e.g. runs/default/checkpoints/step_00000200")
      ("format", po::value<std::string>()->value_name("FORMAT")->default_value("safetensors"),
       "safetensors: one file, zerotrain's names (docs/checkpoints.md); hf: a Hugging Face model directory "
       "(config.json, model.safetensors, the tokenizer's files) for transformers' from_pretrained")
      ("output,o", po::value<std::string>()->value_name("PATH")->required(),
       "the safetensors file (--format safetensors) or the directory (--format hf) to write")
      ("tokenizer", po::value<std::string>()->value_name("byte|gpt2"),
       "--format hf: the run's tokenizer, for AutoTokenizer (default: the one named in dataset.json beside the "
       "run's training shards)")
      ("vocab", po::value<std::string>()->value_name("FILE"), "GPT-2 vocab.json (with the gpt2 tokenizer)")
      ("merges", po::value<std::string>()->value_name("FILE"), "GPT-2 merges.txt (with the gpt2 tokenizer)");
}

// Writing into the checkpoint being read would replace one of its files (or add one it never had).
void refuse_output_inside(const std::filesystem::path& checkpoint_dir, const std::string& output) {
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::weakly_canonical(checkpoint_dir, error);
  const std::filesystem::path file = std::filesystem::weakly_canonical(std::filesystem::absolute(output), error);
  if (error) return;  // the export itself says what is wrong with the path
  if (std::mismatch(dir.begin(), dir.end(), file.begin(), file.end()).first == dir.end())
    throw UserError(fmt::format("--output {} lies inside the checkpoint {} being exported; write it elsewhere",
                                output, checkpoint_dir.string()));
}

// The run's tokenizer as Hugging Face files. When it cannot be told (the data is gone, or GPT-2's
// files were not passed) and was not asked for, the weights are exported without it, saying why.
std::optional<interop::HfTokenizerExport> tokenizer_files(const po::variables_map& options, const Config& config,
                                                          std::ostream& out) {
  const std::string kind = options.count("tokenizer") ? options["tokenizer"].as<std::string>() : "";
  const std::string vocab = options.count("vocab") ? options["vocab"].as<std::string>() : "";
  const std::string merges = options.count("merges") ? options["merges"].as<std::string>() : "";
  try {
    const auto tokenizer = run_tokenizer(config, kind, vocab, merges);
    return interop::hf_tokenizer_export(*tokenizer, vocab, merges, effective_seq_len(config));
  } catch (const UserError& error) {
    if (!kind.empty() || !vocab.empty() || !merges.empty()) throw;  // asked for: its problem is the error
    out << fmt::format("note: no tokenizer files written ({}); AutoTokenizer needs them: pass --tokenizer\n",
                       error.what());
    return std::nullopt;
  }
}

int run(const po::variables_map& options, std::ostream& out) {
  const std::string format = options["format"].as<std::string>();
  if (format != "safetensors" && format != "hf")
    throw UserError(fmt::format("--format {}: unknown format (known: safetensors, hf)", format));
  if (format != "hf" && (options.count("tokenizer") || options.count("vocab") || options.count("merges")))
    throw UsageError("--tokenizer, --vocab and --merges go with --format hf (a safetensors file holds weights only)");
  const std::string output = options["output"].as<std::string>();
  refuse_output_inside(options["checkpoint"].as<std::string>(), output);
  checkpoint::CheckpointReader reader(options["checkpoint"].as<std::string>());
  auto model = build_model(reader.config().model);
  // Ctrl-C or SIGTERM ends the export between tensors, removing its temporary output.
  StopSignalHandler stop;
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;
  if (format == "hf") {
    const std::optional<interop::HfTokenizerExport> tokenizer = tokenizer_files(options, reader.config(), out);
    interop::HfExportResult result = interop::export_hf(reader, *model, output, tokenizer ? &*tokenizer : nullptr);
    tensors = result.tensors, bytes = result.bytes;
  } else {
    checkpoint::ExportResult result = checkpoint::export_safetensors(reader, *model, output);
    tensors = result.tensors, bytes = result.bytes;
  }
  out << fmt::format("wrote {}: {} tensors, {} parameters of {} at step {} ({})\n", output, tensors,
                     model->param_count(), model->name(), reader.manifest().step,
                     format_bytes(static_cast<std::int64_t>(bytes)));
  return 0;
}

}  // namespace

Command export_command() {
  return {
      .name = "export",
      .summary = "Write a checkpoint's weights as safetensors, or as a Hugging Face model directory",
      .usage = "zerotrain export --checkpoint DIR --output PATH [--format safetensors|hf]\n"
               "       [--tokenizer byte|gpt2 [--vocab vocab.json --merges merges.txt]]",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
