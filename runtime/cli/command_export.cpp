// `zerotrain export`: a checkpoint's weights consolidated into one safetensors file (fp32), for
// inference or other tools. One process reads every rank's shard; no MPI.
#include <fmt/format.h>

#include <ostream>
#include <string>

#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/safetensors_export.h"
#include "runtime/cli/command.h"
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

int run(const po::variables_map& options, std::ostream& out) {
  checkpoint::CheckpointReader reader(options["checkpoint"].as<std::string>());
  auto model = build_model(reader.config().model);
  const std::string output = options["output"].as<std::string>();
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
