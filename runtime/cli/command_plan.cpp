// `zerotrain plan`: the per-rank memory a config needs under every ZeRO stage, before running it
// (like DeepSpeed's memory estimator, but from the same plan the engine allocates by), and with
// --predict the step time every stage should take (zero/step_time_model.h).
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "models/family.h"
#include "runtime/cli/command.h"
#include "runtime/cli/numeric_option.h"
#include "runtime/cli/config_options.h"
#include "core/error.h"
#include "runtime/config/config.h"
#include "runtime/train/compute_rate.h"
#include "runtime/train/cpu_threads.h"
#include "runtime/train/job_settings.h"
#include "zero/memory_plan.h"
#include "zero/step_time_model.h"

namespace zt::cli {
namespace {

void declare_options(po::options_description& options) {
  declare_config_options(options);
  options.add_options()
      ("world-size,n", po::value<int>()->value_name("N")->default_value(1), "number of data-parallel ranks")
      ("device", po::value<std::string>()->value_name("DEV")->default_value("cpu"),
       "device the plan is for: cpu or cuda (activations differ: a GPU's flash attention keeps no (T, T) probabilities)")
      ("predict", po::bool_switch(), "also predict the step time of every stage (compute, communication, exposed)")
      ("flops-per-s", po::value<double>()->value_name("R"),
       "with --predict: one rank's compute rate in FLOP/s (e.g. 4e10); measured on this CPU when not given")
      ("link-gbps", po::value<double>()->value_name("B"),
       "with --predict: link bandwidth per rank and direction in Gbit/s (needed for more than one rank: "
       "measuring it needs ranks; `zerotrain bench-comm` under mpirun reports it as busbw in GB/s: x 8)")
      ("link-latency-us", po::value<double>()->value_name("A"),
       "with --predict: link latency per ring step in microseconds (default 0: latency terms left out)")
      ("ranks-per-host", po::value<int>()->value_name("R"),
       "with --predict: ranks per host, placed host by host (default 1); --link-gbps/--link-latency-us are then "
       "the link between hosts, and a ring that crosses hosts steps at the slower of the two links")
      ("intra-host-gbps", po::value<double>()->value_name("B"),
       "with --predict and --ranks-per-host: the link between ranks of one host in Gbit/s (default: as "
       "--link-gbps)")
      ("intra-host-latency-us", po::value<double>()->value_name("A"),
       "with --predict and --ranks-per-host: its latency per ring step in microseconds (default 0)");
}

std::optional<double> positive_option(const po::variables_map& options, const char* name) {
  if (!options.count(name)) return std::nullopt;
  const double value = options[name].as<double>();
  if (!std::isfinite(value) || value <= 0.0)
    throw UsageError(fmt::format("--{} must be a positive number, got {}", name, value));
  return value;
}

// What --predict was given, checked before anything is printed or measured.
struct PredictOptions {
  std::optional<double> flops_per_s;  // measured when absent
  std::optional<double> link_gbps;    // required on more than one rank, unless all share one host
  std::optional<double> latency_us;   // 0 when absent
  int ranks_per_host = 1;
  std::optional<double> intra_gbps;        // as link_gbps when absent
  std::optional<double> intra_latency_us;  // 0 when absent
};

std::optional<double> non_negative_option(const po::variables_map& options, const char* name) {
  if (!options.count(name)) return std::nullopt;
  const double value = options[name].as<double>();
  if (!std::isfinite(value) || value < 0.0)
    throw UsageError(fmt::format("--{} must be zero or positive, got {}", name, value));
  return value;
}

PredictOptions read_predict_options(const po::variables_map& options, int world, Device device) {
  PredictOptions p;
  p.flops_per_s = positive_option(options, "flops-per-s");
  p.link_gbps = positive_option(options, "link-gbps");
  p.latency_us = non_negative_option(options, "link-latency-us");
  if (options.count("ranks-per-host")) {
    p.ranks_per_host = options["ranks-per-host"].as<int>();
    if (p.ranks_per_host < 1)
      throw UsageError(fmt::format("--ranks-per-host must be at least 1, got {}", p.ranks_per_host));
  }
  p.intra_gbps = positive_option(options, "intra-host-gbps");
  p.intra_latency_us = non_negative_option(options, "intra-host-latency-us");
  if (p.ranks_per_host == 1 && (p.intra_gbps || p.intra_latency_us))
    throw UsageError("--intra-host-gbps and --intra-host-latency-us describe the link between ranks of one host: "
                     "give --ranks-per-host too (with one rank per host they would be unused)");
  const bool one_host = p.ranks_per_host >= world;
  if (world > 1 && !p.link_gbps && !(one_host && p.intra_gbps))
    throw UsageError(fmt::format("--predict on {} ranks needs --link-gbps: measuring the link needs ranks (run "
                                 "`zerotrain bench-comm` under mpirun and give its busbw, GB/s x 8)",
                                 world));
  if (!p.flops_per_s && !device.is_cpu())
    throw UsageError("--predict for --device cuda needs --flops-per-s: the compute rate can be measured on this "
                     "machine's CPU only");
  return p;
}

std::string format_predictions(const PredictOptions& given, const Config& config, const models::Model& model, int world,
                               int micro_batch, int seq_len, Device device) {
  double flops_per_s = 0.0, bytes_per_s = 0.0;
  std::string rate_source = "given: --flops-per-s";
  if (given.flops_per_s) {
    flops_per_s = *given.flops_per_s;
  } else if (config.emulation.enabled()) {
    const models::DeviceRates rates = emulated_rates(config.emulation);
    flops_per_s = rates.flops_per_s;
    bytes_per_s = rates.bytes_per_s;
    rate_source = fmt::format("the emulated device: emulation.tflops {} x emulation.mfu {}, memory {} GB/s",
                              config.emulation.tflops, config.emulation.mfu, config.emulation.memory_gbps);
  } else {
    const int threads = cpu_threads_for_this_rank(config.train.cpu_threads, 1, 1);
    const MeasuredComputeRate measured = measure_cpu_compute_rate(config.model, micro_batch, seq_len, threads, 0.3);
    flops_per_s = measured.flops_per_s;
    rate_source = measured.what;
  }
  const ZeroOptions zero = zero_options(config);
  const double micro_flops = model.flops_per_step(micro_batch, seq_len);
  const models::DeviceRates rates{.flops_per_s = flops_per_s, .bytes_per_s = bytes_per_s};
  const double latency_us = given.latency_us.value_or(0.0);
  const LinkModel link{.latency_s = latency_us * 1e-6,
                       .bytes_per_s = given.link_gbps ? *given.link_gbps * 1e9 / 8.0 : 0.0,
                       .ranks_per_host = given.ranks_per_host,
                       .intra_latency_s = given.intra_latency_us.value_or(0.0) * 1e-6,
                       .intra_bytes_per_s = given.intra_gbps ? *given.intra_gbps * 1e9 / 8.0 : 0.0,
                       .two_level_all_gather = config.comm.two_level_all_gather};

  std::string out = fmt::format(
      "Predicted step time of {} on {} rank(s), micro batch {} x {}, {} micro batch(es) per step\n", model.name(),
      world, micro_batch, seq_len, zero.gradient_accumulation_steps);
  out += fmt::format("  FLOPs per step and rank: {:.4e} (forward + backward, models/flops.h)\n",
                     micro_flops * zero.gradient_accumulation_steps);
  out += fmt::format("  compute rate: {:.2f} GFLOP/s per rank ({})\n", flops_per_s / 1e9, rate_source);
  if (given.link_gbps)
    out += fmt::format("  link: {:.3f} Gbit/s = {:.1f} MB/s per rank and direction (given: --link-gbps), latency "
                       "{:.1f} us ({})\n",
                       *given.link_gbps, link.bytes_per_s / 1e6, latency_us,
                       given.latency_us ? "given: --link-latency-us" : "not given: taken as 0");
  else if (world == 1)
    out += "  link: none needed on one rank\n";
  if (given.ranks_per_host > 1) {
    const int hosts = (world + given.ranks_per_host - 1) / given.ranks_per_host;
    const bool two_level = config.comm.two_level_all_gather && hosts > 1 && world % given.ranks_per_host == 0;
    out += fmt::format("  hosts: {} rank(s) per host, {} host(s); between ranks of a host {}, latency {:.1f} us{}{}\n",
                       given.ranks_per_host, hosts,
                       given.intra_gbps ? fmt::format("{:.3f} Gbit/s", *given.intra_gbps)
                                        : std::string("as between hosts (--link-gbps)"),
                       given.intra_latency_us.value_or(0.0),
                       hosts > 1 ? "; rings cross hosts and step at the slower link" : "; every ring stays on the host",
                       two_level ? "; all-gathers in two levels (comm.two_level_all_gather)" : "");
  }
  out += fmt::format("  communication {}, parameters {}, reduce_bucket_size {} elements\n\n",
                     dtype_name(zero.comm_dtype), dtype_name(zero.compute_dtype), zero.reduce_bucket_size);
  out += fmt::format("{:>5}  {:>7}  {:>12}  {:>10}  {:>11}  {:>9}  {:>18}\n", "stage", "buckets", "T_compute ms",
                     "T_comm ms", "exposed ms", "step ms", "no-overlap step ms");
  for (int stage = 0; stage <= 3; ++stage) {
    ZeroOptions o = zero;
    o.stage = stage;
    const StepTimeInputs in = step_time_inputs(model, o, world, micro_batch, seq_len, device, rates, link);
    const StepTimePrediction p = predict_step_time(in);
    out += fmt::format("{:>5}  {:>7}  {:>12.1f}  {:>10.1f}  {:>11.1f}  {:>9.1f}  {:>18.1f}\n", stage,
                       in.bucket_comm_bytes.size(), 1e3 * p.compute_s, 1e3 * p.comm_s, 1e3 * p.exposed_s,
                       1e3 * p.step_s, 1e3 * p.step_without_overlap_s);
  }
  out += "\nexposed and step: overlap_comm true; no-overlap step: false (the reductions after backward, waited for; the\n"
         "parameter gathers as with overlap: overlap_comm concerns the reductions). The model's formulas and\n"
         "what it ignores (memory-bound work other than AdamW, which counts only with a memory bandwidth (the "
         "emulated device's); CPU taken by communication; ZeRO-3 persistence) are in zero/step_time_model.h.\n";
  return out;
}

int run(const po::variables_map& options, std::ostream& out) {
  Config config = load_config_options(options);
  const int world = option_in(options, "world-size", 1, 1 << 20);
  check_settings_for_world(config, world, /*any_stage=*/true);
  // A plan needs the kind of device only: "cuda" (each rank's own GPU in a job) plans for a GPU.
  const std::string device_text = options["device"].as<std::string>();
  const Device device = device_text == "cuda" ? Device::cuda(0) : Device::parse(device_text);
  auto model = build_model(config.model);
  const int seq_len = models::positions_per_row(config.model, effective_seq_len(config));
  const int micro_batch = static_cast<int>(config.train.train_micro_batch_size_per_gpu);
  std::optional<PredictOptions> predict;
  if (options["predict"].as<bool>()) {
    predict = read_predict_options(options, world, device);
  } else {
    for (const char* name :
         {"flops-per-s", "link-gbps", "link-latency-us", "ranks-per-host", "intra-host-gbps", "intra-host-latency-us"})
      if (options.count(name)) throw UsageError(fmt::format("--{} is used with --predict only", name));
  }
  out << format_memory_plans(*model, zero_options(config), world, micro_batch, seq_len, device);
  out << "\nModel state is exact: it is what the engine allocates (params, grads, optimizer). Buckets and "
         "activations are exact too;\ngathered<= bounds the ZeRO-3 parameters gathered at any moment.\n";
  if (predict) out << "\n" << format_predictions(*predict, config, *model, world, micro_batch, seq_len, device);
  return 0;
}

}  // namespace

Command plan_command() {
  return {
      .name = "plan",
      .summary = "Print the per-rank memory of a config under ZeRO stages 0-3 (and, with --predict, the step time)",
      .usage = "zerotrain plan --config FILE [--world-size N] [--set KEY=VALUE]...\n"
               "       zerotrain plan --config FILE --world-size N --predict --link-gbps B [--link-latency-us A] "
               "[--flops-per-s R]\n"
               "                      [--ranks-per-host R [--intra-host-gbps B] [--intra-host-latency-us A]]",
      .declare_options = declare_options,
      .run = run,
  };
}

}  // namespace zt::cli
