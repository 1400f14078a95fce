// `zerotrain plan`: the per-rank memory a config needs under every ZeRO stage, before running it
// (like DeepSpeed's memory estimator, but from the same plan the engine allocates by).
#include <fmt/format.h>

#include <ostream>
#include <string>
#include <vector>

#include "runtime/cli/command.h"
#include "runtime/cli/config_options.h"
#include "core/error.h"
#include "runtime/config/config.h"
#include "runtime/train/job_settings.h"
#include "zero/memory_plan.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  declare_config_options(options);
  options.add_options()
      ("world-size,n", po::value<int>()->value_name("N")->default_value(1), "number of data-parallel ranks")
      ("device", po::value<std::string>()->value_name("DEV")->default_value("cpu"),
       "device the plan is for: cpu or cuda (activation layouts differ slightly)");
}

int run(const po::variables_map& options, std::ostream& out) {
  Config config = load_config_options(options);
  const int world = options["world-size"].as<int>();
  if (world < 1) throw UsageError("--world-size must be at least 1");
  // A plan needs the kind of device only: "cuda" (each rank's own GPU in a job) plans for a GPU.
  const std::string device_text = options["device"].as<std::string>();
  const Device device = device_text == "cuda" ? Device::cuda(0) : Device::parse(device_text);
  if (device.is_cpu() && config.precision.dtype != DType::f32)
    throw UserError(fmt::format("precision.dtype {} computes on GPUs only: plan it with --device cuda (the CPU path "
                                "computes in fp32)",
                                dtype_name(config.precision.dtype)));
  auto model = build_model(config.model);
  const int seq_len = config.model.type == ModelType::mlp ? 1 : static_cast<int>(effective_seq_len(config));
  out << format_memory_plans(*model, zero_options(config), world,
                             static_cast<int>(config.train.train_micro_batch_size_per_gpu), seq_len, device);
  out << "\nModel state is exact: it is what the engine allocates (params, grads, optimizer). Buckets and "
         "activations are exact too;\ngathered<= bounds the ZeRO-3 parameters gathered at any moment.\n";
  return 0;
}

}  // namespace

Command plan_command() {
  return {
      .name = "plan",
      .summary = "Print the per-rank memory of a config under ZeRO stages 0-3",
      .usage = "zerotrain plan --config FILE [--world-size N] [--set KEY=VALUE]...",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
