#include "runtime/cli/address_space.h"

#include <sys/resource.h>

#include <fmt/format.h>

#include <fstream>
#include <string>

#include "core/memory.h"

namespace zt::cli {

std::optional<std::string> address_space_problem(std::optional<std::int64_t> limit_bytes, std::int64_t mapped_bytes) {
  if (!limit_bytes || *limit_bytes - mapped_bytes >= kStartAddressSpaceBytes) return std::nullopt;
  return fmt::format(
      "the address-space limit (ulimit -v) is {} and this process maps {} at start-up (its libraries): zerotrain "
      "needs at least {} more to start its threads and buffers; raise the limit (ulimit -v) or lift it "
      "(ulimit -v unlimited)",
      format_bytes(*limit_bytes), format_bytes(mapped_bytes), format_bytes(kStartAddressSpaceBytes));
}

std::optional<std::string> address_space_problem_here() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  std::ifstream status("/proc/self/status");
  std::int64_t mapped_kib = -1;
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmSize:")) mapped_kib = std::stoll(line.substr(7));
  if (mapped_kib < 0) return std::nullopt;
  return address_space_problem(static_cast<std::int64_t>(limit.rlim_cur), mapped_kib * 1024);
}

}  // namespace zt::cli
