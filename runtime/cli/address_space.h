// The address-space limit (`ulimit -v`, RLIMIT_AS) at start-up. OpenBLAS starts its worker threads
// when the library loads, and each maps a 128 MiB buffer; under a limit that leaves no room for
// them, a worker retries its allocation forever and MPI's start-up (which forks, and so joins
// OpenBLAS's threads) waits on it: the process hangs before it can say anything. main() checks
// first and leaves at once with the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace zt::cli {

// Address space a run needs beyond what the process maps when main() starts: threads' stacks,
// OpenBLAS's buffers, MPI's and the allocator's first arenas. Under this the run cannot start.
inline constexpr std::int64_t kStartAddressSpaceBytes = std::int64_t{512} << 20;

// What is wrong with a limit of `limit_bytes` (nothing: no limit) when `mapped_bytes` are
// already mapped; nothing when the limit leaves kStartAddressSpaceBytes or more.
std::optional<std::string> address_space_problem(std::optional<std::int64_t> limit_bytes, std::int64_t mapped_bytes);

// The same for this process: getrlimit(RLIMIT_AS) and VmSize in /proc/self/status.
std::optional<std::string> address_space_problem_here();

}  // namespace zt::cli
