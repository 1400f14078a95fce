// Turns a hung collective into an error instead of a job that hangs forever.
//
// A blocking MPI call (or a NCCL kernel) whose peers never arrive cannot be interrupted, so the
// watchdog does not try: its own thread notices a Work that has been running longer than the
// timeout, logs one line saying which collective, on which rank, for how long and what usually
// causes it, and ends the process with kCommTimeoutExitCode. The launcher (mpirun, srun) then
// takes the job down; peers that are stuck in the same collective time out on their own.
//
// The watchdog also keeps the communicator's flight recorder (flight_recorder.h): its timeout line
// lists this rank's last collectives and, when the ranks publish their records into a shared
// directory, which ranks never reached the collective and what they did last. The first rank's
// verdict stands (verdict.txt in that directory): the records stay as they were then.
//
// While the job stops on a signal (core/stop_signal.h), a peer that is gone is not waited for until
// the timeout: a rank killed under srun --kill-on-bad-exit makes Slurm send the others SIGTERM,
// and they would otherwise wait on the dead rank until Slurm's KillWait ends them. Records are
// rewritten every second by a live rank's watchdog, whatever its main thread does (a long
// checkpoint write included); a collective still waiting while a peer's record has not changed for
// kPeerSilentWhileStopping ends the rank then. Only while stopping: a shared file system that
// stalls for a few seconds must not end a healthy run.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/flight_recorder.h"
#include "comm/work.h"

namespace zt {

// How long a peer's record may stand still, while the job stops and a collective waits, before the
// peer counts as gone: ten missed heartbeats (a peer's heartbeat may queue behind its final
// checkpoint's writes on a shared file system), still well below Slurm's default KillWait (30 s).
inline constexpr std::chrono::seconds kPeerSilentWhileStopping{10};

class Watchdog {
 public:
  // Called on the watchdog thread with the error line, once per overdue collective.
  using TimeoutHandler = std::function<void(const std::string& message)>;

  // thread_setup runs first on the watchdog's thread: a GPU communicator makes its device current
  // there, or the thread's first CUDA call would create a context on GPU 0.
  explicit Watchdog(std::chrono::milliseconds timeout, TimeoutHandler handler = log_and_exit,
                    FlightRecordFiles record_files = {}, std::function<void()> thread_setup = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void track(std::shared_ptr<detail::WorkState> work);
  // Polled with the pending collectives: a non-empty answer (an asynchronous NCCL error: a peer
  // died) goes to the handler at once, within a poll interval rather than at the timeout.
  void set_health_check(std::function<std::string()> check);
  std::chrono::milliseconds timeout() const { return timeout_; }

  // The default handler: logs the message as an error and exits with kCommTimeoutExitCode
  // without running destructors (they would block on the very collective that hangs).
  [[noreturn]] static void log_and_exit(const std::string& message);
  static std::string timeout_message(const detail::WorkState& work, std::chrono::milliseconds elapsed,
                                     std::chrono::milliseconds timeout);

 private:
  void loop();
  // Rewrites this rank's record file when the record changed or a second passed (a heartbeat).
  void publish_record(std::chrono::steady_clock::time_point now);
  // This rank's last collectives and, with record files, what the other ranks were doing.
  std::string flight_report(const detail::WorkState& work);
  // The first verdict stands: the rank that gives one writes it to verdict.txt beside the records;
  // from then on no watchdog rewrites its record, and another rank that times out (a frozen rank
  // the launcher resumes during teardown) ends pointing at the verdict instead of giving its own.
  std::filesystem::path verdict_file() const;
  bool verdict_given() const;
  void mark_verdict(const std::string& message);
  void give_verdict(const std::string& message);
  // While a stop signal is pending: the verdict when a peer's record stood still for
  // kPeerSilentWhileStopping while `waiting` waits, or "".
  // `stalled`: this rank itself stalled since the last look (stopped, or its own write was slow).
  std::string gone_peer(const detail::WorkState& waiting, std::chrono::steady_clock::time_point now, bool stalled);

  const std::chrono::milliseconds timeout_;
  const TimeoutHandler handler_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<std::shared_ptr<detail::WorkState>> pending_;
  std::function<std::string()> health_check_;
  bool unhealthy_reported_ = false;
  FlightRecorder recorder_;
  FlightRecordFiles record_files_;  // dir cleared after a failed write: the watchdog thread alone uses it
  std::string published_;  // the entries last written, to rewrite only on change or as a heartbeat
  std::chrono::steady_clock::time_point published_at_{};
  // Per peer, while stopping: its record's time as last read, and when this rank saw it change.
  std::vector<std::int64_t> peer_written_ms_;
  std::vector<std::chrono::steady_clock::time_point> peer_changed_at_;
  std::chrono::steady_clock::time_point peers_read_at_{};
  // When this watchdog started (wall clock, as records are stamped): older records are an earlier
  // attempt's and say nothing about this job's peers.
  const std::int64_t started_ms_ = unix_ms_now();
  std::thread thread_;
};

}  // namespace zt
