// Options of a communicator. The YAML config's `comm:` section is CommSettings, one field per key in
// the units the config spells (runtime/config binds them), so comm/ does not depend on the config
// code.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace zt {

// auto_select: NCCL for GPU buffers, MPI for CPU buffers; GPU buffers fall back to MPI with
// host staging when this host has more ranks than GPUs (NCCL refuses two ranks on one GPU).
enum class CommBackend { auto_select, mpi, nccl };

// "auto", "mpi", "nccl"; throws zt::UserError naming the accepted values otherwise.
CommBackend parse_comm_backend(std::string_view name);
std::string_view comm_backend_name(CommBackend backend);

// Measured (bench/results/comm_poll_sweep_*.md: model small, stage 2, 2 simulated hosts, one core
// per rank): spinning made the comm thread use 22-49 % of the step's CPU; 100 us cut that to 7-11 %
// and the step by 3 % at 800 Mbit/s (where the link bounds the step) and by 18 % at 4 Gbit/s, while
// 1 ms slowed the 800 Mbit/s transfers (comm_ms +17 %) and the step. Shorter sleeps (10-20 us) cost
// more CPU for no gain: the kernel's timer slack (50 us) lengthens every sleep anyway.
inline constexpr int kDefaultPollIntervalUs = 100;

// The longest timeout honoured (about 31 years): the watchdog compares it with steady_clock
// durations in int64 nanoseconds, which overflow beyond about 292 years.
inline constexpr std::chrono::milliseconds kMaxCommTimeout{1'000'000'000'000};

// `seconds` (a config or command-line value) as a timeout, saturated to [1 ms, kMaxCommTimeout]:
// converting a double beyond the range of the integer type is undefined, and a huge value that
// wrapped around would fail a healthy job at its first collective. NaN gives 1 ms.
std::chrono::milliseconds comm_timeout_from_seconds(double seconds);

// The user's settings, as the config spells them; the initialisers are the keys' defaults.
struct CommSettings {
  CommBackend backend = CommBackend::auto_select;
  // A collective that has not completed this long after it started running on the comm stream
  // makes the watchdog log what it was and end the process with kCommTimeoutExitCode.
  double timeout_s = 300;
  // Before every collective, ranks compare (kind, op, dtype, count, root, sequence) with one
  // small all-gather and fail with both sides' descriptions when they differ. Costs a latency-bound
  // round trip per collective, hence off by default.
  bool debug_check = false;
  // MPI backend: how long the comm thread sleeps between two MPI_Test calls on a running
  // collective while no thread waits for one (mpi_progress.h); 0 tests back to back, i.e. spins
  // like a blocking MPI call. The default (kDefaultPollIntervalUs) is long enough that a waiting
  // comm thread costs its rank's compute thread little CPU, short enough that a transfer, which
  // Open MPI progresses only inside MPI calls, is barely slowed.
  std::int64_t poll_interval_us = kDefaultPollIntervalUs;
  // With several hosts of several ranks each, placed host by host: the engine's all-gathers cross
  // the hosts' links once (comm/two_level_all_gather.h), moving (hosts-1)/hosts of the output over
  // each host's link instead of a flat ring's (ranks-1)/ranks. Copies only: results are the same.
  bool two_level_all_gather = true;

  std::chrono::milliseconds timeout() const { return comm_timeout_from_seconds(timeout_s); }
  std::chrono::microseconds poll_interval() const { return std::chrono::microseconds(poll_interval_us); }
  bool operator==(const CommSettings&) const = default;
};

struct CommOptions : CommSettings {
  // Name used in log lines and errors ("world", "dp", ...).
  std::string name = "world";
  // A directory all ranks can read (the run directory) where each rank's watchdog publishes its
  // flight record (flight_recorder.h), so that a timeout names the ranks that never reached the
  // collective; empty: records stay in memory and a timeout lists this rank's only.
  std::string flight_record_dir{};
  bool operator==(const CommOptions&) const = default;
};

// Exit status of a process ended by the comm watchdog.
inline constexpr int kCommTimeoutExitCode = 3;

}  // namespace zt
