// The asynchronous contract of the MPI backend with real ranks: sequence numbers, many collectives
// in flight, producer and consumer streams, errors carried by Work, the debug consistency check,
// sub-communicators, launch info, argument validation, bf16/f16 rounding and the watchdog.
#include <gtest/gtest.h>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>

#include <atomic>
#include <csignal>
#include <chrono>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "comm/flight_recorder.h"
#include "comm/make_communicator.h"
#include "comm/mpi_communicator.h"
#include "comm/reduction_ops.h"
#include "core/cpu_stream.h"
#include "core/error.h"
#include "core/stop_signal.h"
#include "tests/comm/comm_test_util.h"

namespace zt::test {
namespace {

using namespace std::chrono_literals;

CommOptions options_with(std::chrono::milliseconds timeout = 60s, bool debug_check = false) {
  CommOptions options;
  options.backend = CommBackend::mpi;
  options.timeout_s = std::chrono::duration<double>(timeout).count();
  options.debug_check = debug_check;
  return options;
}

std::vector<float> filled(std::size_t n, float value) { return std::vector<float>(n, value); }

TEST(MpiSemantics, LaunchInfoComesFromMpi) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with());
  EXPECT_EQ(comm.rank(), world_rank());
  EXPECT_EQ(comm.world_size(), world_size());
  // mpirun starts every rank of these tests on this one host.
  EXPECT_EQ(comm.local_rank(), comm.rank());
  EXPECT_EQ(comm.local_size(), comm.world_size());
  EXPECT_EQ(comm.backend_name(), "mpi");
}

TEST(MpiSemantics, SequenceNumbersCountUpInIssueOrder) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  Buffer data = make_buffer(Device::cpu(), DType::f32, filled(4, 1.0f));
  EXPECT_EQ(comm.next_sequence(), 1u);
  Work a = comm.all_reduce(data.view(), ReduceOp::sum, compute);
  Work b = comm.barrier(compute);
  Work c = comm.broadcast(data.view(), 0, compute);
  EXPECT_EQ(a.sequence(), 1u);
  EXPECT_EQ(b.sequence(), 2u);
  EXPECT_EQ(c.sequence(), 3u);
  EXPECT_EQ(a.description().kind, CollectiveKind::all_reduce);
  EXPECT_EQ(a.description().count, 4u);
  c.wait();
  EXPECT_TRUE(a.is_completed() && b.is_completed() && c.is_completed());
  EXPECT_EQ(a.error(), nullptr);
  EXPECT_EQ(Work().sequence(), 0u);
  EXPECT_TRUE(Work().is_completed());
}

TEST(MpiSemantics, ManyInFlightCompleteInOrderWithRightResults) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  const int n = comm.world_size();
  const int r = comm.rank();
  constexpr int kInFlight = 64;
  std::vector<Buffer> buffers;
  std::vector<Work> works;
  for (int k = 0; k < kInFlight; ++k) {
    // Sizes vary so that a result landing in the wrong buffer shows; values depend on k and rank.
    std::size_t size = 1 + static_cast<std::size_t>(k) * 37;
    buffers.push_back(make_buffer(Device::cpu(), DType::f32, filled(size, static_cast<float>(k * 100 + (1 << r)))));
    works.push_back(comm.all_reduce(buffers.back().view(), ReduceOp::sum, compute));
  }
  // FIFO: once the last completed, every earlier one has.
  works.back().wait();
  for (int k = 0; k < kInFlight; ++k) {
    EXPECT_TRUE(works[k].is_completed()) << "collective " << k;
    EXPECT_EQ(works[k].sequence(), static_cast<std::uint64_t>(k + 1));
    float expected = static_cast<float>(n * k * 100 + (1 << n) - 1);
    EXPECT_TRUE(same_values(read_buffer(buffers[k].view()), filled(buffers[k].numel(), expected))) << "collective " << k;
  }
}

TEST(MpiSemantics, CommStreamWaitsForProducerAndConsumerStreamWaitsForWork) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with());
  CpuStream compute(CpuStream::Mode::worker_thread, "compute");
  const int n = comm.world_size();
  constexpr std::size_t kSize = 1000;
  Buffer data(Device::cpu(), DType::f32, kSize, MemCategory::grads);
  float* values = data.data_as<float>();
  // The producer writes the input late; a comm stream that did not wait would reduce zeros.
  compute.enqueue([=] {
    std::this_thread::sleep_for(100ms);
    for (std::size_t i = 0; i < kSize; ++i) values[i] = 1.0f;
  });
  Work work = comm.all_reduce(data.view(), ReduceOp::sum, compute);
  work.wait(compute);  // the host goes on; the compute stream waits
  std::atomic<float> seen_by_consumer{-1.0f};
  compute.enqueue([&] { seen_by_consumer = values[kSize - 1]; });
  compute.synchronize();
  EXPECT_EQ(seen_by_consumer.load(), static_cast<float>(n));
  EXPECT_TRUE(work.is_completed());
}

TEST(MpiSemantics, CommRunsConcurrentlyWithTheHost) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  Buffer data = make_buffer(Device::cpu(), DType::f32, filled(8, 1.0f));
  // Rank 0 enters late, so the others' collective is still running when the call returns.
  if (comm.rank() == 0) std::this_thread::sleep_for(200ms);
  auto before = std::chrono::steady_clock::now();
  Work work = comm.all_reduce(data.view(), ReduceOp::sum, compute);
  auto issue_time = std::chrono::steady_clock::now() - before;
  EXPECT_LT(issue_time, 100ms) << "issuing a collective must not block the host";
  if (comm.rank() != 0) {
    EXPECT_FALSE(work.is_completed());
  }
  work.wait();
}

TEST(MpiSemantics, BarrierHoldsEveryRankUntilAllArrive) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  comm.barrier(compute).wait();
  auto start = std::chrono::steady_clock::now();
  if (comm.rank() == comm.world_size() - 1) std::this_thread::sleep_for(300ms);
  comm.barrier(compute).wait();
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
}

TEST(MpiSemantics, AllReduceManyReducesEveryTensorAsOneWork) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  const int n = comm.world_size();
  const int r = comm.rank();
  std::vector<Buffer> buffers;
  std::vector<BufferView> views;
  for (std::size_t size : {0u, 5u, 1001u}) {
    std::vector<float> input(size);
    for (std::size_t i = 0; i < size; ++i) input[i] = reduction_input(r, i, size, DType::bf16);
    buffers.push_back(make_buffer(Device::cpu(), DType::bf16, input));
    views.push_back(buffers.back().view());
  }
  Work work = comm.all_reduce_many(views, ReduceOp::avg, compute);
  EXPECT_EQ(work.description().tensors, 3);
  EXPECT_EQ(work.description().count, 1006u);
  work.wait();
  for (const Buffer& b : buffers) {
    std::vector<float> expected(b.numel());
    for (std::size_t i = 0; i < b.numel(); ++i) expected[i] = reduction_sum(n, i, b.numel(), DType::bf16) / n;
    EXPECT_TRUE(same_values(read_buffer(b.view()), expected));
  }
}

TEST(MpiSemantics, SubCommunicatorReducesOverItsGroupOnly) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  const int r = comm.rank();
  // Even and odd ranks form two groups, ordered by descending world rank.
  std::unique_ptr<Communicator> group = comm.split(r % 2, -r, "parity");
  ASSERT_NE(group, nullptr);
  int group_size = (comm.world_size() + 1 - r % 2) / 2;
  EXPECT_EQ(group->world_size(), group_size);
  EXPECT_EQ(group->rank(), group_size - 1 - r / 2);
  EXPECT_EQ(group->name(), "parity");
  Buffer data = make_buffer(Device::cpu(), DType::f32, filled(3, static_cast<float>(r + 1)));
  group->all_reduce(data.view(), ReduceOp::sum, compute).wait();
  float expected = 0;
  for (int k = r % 2; k < comm.world_size(); k += 2) expected += static_cast<float>(k + 1);
  EXPECT_TRUE(same_values(read_buffer(data.view()), filled(3, expected)));
  // The parent still works after the split, and a rank outside every group gets none.
  comm.barrier(compute).wait();
  EXPECT_EQ(comm.split(r == 0 ? -1 : 0, r, "no-rank-0") == nullptr, r == 0);
}

TEST(MpiSemantics, PairwiseBf16AndF16SumsAccumulateInFp32AndRoundOnce) {
  MpiCommunicator world(MPI_COMM_WORLD, Device::cpu(), options_with());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  // Pairs of ranks, so the exact rounding of one pairwise combine is checked.
  std::unique_ptr<Communicator> pair = world.split(world.rank() / 2, world.rank(), "pair");
  if (pair->world_size() != 2) GTEST_SKIP() << "needs pairs of ranks";
  // 1 + 2^-9 and 2^-9 are both exact in fp32; their bf16 sum 1 + 2^-8 is a tie between two
  // bf16 neighbours and must round to even (1.0), unlike per-element truncation or double rounding.
  const float mine_bf16 = pair->rank() == 0 ? 1.0f : 0x1p-8f;       // 1 + 2^-8: tie, rounds to 1.0
  const float mine_f16 = pair->rank() == 0 ? 1.0f : 0x1.8p-11f;     // 1 + 1.5*2^-11: rounds up
  Buffer b = make_buffer(Device::cpu(), DType::bf16, {mine_bf16, 3.0f});
  Buffer h = make_buffer(Device::cpu(), DType::f16, {mine_f16, 5.0f});
  pair->all_reduce(b.view(), ReduceOp::sum, compute);
  pair->all_reduce(h.view(), ReduceOp::avg, compute).wait();
  EXPECT_EQ(read_buffer(b.view()), (std::vector<float>{1.0f, 6.0f}));
  EXPECT_EQ(read_buffer(h.view()), (std::vector<float>{f16_to_float(float_to_f16(1.0f + 0x1p-10f)) / 2, 5.0f}));
}

TEST(ReductionOps, UserFunctionsAddInFp32AndRoundToNearestEven) {
  std::vector<bf16> a = {float_to_bf16(1.0f), float_to_bf16(-2.5f), float_to_bf16(256.0f)};
  std::vector<bf16> b = {float_to_bf16(0x1p-8f), float_to_bf16(0.5f), float_to_bf16(1.0f)};
  int length = 3;
  MPI_Datatype type = MPI_UINT16_T;
  bf16_sum_function(a.data(), b.data(), &length, &type);
  EXPECT_EQ(bf16_to_float(b[0]), 1.0f);    // tie to even
  EXPECT_EQ(bf16_to_float(b[1]), -2.0f);
  EXPECT_EQ(bf16_to_float(b[2]), 256.0f);  // 257 is not a bf16; ties to even 256
  std::vector<f16> x = {float_to_f16(2048.0f), float_to_f16(0.1f)};
  std::vector<f16> y = {float_to_f16(3.0f), float_to_f16(0.2f)};
  length = 2;
  f16_sum_function(x.data(), y.data(), &length, &type);
  EXPECT_EQ(f16_to_float(y[0]), 2052.0f);  // 2051 -> nearest even multiple of 2
  EXPECT_EQ(y[1].bits, float_to_f16(f16_to_float(float_to_f16(0.1f)) + f16_to_float(float_to_f16(0.2f))).bits);
}

TEST(ReductionOps, Bf16SumMatchesCoreConversions) {
  // Every bf16 pattern (NaNs, infinities, subnormals included) against a spread of partners.
  std::vector<bf16> partners;
  for (std::uint32_t bits = 0; bits < 65536; bits += 257) partners.push_back(bf16{static_cast<std::uint16_t>(bits)});
  for (bf16 p : partners) {
    std::vector<bf16> a(65536), b(65536, p);
    for (std::uint32_t bits = 0; bits < 65536; ++bits) a[bits] = bf16{static_cast<std::uint16_t>(bits)};
    int length = 65536;
    MPI_Datatype type = MPI_UINT16_T;
    bf16_sum_function(a.data(), b.data(), &length, &type);
    for (std::uint32_t bits = 0; bits < 65536; ++bits) {
      bf16 expected = float_to_bf16(bf16_to_float(a[bits]) + bf16_to_float(p));
      ASSERT_EQ(b[bits].bits, expected.bits) << "bf16 bits " << bits << " + " << p.bits;
    }
  }
  // avg's division: in fp32, rounded once to bf16.
  Buffer x = make_buffer(Device::cpu(), DType::bf16, {3.0f, -1.5f, 1.0f});
  divide_host(x.view(), 3);
  EXPECT_EQ(read_buffer(x.view()), (std::vector<float>{1.0f, -0.5f, bf16_to_float(float_to_bf16(1.0f / 3.0f))}));
}

TEST(MpiSemantics, DebugCheckNamesBothSidesOfAMismatch) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with(60s, /*debug_check=*/true));
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  Buffer data = make_buffer(Device::cpu(), DType::f32, filled(16, 1.0f));
  // Agreeing collectives pass the check.
  comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
  // Rank 0 broadcasts 16 elements where every other rank all-reduces 10.
  Work work = comm.rank() == 0 ? comm.broadcast(data.view(), 0, compute)
                               : comm.all_reduce(data.slice(0, 10), ReduceOp::sum, compute);
  try {
    work.wait();
    ADD_FAILURE() << "a mismatched collective completed";
  } catch (const CommError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("ranks disagree on the next collective"), std::string::npos) << message;
    EXPECT_NE(message.find("broadcast(root 0) #2: 16 x f32"), std::string::npos) << message;
    EXPECT_NE(message.find("all_reduce(sum) #2: 10 x f32"), std::string::npos) << message;
  }
  EXPECT_NE(work.error(), nullptr);
  // Errors are sticky: later collectives on the failed comm stream fail too instead of running.
  EXPECT_THROW(comm.barrier(compute).wait(), CommError);
}

TEST(MpiSemantics, WatchdogReportsACollectiveThatOutlivesTheTimeout) {
  std::atomic<int> reports{0};
  std::string message;
  std::mutex message_mutex;
  auto record = [&](const std::string& text) {
    std::lock_guard lock(message_mutex);
    message = text;
    ++reports;
  };
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with(300ms), record);
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  Buffer data = make_buffer(Device::cpu(), DType::f32, filled(1000, 1.0f));
  // Every rank but 0 joins 1.5 s late: rank 0's collective overruns the timeout, then completes.
  if (comm.rank() != 0) std::this_thread::sleep_for(1500ms);
  comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
  // Let the watchdog of a late rank have its look too: its collective was quick.
  std::this_thread::sleep_for(100ms);
  if (comm.rank() == 0) {
    ASSERT_EQ(reports.load(), 1);
    std::lock_guard lock(message_mutex);
    EXPECT_NE(message.find("comm timeout: all_reduce(sum) #1: 1000 x f32"), std::string::npos) << message;
    EXPECT_NE(message.find("on rank 0 of " + std::to_string(comm.world_size())), std::string::npos) << message;
    EXPECT_NE(message.find("comm.timeout 0.3 s"), std::string::npos) << message;
    EXPECT_NE(message.find("a peer rank may have died or ranks issued different collectives"), std::string::npos);
  } else {
    EXPECT_EQ(reports.load(), 0);
  }
}

// A directory rank 0 made for the records, removed once every rank's communicator (declared after
// this) is gone: a watchdog writes its record until its communicator ends.
struct SharedRecordDir {
  std::string path;
  SharedRecordDir(const std::string& name) : path(1024, '\0') {
    if (world_rank() == 0) {
      std::string pattern = testing::TempDir() + name + "_XXXXXX";
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      path = pattern;
    }
    MPI_Bcast(path.data(), static_cast<int>(path.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
    path = path.c_str();
  }
  ~SharedRecordDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    std::error_code ignored;
    if (world_rank() == 0) std::filesystem::remove_all(path, ignored);
  }
};

// What a communicator's timeout handler said, collected from its watchdog thread.
struct HandlerMessages {
  std::mutex mutex;
  std::vector<std::string> texts;
  std::chrono::steady_clock::time_point last_at;
  std::function<void(const std::string&)> handler() {
    return [this](const std::string& text) {
      std::lock_guard lock(mutex);
      texts.push_back(text);
      last_at = std::chrono::steady_clock::now();
    };
  }
};

// On rank 0: a flight record for every other rank, stamped `written_ms`, that never changes (their
// communicators publish nothing, as a dead rank's would not).
void write_silent_peer_records(const std::string& dir, const CommOptions& options, const Communicator& comm,
                               std::int64_t written_ms) {
  if (comm.rank() != 0) return;
  for (int r = 1; r < comm.world_size(); ++r)
    std::ofstream(flight_record_file(dir, options.name, r)) << flight_record_text(FlightRecord{r, written_ms, {}});
}

// The first verdict stands: rank 0 times out first and writes flight_record/verdict.txt; when the
// other ranks then time out too (as a frozen rank the launcher resumes would), they end pointing at
// that verdict instead of giving their own.
TEST(MpiSemantics, TheFirstVerdictStands) {
  const SharedRecordDir records("verdict");
  const std::string& dir = records.path;
  HandlerMessages said;
  CommOptions options = options_with(300ms);
  options.flight_record_dir = dir;
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options, said.handler());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  Buffer data = make_buffer(Device::cpu(), DType::f32, filled(10, 1.0f));
  if (comm.rank() != 0) std::this_thread::sleep_for(1200ms);  // rank 0 waits past the timeout
  comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
  if (comm.rank() == 0) std::this_thread::sleep_for(1200ms);  // now the others do
  comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
  std::this_thread::sleep_for(100ms);
  std::lock_guard lock(said.mutex);
  const std::vector<std::string>& messages = said.texts;
  ASSERT_EQ(messages.size(), 1u);
  if (comm.rank() == 0) {
    EXPECT_NE(messages[0].find("comm timeout: all_reduce(sum) #1"), std::string::npos) << messages[0];
    std::ifstream verdict(std::filesystem::path(dir) / "verdict.txt");
    std::string first_line;
    std::getline(verdict, first_line);
    EXPECT_NE(first_line.find("rank 0: comm timeout: all_reduce(sum) #1"), std::string::npos) << first_line;
  } else {
    EXPECT_NE(messages[0].find("comm: ending this rank too; the job's verdict is in " + dir + "/verdict.txt"),
              std::string::npos)
        << messages[0];
  }
}

// A peer that is gone is not waited for while the job stops: rank 0's records directory holds a
// record for every other rank that never changes (their communicators publish nothing, as a dead
// rank's would). Without a stop signal rank 0 waits for them as long as the timeout allows; with
// one, it ends within kPeerSilentWhileStopping of noticing the stop.
TEST(MpiSemantics, APeerThatIsGoneIsNotWaitedForWhileTheJobStops) {
  const SharedRecordDir records("gone_peer");
  const std::string& dir = records.path;
  HandlerMessages said;
  CommOptions options = options_with(60s);
  if (world_rank() == 0) options.flight_record_dir = dir;
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options, said.handler());
  write_silent_peer_records(dir, options, comm, unix_ms_now());
  const std::vector<std::string>& messages = said.texts;
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  Buffer data = make_buffer(Device::cpu(), DType::f32, filled(10, 1.0f));
  const auto late = kPeerSilentWhileStopping + 3s;
  // No stop pending: the others join late and rank 0 waits for them.
  if (comm.rank() != 0) std::this_thread::sleep_for(late);
  comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
  {
    std::lock_guard lock(said.mutex);
    EXPECT_TRUE(messages.empty()) << messages.front();
  }
  // A stop pending on rank 0: the same wait ends with a verdict naming rank 1.
  std::optional<StopSignalHandler> stop;
  if (comm.rank() == 0) {
    stop.emplace();
    std::raise(SIGTERM);
  }
  const auto start = std::chrono::steady_clock::now();
  if (comm.rank() != 0) std::this_thread::sleep_for(late);
  comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
  std::lock_guard lock(said.mutex);
  if (comm.rank() == 0) {
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("comm: rank 1 is gone: its flight record"), std::string::npos) << messages[0];
    EXPECT_NE(messages[0].find("while the job stops on SIGTERM and all_reduce(sum) #2"), std::string::npos)
        << messages[0];
    // Given after the allowance and before the late ranks came (the test's handler does not exit).
    EXPECT_GE(said.last_at - start, kPeerSilentWhileStopping);
    EXPECT_LT(said.last_at - start, late - 1s);
  } else {
    EXPECT_TRUE(messages.empty());
  }
}

// Records an earlier attempt left (a run_dir local to each node keeps them; after a requeue their
// ranks run elsewhere and never rewrite them) never change either, but are no sign of a gone peer:
// stamped before this rank started, they are not read as this job's. With a stop pending, rank 0
// waits for its late peers as it would without one.
TEST(MpiSemantics, AnEarlierAttemptsRecordsDoNotMakeAPeerGone) {
  const SharedRecordDir records("stale_records");
  const std::string& dir = records.path;
  HandlerMessages said;
  CommOptions options = options_with(60s);
  if (world_rank() == 0) options.flight_record_dir = dir;
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options, said.handler());
  write_silent_peer_records(dir, options, comm, unix_ms_now() - 3'600'000);  // an hour ago
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  Buffer data = make_buffer(Device::cpu(), DType::f32, filled(10, 1.0f));
  std::optional<StopSignalHandler> stop;
  if (comm.rank() == 0) {
    stop.emplace();
    std::raise(SIGTERM);
  }
  if (comm.rank() != 0) std::this_thread::sleep_for(kPeerSilentWhileStopping + 3s);
  comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
  EXPECT_EQ(read_buffer(data.view())[0], static_cast<float>(comm.world_size()));
  std::lock_guard lock(said.mutex);
  EXPECT_TRUE(said.texts.empty()) << said.texts.front();
}

// Timeouts far beyond any job (comm.timeout_s: 1e16, or the largest double) once wrapped around
// in the conversions and failed a healthy job at its first collective.
TEST(MpiSemantics, HugeTimeoutsSaturateInsteadOfFiringAtOnce) {
  EXPECT_EQ(comm_timeout_from_seconds(1e16), kMaxCommTimeout);
  EXPECT_EQ(comm_timeout_from_seconds(1e300), kMaxCommTimeout);
  EXPECT_EQ(comm_timeout_from_seconds(std::numeric_limits<double>::infinity()), kMaxCommTimeout);
  EXPECT_EQ(comm_timeout_from_seconds(std::numeric_limits<double>::quiet_NaN()), 1ms);
  EXPECT_EQ(comm_timeout_from_seconds(-5), 1ms);
  EXPECT_EQ(comm_timeout_from_seconds(12.5), 12500ms);
  for (double timeout_s : {1e16, std::numeric_limits<double>::max()}) {
    std::atomic<int> reports{0};
    CommOptions options = options_with();
    options.timeout_s = timeout_s;
    MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options, [&](const std::string&) { ++reports; });
    CpuStream compute(CpuStream::Mode::inline_on_caller);
    Buffer data = make_buffer(Device::cpu(), DType::f32, filled(10, 1.0f));
    // A rank that joins a little late: the others' collective runs for a while, far below any timeout.
    if (comm.rank() == 1) std::this_thread::sleep_for(300ms);
    comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
    std::this_thread::sleep_for(100ms);  // the watchdog's next look
    EXPECT_EQ(reports.load(), 0) << "comm.timeout_s " << timeout_s;
  }
}

TEST(MpiSemantics, WatchdogClockStartsWhenTheCollectiveStartsNotWhenItIsQueued) {
  std::atomic<int> reports{0};
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with(300ms), [&](const std::string&) { ++reports; });
  CpuStream compute(CpuStream::Mode::worker_thread, "compute");
  Buffer data = make_buffer(Device::cpu(), DType::f32, filled(10, 1.0f));
  // A slow producer (a long backward pass) delays the collective's start well past the timeout.
  compute.enqueue([] { std::this_thread::sleep_for(800ms); });
  comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
  EXPECT_EQ(reports.load(), 0);
}

TEST(MpiSemantics, InvalidArgumentsAreRejectedAtTheCallSite) {
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options_with());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  const std::size_t n = static_cast<std::size_t>(comm.world_size());
  Buffer in = make_buffer(Device::cpu(), DType::f32, filled(4 * n + 1, 1.0f));
  Buffer out = make_buffer(Device::cpu(), DType::f32, filled(4, 0.0f));
  Buffer other = make_buffer(Device::cpu(), DType::bf16, filled(4, 0.0f));
  try {
    comm.reduce_scatter(in.view(), out.view(), ReduceOp::sum, compute);
    ADD_FAILURE() << "unequal reduce_scatter input accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("equal chunks"), std::string::npos) << e.what();
  }
  EXPECT_THROW(comm.all_reduce(out.view(), other.view(), ReduceOp::sum, compute), std::invalid_argument);
  EXPECT_THROW(comm.all_reduce(in.slice(0, 4), in.slice(2, 4), ReduceOp::sum, compute), std::invalid_argument);
  EXPECT_THROW(comm.all_gather(out.view(), in.view(), compute), std::invalid_argument);
  {  // into separate chunks: one per rank, each of the input's size and dtype, apart from each other
    Buffer big = make_buffer(Device::cpu(), DType::f32, filled(8 * n + 8, 0.0f));
    std::vector<BufferView> chunks;
    for (std::size_t q = 0; q < n; ++q) chunks.push_back(big.slice(8 * q, 4));
    std::vector<BufferView> too_few(chunks.begin(), chunks.end() - 1);
    EXPECT_THROW(comm.all_gather(out.view(), too_few, compute), std::invalid_argument);
    std::vector<BufferView> overlapping = chunks;
    if (n > 1) {
      overlapping.front() = big.slice(8 * (n - 1) + 2, 4);
      EXPECT_THROW(comm.all_gather(out.view(), overlapping, compute), std::invalid_argument);
    }
    std::vector<BufferView> wrong_size = chunks;
    wrong_size.front() = big.slice(0, 5);
    EXPECT_THROW(comm.all_gather(out.view(), wrong_size, compute), std::invalid_argument);
    EXPECT_THROW(comm.all_gather(big.slice(8 * n - 6, 4), chunks, compute), std::invalid_argument)
        << "an input overlapping a chunk that is not this rank's";
  }
  EXPECT_THROW(comm.broadcast(out.view(), static_cast<int>(n), compute), std::invalid_argument);
  BufferView on_gpu = out.view();
  on_gpu.device = Device::cuda(0);
  EXPECT_THROW(comm.all_reduce(on_gpu, ReduceOp::sum, compute), std::invalid_argument);
  // Nothing was issued: the next collective is still #1 and runs on every rank.
  EXPECT_EQ(comm.next_sequence(), 1u);
  comm.barrier(compute).wait();
}

TEST(CommSetup, ThreadLevelBelowMultipleIsRefusedClearly) {
  EXPECT_NO_THROW(check_mpi_thread_level(MPI_THREAD_MULTIPLE));
  try {
    check_mpi_thread_level(MPI_THREAD_SERIALIZED);
    ADD_FAILURE() << "MPI_THREAD_SERIALIZED accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("provides only MPI_THREAD_SERIALIZED"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs MPI_THREAD_MULTIPLE"), std::string::npos) << e.what();
  }
}

// libnbc's ring all-reduce summed wrongly in place before Open MPI 4.0.7 / 4.1.2: those keep the
// library's default (a binomial tree), as does any other MPI.
TEST(CommSetup, RingAllReduceOnlyWhereOpenMpisRingIsSound) {
  EXPECT_TRUE(has_sound_ring_all_reduce("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4"));
  EXPECT_TRUE(has_sound_ring_all_reduce("Open MPI v4.1.2, package: Open MPI"));
  EXPECT_TRUE(has_sound_ring_all_reduce("Open MPI v4.0.7, package: Open MPI"));
  EXPECT_TRUE(has_sound_ring_all_reduce("Open MPI v5.0.3, package: Open MPI"));
  EXPECT_FALSE(has_sound_ring_all_reduce("Open MPI v4.1.1, package: Open MPI"));
  EXPECT_FALSE(has_sound_ring_all_reduce("Open MPI v4.1.0, package: Debian OpenMPI"));
  EXPECT_FALSE(has_sound_ring_all_reduce("Open MPI v4.0.6, package: Open MPI"));
  EXPECT_FALSE(has_sound_ring_all_reduce("Open MPI v3.1.6, package: Open MPI"));
  EXPECT_FALSE(has_sound_ring_all_reduce("MPICH Version: 4.0.2"));
  EXPECT_FALSE(has_sound_ring_all_reduce(""));
}

TEST(CommSetup, BackendChoice) {
  EXPECT_EQ(parse_comm_backend("auto"), CommBackend::auto_select);
  EXPECT_EQ(parse_comm_backend("nccl"), CommBackend::nccl);
  EXPECT_THROW(parse_comm_backend("gloo"), UserError);
  CommOptions options;
  EXPECT_EQ(resolve_backend(options, Device::cpu(), MPI_COMM_WORLD), CommBackend::mpi);
  options.backend = CommBackend::nccl;
  EXPECT_THROW(resolve_backend(options, Device::cpu(), MPI_COMM_WORLD), UserError);
  options.backend = CommBackend::auto_select;
  std::unique_ptr<Communicator> comm = make_communicator(options, Device::cpu());
  EXPECT_EQ(comm->backend_name(), "mpi");
}

}  // namespace
}  // namespace zt::test
