// Tests of the zerotrain command line, run in-process through zt::cli::run_cli.
#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "models/flops.h"
#include "runtime/cli/address_space.h"
#include "runtime/cli/cli.h"
#include "runtime/cli/command.h"
#include "runtime/config/config.h"

namespace zt::cli {
namespace {

const std::filesystem::path kSourceDir = ZT_SOURCE_DIR;

struct CliResult {
  int status;
  std::string out;
  std::string err;
};

CliResult run(std::vector<std::string> args) {
  std::ostringstream out, err;
  int status = run_cli(args, out, err);
  return {status, out.str(), err.str()};
}

void expect_contains(const std::string& text, std::initializer_list<std::string_view> parts) {
  for (std::string_view part : parts)
    EXPECT_NE(text.find(part), std::string::npos) << "text: " << text << "\nlacks: " << part;
}

std::string source_file(const char* relative) { return (kSourceDir / relative).string(); }

// main() refuses an address-space limit that leaves less than kStartAddressSpaceBytes beyond what
// is mapped (the hang it prevents is run for real in reliability_clear_messages).
TEST(AddressSpace, ALimitWithoutRoomToStartIsNamedWithTheNumbers) {
  const std::int64_t mib = std::int64_t{1} << 20;
  EXPECT_FALSE(address_space_problem(std::nullopt, 4000 * mib));                          // unlimited
  EXPECT_FALSE(address_space_problem(1600 * mib, 1000 * mib));                            // 600 MiB of room
  EXPECT_FALSE(address_space_problem(1000 * mib + kStartAddressSpaceBytes, 1000 * mib));  // exactly enough
  const auto problem = address_space_problem(1200 * mib, 1000 * mib);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("the address-space limit (ulimit -v) is 1.17 GiB"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("maps 1000.00 MiB at start-up"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("ulimit -v unlimited"), std::string::npos) << *problem;
  EXPECT_TRUE(address_space_problem(900 * mib, 1000 * mib));  // already over the limit
}

// std::thread reports a thread it cannot start as EAGAIN; the user reads what to change.
TEST(CliErrors, AThreadThatCannotStartIsNotAnInternalError) {
  const std::system_error error(std::make_error_code(std::errc::resource_unavailable_try_again), "thread");
  const std::string message = failure_message(error);
  EXPECT_EQ(message.find("internal error"), std::string::npos) << message;
  EXPECT_NE(message.find("could not start a thread"), std::string::npos) << message;
  EXPECT_NE(message.find("ulimit -v"), std::string::npos) << message;
}

TEST(CliHelp, ListsTheSubcommands) {
  for (const char* flag : {"--help", "-h"}) {
    CliResult result = run({flag});
    EXPECT_EQ(result.status, kExitSuccess);
    expect_contains(result.out, {"Usage: zerotrain COMMAND", "Commands:", "config",
                                 "Print the resolved experiment config", "--version"});
    EXPECT_EQ(result.err, "");
  }
}

TEST(CliHelp, NoArgumentsShowsTheHelpAsAUsageError) {
  CliResult result = run({});
  EXPECT_EQ(result.status, kExitUsage);
  expect_contains(result.err, {"Commands:", "config"});
}

TEST(CliHelp, Version) {
  CliResult result = run({"--version"});
  EXPECT_EQ(result.status, kExitSuccess);
  EXPECT_TRUE(result.out.starts_with("zerotrain ")) << result.out;
}

TEST(CliHelp, SubcommandHelpDescribesEveryOption) {
  CliResult result = run({"config", "--help"});
  EXPECT_EQ(result.status, kExitSuccess);
  expect_contains(result.out, {"Usage: zerotrain config --config FILE", "--config", "--deepspeed", "--set",
                               "--reference", "--help", "experiment config (YAML; a .json file is read as a"});
}

TEST(CliErrors, UnknownCommandSuggestsAnExistingOne) {
  CliResult result = run({"confg", "--config", "x.yaml"});
  EXPECT_EQ(result.status, kExitUsage);
  EXPECT_EQ(result.err, "zerotrain: unknown command 'confg'; did you mean 'config'?\n");
  CliResult far = run({"frobnicate"});
  EXPECT_EQ(far.status, kExitUsage);
  EXPECT_EQ(far.err, "zerotrain: unknown command 'frobnicate' (see 'zerotrain --help')\n");
}

TEST(CliErrors, UnknownOptionNamesItAndSuggests) {
  CliResult result = run({"config", "--confg", "x.yaml"});
  EXPECT_EQ(result.status, kExitUsage);
  EXPECT_EQ(result.err,
            "zerotrain config: unknown option '--confg'; did you mean '--config'? (see 'zerotrain config --help')\n");
  CliResult top = run({"--verbose"});
  EXPECT_EQ(top.status, kExitUsage);
  expect_contains(top.err, {"unknown option '--verbose'"});
}

TEST(CliErrors, AbbreviatedOptionsAreNotGuessed) {
  CliResult result = run({"config", "--conf", source_file("configs/default.yaml")});
  EXPECT_EQ(result.status, kExitUsage);
  expect_contains(result.err, {"unknown option '--conf'; did you mean '--config'?"});
}

TEST(CliErrors, MissingRequiredOptionOrValue) {
  CliResult missing = run({"config"});
  EXPECT_EQ(missing.status, kExitUsage);
  EXPECT_EQ(missing.err, "zerotrain config: the option '--config' is required (or --reference)\n");
  CliResult no_value = run({"config", "--config"});
  EXPECT_EQ(no_value.status, kExitUsage);
  expect_contains(no_value.err, {"zerotrain config:", "'--config'", "missing"});
}

TEST(CliErrors, UnexpectedArgument) {
  CliResult result = run({"config", "--config", source_file("configs/default.yaml"), "extra"});
  EXPECT_EQ(result.status, kExitUsage);
  expect_contains(result.err, {"zerotrain config: unexpected argument"});
}

TEST(CliErrors, ConflictingOptions) {
  CliResult result = run({"config", "--reference", "--set", "train.steps=3"});
  EXPECT_EQ(result.status, kExitUsage);
  EXPECT_EQ(result.err, "zerotrain config: --reference takes no --config or --set\n");
}

TEST(CliConfig, PrintsTheResolvedConfig) {
  const std::string file = source_file("configs/default.yaml");
  CliResult result = run({"config", "--config", file});
  EXPECT_EQ(result.status, kExitSuccess) << result.err;
  EXPECT_EQ(result.err, "");
  expect_contains(result.out, {"zero_optimization:\n  stage: 2\n", "  steps: 200\n"});
  EXPECT_EQ(parse_config(result.out, "printed"), load_config(file));
}

TEST(CliConfig, AppliesEverySetInOrder) {
  CliResult result = run({"config", "-c", source_file("configs/default.yaml"), "--set", "zero_optimization.stage=3",
                          "--set", "train.steps=7", "--set", "train.steps=9"});
  EXPECT_EQ(result.status, kExitSuccess) << result.err;
  Config config = parse_config(result.out, "printed");
  EXPECT_EQ(config.zero_optimization.stage, 3);
  EXPECT_EQ(config.train.steps, 9);
}

TEST(CliPlan, PlansTheLlamaConfigsAtEveryStage) {
  CliResult smollm = run({"plan", "--config", source_file("configs/smollm-135m.yaml"), "-n", "8", "--device", "cuda"});
  EXPECT_EQ(smollm.status, kExitSuccess) << smollm.err;
  expect_contains(smollm.out, {"Per-rank memory of llama (134515008 parameters) on 8 rank(s), micro batch 16 x 2048, "
                               "compute bf16"});
  for (const char* stage : {"\n    0  ", "\n    1  ", "\n    2  ", "\n    3  "}) expect_contains(smollm.out, {stage});
  CliResult tiny = run({"plan", "--config", source_file("configs/llama-tiny.yaml"), "-n", "2"});
  EXPECT_EQ(tiny.status, kExitSuccess) << tiny.err;
  expect_contains(tiny.out, {"llama (771200 parameters) on 2 rank(s), micro batch 4 x 128, compute f32"});
  CliResult big = run({"plan", "--config", source_file("configs/smollm-135m.yaml"), "--set", "model.preset=llama-3.2-1b",
                       "--set", "data.seq_len=4096", "-n", "16", "--device", "cuda"});
  EXPECT_EQ(big.status, kExitSuccess) << big.err;
  expect_contains(big.out, {"llama (1235814400 parameters) on 16 rank(s)"});
}

// The rows of `plan --predict`'s table: stage -> {buckets, T_compute, T_comm, exposed, step, no-overlap step}.
std::vector<std::vector<double>> predicted_rows(const std::string& out) {
  std::vector<std::vector<double>> rows;
  std::istringstream lines(out.substr(out.find("stage  buckets  T_compute ms")));
  std::string line;
  std::getline(lines, line);
  for (int stage = 0; stage <= 3 && std::getline(lines, line); ++stage) {
    std::istringstream fields(line);
    int printed_stage = -1;
    std::vector<double> row(6);
    fields >> printed_stage;
    for (double& value : row) fields >> value;
    EXPECT_EQ(printed_stage, stage) << line;
    rows.push_back(row);
  }
  return rows;
}

TEST(CliPlanPredict, OneRankIsComputeOnlyAtTheGivenRate) {
  CliResult result = run({"plan", "--config", source_file("configs/default.yaml"), "--predict", "--flops-per-s", "1e9"});
  EXPECT_EQ(result.status, kExitSuccess) << result.err;
  // configs/default.yaml: GPT-2 2 x 64, vocabulary 256, micro batch 4 x 64.
  const double flops = models::flops::gpt2_step(2, 64, 256, 4, 64);
  expect_contains(result.out, {"Predicted step time of gpt2 on 1 rank(s), micro batch 4 x 64, 1 micro batch(es)",
                               fmt::format("FLOPs per step and rank: {:.4e}", flops),
                               "compute rate: 1.00 GFLOP/s per rank (given: --flops-per-s)",
                               "link: none needed on one rank"});
  const auto rows = predicted_rows(result.out);
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    EXPECT_NEAR(row[1], flops / 1e9 * 1e3, 0.05);
    EXPECT_EQ(row[2], 0.0);
    EXPECT_EQ(row[3], 0.0);
    EXPECT_EQ(row[4], row[1]);
    EXPECT_EQ(row[5], row[1]);
  }
}

// The tied embedding's gradient dense (zero/lookup_rows.h): every gradient element is reduced once.
TEST(CliPlanPredict, TwoRanksMoveTheRingVolumesOverTheGivenLink) {
  CliResult result = run({"plan", "--config", source_file("configs/default.yaml"), "-n", "2", "--predict",
                          "--flops-per-s", "1e9", "--link-gbps", "0.8", "--set", "train.gradient_accumulation_steps=2",
                          "--set", "zero_optimization.embedding_gradient=dense"});
  EXPECT_EQ(result.status, kExitSuccess) << result.err;
  expect_contains(result.out, {"on 2 rank(s), micro batch 4 x 64, 2 micro batch(es) per step",
                               "link: 0.800 Gbit/s = 100.0 MB/s per rank and direction (given: --link-gbps), latency "
                               "0.0 us (not given: taken as 0)",
                               "communication f32, parameters f32, reduce_bucket_size 25000 elements"});
  const auto rows = predicted_rows(result.out);
  ASSERT_EQ(rows.size(), 4u);
  // 120,576 fp32 parameters = 482,304 bytes at 1e8 B/s: all-reduce 2·(1/2) of them = 4.82 ms;
  // reduce-scatter and all-gather (1/2) each = 2.41 ms, of the blocks padded to 120,704 on 2 ranks
  // (chunks of whole 64-element units), 2.414 ms.
  const double padded_ms = 120704.0 * 4 / 2 / 1e8 * 1e3;
  const double flops = 2 * models::flops::gpt2_step(2, 64, 256, 4, 64);
  for (const auto& row : rows) EXPECT_NEAR(row[1], flops / 1e9 * 1e3, 0.05);
  EXPECT_NEAR(rows[0][2], 4.8, 1e-9);
  EXPECT_NEAR(rows[1][2], padded_ms + padded_ms, 0.11);
  EXPECT_NEAR(rows[2][2], 2 * padded_ms + padded_ms, 0.11);  // reduced after each micro batch, gathered once
  // Gathered in the forward of both micro batches: the prefetch budget (1.5e7 elements) holds this
  // small model's every block from forward into backward (each is below the persistence threshold
  // too), so backward gathers nothing.
  EXPECT_NEAR(rows[3][2], 2 * padded_ms + 2 * padded_ms, 0.11);
  // Without overlap the reductions follow backward; the parameter gathers (stages 1-3) still run
  // ahead of the blocks that need them, so the step lies between T_compute + the reductions and
  // T_compute + T_comm, and is never shorter than with overlap.
  const double reductions[] = {4.8, padded_ms, 2 * padded_ms, 2 * padded_ms};
  for (std::size_t stage = 0; stage < rows.size(); ++stage) {
    const auto& row = rows[stage];
    EXPECT_GT(row[3], 0.0);
    EXPECT_LT(row[3], row[2]);  // backward hides some of it
    EXPECT_NEAR(row[4], row[1] + row[3], 0.11);
    EXPECT_GE(row[5], row[1] + reductions[stage] - 0.11);
    EXPECT_LE(row[5], row[1] + row[2] + 0.11);
    EXPECT_GE(row[5], row[4] - 0.11);
  }
  EXPECT_NEAR(rows[0][5], rows[0][1] + rows[0][2], 0.11);  // stage 0 has no gathers
  // Without a prefetch budget, and with no block persistent (this small model's every block is
  // below the default threshold), backward gathers again, in both micro batches, every block but
  // the embedding (it reads no parameter; its 20,480 elements take 0.41 ms) and the head, still
  // there from the forward (its LayerNorm is too small to show).
  CliResult unheld = run({"plan", "--config", source_file("configs/default.yaml"), "-n", "2", "--predict",
                          "--flops-per-s", "1e9", "--link-gbps", "0.8", "--set", "train.gradient_accumulation_steps=2",
                          "--set", "zero_optimization.embedding_gradient=dense", "--set",
                          "zero_optimization.stage3_prefetch_bucket_size=0", "--set",
                          "zero_optimization.stage3_param_persistence_threshold=0"});
  EXPECT_EQ(unheld.status, kExitSuccess) << unheld.err;
  const auto unheld_rows = predicted_rows(unheld.out);
  ASSERT_EQ(unheld_rows.size(), 4u);
  EXPECT_NEAR(unheld_rows[3][2], 2 * padded_ms + 2 * (2 * padded_ms - 0.41), 0.11);
  // Latency adds (N-1)·α per reduce-scatter or all-gather and 2(N-1)·α per all-reduce.
  CliResult slow = run({"plan", "--config", source_file("configs/default.yaml"), "-n", "2", "--predict",
                        "--flops-per-s", "1e9", "--link-gbps", "0.8", "--link-latency-us", "1000", "--set",
                        "zero_optimization.embedding_gradient=dense"});
  EXPECT_EQ(slow.status, kExitSuccess) << slow.err;
  expect_contains(slow.out, {"latency 1000.0 us (given: --link-latency-us)"});
  const auto slow_rows = predicted_rows(slow.out);
  ASSERT_EQ(slow_rows.size(), 4u);
  const double buckets = slow_rows[0][0];
  EXPECT_NEAR(slow_rows[0][2], 4.8 + 2 * buckets + 2, 0.11);  // + the statistics all-reduce's 2·α
}

// Ranks per host: a ring inside one host runs at the intra-host link; one that crosses hosts steps
// at the slower of the two links (the inter-host one here, 20 times slower).
TEST(CliPlanPredict, RingsInsideAHostRunAtItsLinkAndRingsAcrossHostsAtTheSlowerOne) {
  const std::string config = source_file("configs/default.yaml");
  auto comm_ms = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"plan", "--config", config, "--predict", "--flops-per-s", "1e9",
                                     "--set", "zero_optimization.embedding_gradient=dense"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult result = run(args);
    EXPECT_EQ(result.status, kExitSuccess) << result.err;
    const auto rows = predicted_rows(result.out);
    return rows.size() == 4 ? rows[0][2] : -1.0;  // stage 0's T_comm
  };
  // 2 ranks on one host: the intra-host link alone (no --link-gbps needed); 1.6 Gbit/s is twice
  // 0.8, so the all-reduce takes half of the 4.82 ms above (the table shows tenths of a ms).
  EXPECT_NEAR(comm_ms({"-n", "2", "--ranks-per-host", "2", "--intra-host-gbps", "1.6"}), 4.82 / 2, 0.06);
  // 4 ranks on 2 hosts: every ring step waits for the 0.8 Gbit/s link between the hosts, as if
  // every rank were on its own host.
  const double across = comm_ms({"-n", "4", "--ranks-per-host", "2", "--link-gbps", "0.8", "--intra-host-gbps", "16"});
  EXPECT_NEAR(across, comm_ms({"-n", "4", "--link-gbps", "0.8"}), 1e-9);
  EXPECT_GT(across, 10 * comm_ms({"-n", "4", "--link-gbps", "16"}));
  // An intra-host link slower than the one between hosts bounds the crossing ring instead.
  EXPECT_NEAR(comm_ms({"-n", "4", "--ranks-per-host", "2", "--link-gbps", "16", "--intra-host-gbps", "0.8"}), across,
              1e-9);
  CliResult shown = run({"plan", "--config", config, "--predict", "--flops-per-s", "1e9", "-n", "4", "--ranks-per-host",
                         "2", "--link-gbps", "0.8", "--intra-host-gbps", "16"});
  expect_contains(shown.out, {"hosts: 2 rank(s) per host, 2 host(s); between ranks of a host 16.000 Gbit/s, latency "
                              "0.0 us; rings cross hosts and step at the slower link"});
}

// zero_hpz_partition_size 2 with 2 ranks per host: stage 3's backward gathers run inside the host,
// so its T_comm falls toward stage 2's; a group size that does not divide the ranks is refused.
TEST(CliPlanPredict, AStageThreeSecondaryPartitionGathersInsideTheHost) {
  const std::string config = source_file("configs/default.yaml");
  auto stage_comm_ms = [&](const std::string& hpz) {
    CliResult result = run({"plan", "--config", config, "--predict", "--flops-per-s", "1e9", "-n", "4",
                            "--ranks-per-host", "2", "--link-gbps", "0.8", "--intra-host-gbps", "80", "--set",
                            "zero_optimization.zero_hpz_partition_size=" + hpz,
                            // No prefetch and no persistent block: backward gathers every layer again
                            // (a budget or the persistence threshold would hold them).
                            "--set", "zero_optimization.stage3_prefetch_bucket_size=0", "--set",
                            "zero_optimization.stage3_param_persistence_threshold=0"});
    EXPECT_EQ(result.status, kExitSuccess) << result.err;
    const auto rows = predicted_rows(result.out);
    return rows.size() == 4 ? std::pair{rows[2][2], rows[3][2]} : std::pair{-1.0, -1.0};
  };
  const auto [stage2, stage3] = stage_comm_ms("1");
  const auto [stage2_again, stage3_grouped] = stage_comm_ms("2");
  EXPECT_EQ(stage2_again, stage2) << "stages below 3 have no secondary partition";
  EXPECT_GT(stage3, 1.3 * stage2) << "plain stage 3 gathers each layer again over the hosts' link";
  EXPECT_LT(stage3_grouped, 1.1 * stage2) << "backward's gathers inside the host at 100 times the rate";
  CliResult odd = run({"plan", "--config", config, "-n", "3", "--set", "zero_optimization.zero_hpz_partition_size=2"});
  EXPECT_EQ(odd.status, kExitFailure);
  expect_contains(odd.err, {"zero_optimization.zero_hpz_partition_size 2 does not divide the 3 ranks"});
}

TEST(CliPlanPredict, MeasuresTheComputeRateWhenNotGiven) {
  CliResult result = run({"plan", "--config", source_file("configs/default.yaml"), "--predict"});
  EXPECT_EQ(result.status, kExitSuccess) << result.err;
  expect_contains(result.out, {"(measured: forward + backward of", "one-layer copy of the model"});
  const auto rows = predicted_rows(result.out);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_GT(rows[0][1], 0.0);
}

TEST(CliPlanPredict, BadValuesAreUsageErrorsBeforeAnythingIsPrinted) {
  const std::string config = source_file("configs/default.yaml");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--predict", "--flops-per-s", "0"}, "--flops-per-s must be a positive number, got 0"},
      {{"--predict", "--flops-per-s=-5"}, "--flops-per-s must be a positive number, got -5"},
      {{"--predict", "--flops-per-s", "nan"}, "--flops-per-s must be a positive number, got nan"},
      {{"--predict", "-n", "2", "--link-gbps", "0"}, "--link-gbps must be a positive number, got 0"},
      {{"--predict", "-n", "2", "--link-gbps", "1", "--link-latency-us=-3"},
       "--link-latency-us must be zero or positive, got -3"},
      {{"--predict", "-n", "2", "--flops-per-s", "1e9"},
       "--predict on 2 ranks needs --link-gbps: measuring the link needs ranks"},
      {{"--predict", "--device", "cuda", "--set", "precision.dtype=bf16"},
       "--predict for --device cuda needs --flops-per-s: the compute rate can be measured on this machine's CPU only"},
      {{"--link-gbps", "1"}, "--link-gbps is used with --predict only"},
      {{"--ranks-per-host", "2"}, "--ranks-per-host is used with --predict only"},
      {{"--predict", "-n", "2", "--link-gbps", "1", "--ranks-per-host", "0"}, "--ranks-per-host must be at least 1, got 0"},
      {{"--predict", "-n", "2", "--link-gbps", "1", "--intra-host-gbps", "8"},
       "--intra-host-gbps and --intra-host-latency-us describe the link between ranks of one host: give "
       "--ranks-per-host too"},
      {{"--predict", "-n", "4", "--ranks-per-host", "2", "--intra-host-gbps", "8", "--flops-per-s", "1e9"},
       "--predict on 4 ranks needs --link-gbps"},
      {{"--predict", "-n", "2", "--ranks-per-host", "2", "--intra-host-gbps", "1", "--intra-host-latency-us=-1"},
       "--intra-host-latency-us must be zero or positive, got -1"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = {"plan", "--config", config};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult result = run(args);
    SCOPED_TRACE(message);
    EXPECT_EQ(result.status, kExitUsage);
    EXPECT_EQ(result.out, "");
    expect_contains(result.err, {"zerotrain plan: " + message});
  }
}

TEST(CliNumericOptions, OutOfRangeNanAndWrappingValuesAreUsageErrorsNamingTheRange) {
  // Checked before any file is read: the checkpoint named here does not exist.
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"sample", "--checkpoint", "none", "--prompt", "a", "--temperature", "nan"},
       "--temperature nan: expected a number in 0..1000000"},
      {{"sample", "--checkpoint", "none", "--prompt", "a", "--temperature", "inf"},
       "--temperature inf: expected a number in 0..1000000"},
      {{"sample", "--checkpoint", "none", "--prompt", "a", "--top-k=-1"}, "--top-k -1: expected an integer in 0..1073741824"},
      {{"sample", "--checkpoint", "none", "--prompt", "a", "--max-new-tokens", "0"},
       "--max-new-tokens 0: expected an integer in 1..1048576"},
      {{"eval", "--checkpoint", "none", "--batch-size", "4294967297"},
       "--batch-size 4294967297: expected an integer in 0..1048576"},
      {{"eval", "--checkpoint", "none", "--batches=-1"}, "--batches -1: expected an integer in 0..1099511627776"},
      {{"plan", "--config", source_file("configs/default.yaml"), "--world-size", "0"},
       "--world-size 0: expected an integer in 1..1048576"},
      {{"bench-gemm", "--seconds", "nan"}, "--seconds nan: expected a number in 0..3600"},
  };
  for (const auto& [args, message] : cases) {
    CliResult result = run(args);
    SCOPED_TRACE(message);
    EXPECT_EQ(result.status, kExitUsage);
    expect_contains(result.err, {message});
  }
}

TEST(CliConfig, PrintsTheReference) {
  CliResult result = run({"config", "--reference"});
  EXPECT_EQ(result.status, kExitSuccess);
  EXPECT_EQ(result.out, config_reference_markdown());
}

TEST(CliConfig, BadConfigExitsOneWithTheMessage) {
  const std::string file = source_file("tests/runtime/config/data/config_bad_value.yaml");
  CliResult result = run({"config", "--config", file});
  EXPECT_EQ(result.status, kExitFailure);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "zerotrain config: " + file +
                            ":4:12: bad value for 'model.n_layer': expected an integer in 1..1024, found 'twelve'\n");
}

TEST(CliConfig, TypoInConfigExitsOneWithTheSuggestion) {
  const std::string file = source_file("tests/runtime/config/data/config_typo.yaml");
  CliResult result = run({"config", "--config", file});
  EXPECT_EQ(result.status, kExitFailure);
  expect_contains(result.err, {file + ":6:3: unknown key 'zero_optimization.reduce_bucket_siz'; did you mean "
                                      "'zero_optimization.reduce_bucket_size'?"});
}

TEST(CliConfig, BadSetAndMissingFileExitOne) {
  CliResult bad_set = run({"config", "-c", source_file("configs/default.yaml"), "--set", "model.n_layr=4"});
  EXPECT_EQ(bad_set.status, kExitFailure);
  EXPECT_EQ(bad_set.err,
            "zerotrain config: --set model.n_layr=4: unknown key 'model.n_layr'; did you mean 'model.n_layer'?\n");
  CliResult missing = run({"config", "-c", "/nonexistent.yaml"});
  EXPECT_EQ(missing.status, kExitFailure);
  EXPECT_EQ(missing.err, "zerotrain config: cannot read config file '/nonexistent.yaml': No such file or directory\n");
}

TEST(CliMain, ArgvEntryPointSkipsTheProgramName) {
  const char* argv[] = {"zerotrain", "--version"};
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(2, argv, out, err), kExitSuccess);
  EXPECT_TRUE(out.str().starts_with("zerotrain ")) << out.str();
}

}  // namespace
}  // namespace zt::cli
