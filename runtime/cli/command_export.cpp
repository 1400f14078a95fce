// `zerotrain export`: a checkpoint's weights consolidated into one safetensors file (fp32), for
// inference or other tools. One process reads every rank's shard; no MPI.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <string>

#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/safetensors_export.h"
#include "runtime/cli/command.h"
#include "core/error.h"
#include "core/memory.h"
#include "runtime/train/job_settings.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  options.add_options()
      ("checkpoint", po::value<std::string>()->value_name("DIR")->required(),
       "a complete checkpoint directory, e.g. runs/default/checkpoints/step_00000200")
      ("output,o", po::value<std::string>()->value_name("FILE")->required(), "the safetensors file to write");
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

int run(const po::variables_map& options, std::ostream& out) {
  const std::string output = options["output"].as<std::string>();
  refuse_output_inside(options["checkpoint"].as<std::string>(), output);
  checkpoint::CheckpointReader reader(options["checkpoint"].as<std::string>());
  auto model = build_model(reader.config().model);
  checkpoint::ExportResult result = checkpoint::export_safetensors(reader, *model, output);
  out << fmt::format("wrote {}: {} tensors, {} parameters of {} at step {} ({})\n", output, result.tensors,
                     model->param_count(), model->name(), reader.manifest().step,
                     format_bytes(static_cast<std::int64_t>(result.bytes)));
  return 0;
}

}  // namespace

Command export_command() {
  return {
      .name = "export",
      .summary = "Write a checkpoint's weights as one fp32 safetensors file (see docs/checkpoints.md)",
      .usage = "zerotrain export --checkpoint DIR --output FILE",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
