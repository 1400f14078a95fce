// The device rule of train.device (runtime/train/job_settings.h) and the settings the GPU kit
// passes: on a one-GPU machine every kit part starts 1 or 2 ranks, and each of its device settings
// must resolve there (checked here, on machines without a GPU, from the kit's own scripts).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/error.h"
#include "runtime/train/job_settings.h"

namespace zt {
namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(ZT_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in) << "cannot read " << relative;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every value given to train.device in a script, with $kit_device (run.sh's one GPU setting)
// replaced by its definition.
std::set<std::string> device_settings(const std::string& script) {
  std::smatch m;
  std::string kit_device;
  if (std::regex_search(script, m, std::regex(R"(\bkit_device=([A-Za-z0-9:]+))"))) kit_device = m[1];
  std::set<std::string> found;
  const std::regex setting(R"(train\.device=(\$\{?kit_device\}?|[A-Za-z0-9:]+))");
  for (auto it = std::sregex_iterator(script.begin(), script.end(), setting); it != std::sregex_iterator(); ++it) {
    std::string value = (*it)[1];
    if (value.starts_with("$")) {
      EXPECT_FALSE(kit_device.empty()) << "the script uses $kit_device but does not define it";
      value = kit_device;
    }
    found.insert(value);
  }
  return found;
}

void expect_resolves_on_one_gpu(const std::string& setting, int max_local_ranks, const std::string& where) {
  for (int local_size = 1; local_size <= max_local_ranks; ++local_size)
    for (int local_rank = 0; local_rank < local_size; ++local_rank) {
      try {
        EXPECT_EQ(resolve_device_setting(setting, local_rank, local_size, 1), Device::cuda(0))
            << where << ": train.device=" << setting << ", local rank " << local_rank << " of " << local_size;
      } catch (const UserError& e) {
        ADD_FAILURE() << where << ": train.device=" << setting << " on " << local_size
                      << " local rank(s) and 1 GPU is refused: " << e.what();
      }
    }
}

TEST(KitDevices, EveryGpuPartResolvesOnOneGpuForOneAndTwoRanks) {
  const std::set<std::string> run_sh = device_settings(read_source("tools/gpu-kit/run.sh"));
  EXPECT_GE(run_sh.size(), 1u) << "no train.device setting found in tools/gpu-kit/run.sh";
  for (const std::string& setting : run_sh) expect_resolves_on_one_gpu(setting, 2, "tools/gpu-kit/run.sh");
  // perf_gpu.py starts zerotrain without mpirun: one rank.
  const std::set<std::string> perf = device_settings(read_source("bench/perf_gpu.py"));
  EXPECT_GE(perf.size(), 1u) << "no train.device setting found in bench/perf_gpu.py";
  for (const std::string& setting : perf) expect_resolves_on_one_gpu(setting, 1, "bench/perf_gpu.py");
}

TEST(KitDevices, TheRuleItself) {
  // cuda: one GPU per local rank; more ranks than GPUs is refused, naming both counts.
  EXPECT_EQ(resolve_device_setting("cuda", 1, 2, 2), Device::cuda(1));
  try {
    resolve_device_setting("cuda", 0, 2, 1);
    ADD_FAILURE() << "two ranks on one GPU with train.device cuda were accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("runs 2 ranks and sees 1 GPU"), std::string::npos) << e.what();
  }
  // cuda:N: every rank of the node on GPU N, which must exist.
  EXPECT_EQ(resolve_device_setting("cuda:1", 3, 4, 2), Device::cuda(1));
  EXPECT_THROW(resolve_device_setting("cuda:1", 0, 1, 1), UserError);
  // auto: round-robin over the GPUs, the CPU without one.
  EXPECT_EQ(resolve_device_setting("auto", 3, 4, 2), Device::cuda(1));
  EXPECT_EQ(resolve_device_setting("auto", 1, 2, 0), Device::cpu());
  EXPECT_EQ(resolve_device_setting("cpu", 0, 8, 1), Device::cpu());
}

}  // namespace
}  // namespace zt
