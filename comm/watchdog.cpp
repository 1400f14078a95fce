#include "comm/watchdog.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "comm/comm_options.h"
#include "core/log.h"
#include "core/stop_signal.h"

namespace zt {

namespace {
// Often enough that a short test timeout fires promptly, rarely enough to cost nothing.
std::chrono::milliseconds poll_interval(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 10, std::chrono::milliseconds(10), std::chrono::milliseconds(200));
}
}  // namespace

Watchdog::Watchdog(std::chrono::milliseconds timeout, TimeoutHandler handler, FlightRecordFiles record_files,
                   std::function<void()> thread_setup)
    : timeout_(std::min(timeout, kMaxCommTimeout)),
      handler_(std::move(handler)),
      record_files_(std::move(record_files)),
      thread_([this, setup = std::move(thread_setup)] {
        if (setup) setup();
        loop();
      }) {}

void Watchdog::set_health_check(std::function<std::string()> check) {
  std::lock_guard lock(mutex_);
  health_check_ = std::move(check);
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::track(std::shared_ptr<detail::WorkState> work) {
  recorder_.record(work);
  std::lock_guard lock(mutex_);
  pending_.push_back(std::move(work));
}

void Watchdog::publish_record(std::chrono::steady_clock::time_point now) {
  if (record_files_.dir.empty()) return;
  std::vector<FlightEntry> entries = recorder_.entries();
  std::string summary = describe_entries(entries);
  if (summary == published_ && now - published_at_ < std::chrono::seconds(1)) return;
  const FlightRecord record{record_files_.rank, unix_ms_now(), std::move(entries)};
  const std::filesystem::path file = flight_record_file(record_files_.dir, record_files_.comm_name, record_files_.rank);
  const std::filesystem::path temporary = file.string() + ".tmp";
  // Written aside and renamed, so that a reader never sees half a record.
  // O_NOFOLLOW: a planted symlink must not redirect the write.
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  const std::string text = flight_record_text(record);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  std::error_code error;
  if (ok) std::filesystem::rename(temporary, file, error);
  if (!ok || error) {
    log::warn("comm: cannot write the flight record {} ({}); timeouts will not say what the other ranks did",
              file.string(), error ? error.message() : std::strerror(errno));
    // A record that stands still would make this rank look gone to a stopping peer: none at all
    // proves nothing (gone_peer).
    std::filesystem::remove(file, error);
    record_files_.dir.clear();  // once is enough
    return;
  }
  published_ = std::move(summary);
  published_at_ = now;
}

namespace {
std::vector<std::optional<FlightRecord>> read_records(const FlightRecordFiles& files) {
  std::vector<std::optional<FlightRecord>> records(static_cast<std::size_t>(files.world_size));
  for (int r = 0; r < files.world_size; ++r) {
    std::FILE* in = std::fopen(flight_record_file(files.dir, files.comm_name, r).c_str(), "r");
    if (in == nullptr) continue;
    std::string text(64 * 1024, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), in));
    std::fclose(in);
    records[static_cast<std::size_t>(r)] = parse_flight_record(text);
  }
  return records;
}
}  // namespace

std::string Watchdog::flight_report(const detail::WorkState& work) {
  std::string report = fmt::format("; this rank's last collectives on '{}': {}", work.comm_name,
                                    describe_entries(recorder_.entries()));
  if (record_files_.dir.empty()) return report;
  const std::vector<std::optional<FlightRecord>> records = read_records(record_files_);
  return report + "; " + describe_peers(work.desc.sequence, work.desc.str(), record_files_.rank, records, unix_ms_now()) +
         fmt::format(" (flight records in {})", record_files_.dir.string());
}

std::string Watchdog::timeout_message(const detail::WorkState& work, std::chrono::milliseconds elapsed,
                                      std::chrono::milliseconds timeout) {
  return fmt::format(
      "comm timeout: {} has not completed after {:.1f} s (comm.timeout {:.1f} s); a peer rank may have died or "
      "ranks issued different collectives (comm.debug_check compares them before each collective); ending this "
      "process with exit code {}",
      work.where(), elapsed.count() / 1000.0, timeout.count() / 1000.0, kCommTimeoutExitCode);
}

void Watchdog::log_and_exit(const std::string& message) {
  log::error("{}", message);
  std::fflush(nullptr);
  std::_Exit(kCommTimeoutExitCode);
}

std::filesystem::path Watchdog::verdict_file() const { return record_files_.dir / "verdict.txt"; }

bool Watchdog::verdict_given() const {
  std::error_code error;
  return !record_files_.dir.empty() && std::filesystem::exists(std::filesystem::symlink_status(verdict_file(), error));
}

// O_EXCL: of two ranks that time out together, one verdict is kept, the first.
void Watchdog::mark_verdict(const std::string& message) {
  if (record_files_.dir.empty()) return;
  const int fd = ::open(verdict_file().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string text = fmt::format("rank {}: {}\n", record_files_.rank, message);
  [[maybe_unused]] const ssize_t written = ::write(fd, text.data(), text.size());
  ::close(fd);
}

void Watchdog::give_verdict(const std::string& message) {
  if (verdict_given()) {
    // Another rank's verdict stands (this rank may be one the launcher resumed while tearing the
    // job down, whose own view would blame whoever it finds): end without a second one.
    handler_(fmt::format("comm: ending this rank too; the job's verdict is in {}", verdict_file().string()));
    return;
  }
  mark_verdict(message);
  handler_(message);
}

std::string Watchdog::gone_peer(const detail::WorkState& waiting, std::chrono::steady_clock::time_point now,
                                bool stalled) {
  const auto ranks = static_cast<std::size_t>(record_files_.world_size);
  // The first look, or this rank itself stalled (its own record's write was slow: the file system
  // stalls, and every record stands still; or the process was stopped): every peer gets the full
  // allowance from now.
  if (peer_changed_at_.size() != ranks || stalled) {
    peer_written_ms_.assign(ranks, -1);
    peer_changed_at_.assign(ranks, now);
    peers_read_at_ = now;
    return "";
  }
  // Once a second is enough for an allowance of seconds, and spares a shared file system.
  if (now - peers_read_at_ < std::chrono::seconds(1)) return "";
  peers_read_at_ = now;
  const std::vector<std::optional<FlightRecord>> records = read_records(record_files_);
  for (std::size_t r = 0; r < ranks; ++r) {
    // A record stamped before this rank started is an earlier attempt's, left in a run_dir local
    // to each node (after a requeue the rank may run elsewhere and never rewrite it): unseen.
    const std::int64_t written = records[r] && records[r]->written_ms >= started_ms_ ? records[r]->written_ms : -1;
    if (written != peer_written_ms_[r]) {
      peer_written_ms_[r] = written;
      peer_changed_at_[r] = now;
    }
    // A record never seen proves nothing (a peer whose writes failed stopped publishing).
    if (written < 0 || static_cast<int>(r) == record_files_.rank || now - peer_changed_at_[r] < kPeerSilentWhileStopping) continue;
    const double silent_s = std::chrono::duration<double>(now - peer_changed_at_[r]).count();
    return fmt::format(
        "comm: rank {} is gone: its flight record {} has not changed for {:.1f} s while the job stops on {} and {} "
        "waits on it; ending this rank now rather than waiting for the launcher to kill it (exit code {})",
        r, flight_record_file(record_files_.dir, record_files_.comm_name, static_cast<int>(r)).string(), silent_s,
        stop_signal_name(StopSignalHandler::received()), waiting.where(), kCommTimeoutExitCode);
  }
  return "";
}

void Watchdog::loop() {
  const auto interval = poll_interval(timeout_);
  // Time the process was not running (SIGSTOP, a suspended machine) is not time a collective
  // waited: a rank resumed after longer than the timeout must not time out the moment it wakes.
  const auto stopped_gap = interval + std::chrono::seconds(1);
  auto last_poll = std::chrono::steady_clock::now();
  auto resumed_at = std::chrono::steady_clock::time_point{};
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, interval, [&] { return stopping_; });
    const bool silenced = verdict_given();  // records stay as they were at the verdict
    if (stopping_) {
      // The record as the communicator ends: what a peer that still waits on it will read.
      lock.unlock();
      published_.clear();
      if (!silenced) publish_record(std::chrono::steady_clock::now());
      return;
    }
    std::vector<std::shared_ptr<detail::WorkState>> overdue;
    std::shared_ptr<detail::WorkState> waiting;  // the oldest collective still running
    auto now = std::chrono::steady_clock::now();
    const bool was_stopped = now - last_poll > stopped_gap;
    if (was_stopped) resumed_at = now;
    last_poll = now;
    std::erase_if(pending_, [&](const std::shared_ptr<detail::WorkState>& work) {
      bool completed = true;
      try {
        completed = work->done.query();
      } catch (...) {
        // A failed device query: the error is the Work's to report, not a hang.
      }
      if (completed) return true;
      if (!work->started()) return false;
      if (!waiting) waiting = work;
      if (now - std::max(work->started_at(), resumed_at) < timeout_) return false;
      overdue.push_back(work);
      return true;
    });
    std::string unhealthy;
    if (health_check_ && !unhealthy_reported_) {
      unhealthy = health_check_();
      unhealthy_reported_ = !unhealthy.empty();
    }
    // The handler may block or exit; never call it with the lock held.
    lock.unlock();
    if (!unhealthy.empty()) give_verdict(unhealthy);
    if (!silenced) publish_record(now);
    if (waiting && overdue.empty() && !silenced && !record_files_.dir.empty() && StopSignalHandler::received() != 0) {
      const auto after_publish = std::chrono::steady_clock::now();
      const bool stalled = was_stopped || after_publish - now > std::chrono::seconds(1);
      if (std::string gone = gone_peer(*waiting, after_publish, stalled); !gone.empty())
        give_verdict(gone + flight_report(*waiting));
    }
    for (const auto& work : overdue) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - work->started_at());
      give_verdict(timeout_message(*work, elapsed, timeout_) + flight_report(*work));
    }
    lock.lock();
  }
}

}  // namespace zt
