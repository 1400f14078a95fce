// The timeline on CPU streams: spans come out on the host clock in the right lanes, collectives
// from their start to their completion on the comm stream, and the Chrome trace has what the
// viewers need.
#include "zero/timeline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "core/cpu_stream.h"
#include "runtime/trace/chrome_trace.h"
#include "runtime/trace/trace_session.h"

namespace zt::trace {
namespace {

using namespace std::chrono_literals;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// A collective-like Work on a worker CPU stream: it starts once the stream reaches it and runs
// for `runs`, as the MPI backend's collectives do.
Work fake_collective(CpuStream& comm_stream, std::uint64_t sequence, std::chrono::milliseconds runs) {
  auto state = std::make_shared<detail::WorkState>();
  state->desc.kind = CollectiveKind::reduce_scatter;
  state->desc.dtype = DType::f32;
  state->desc.count = 1000;
  state->desc.sequence = sequence;
  comm_stream.enqueue([state, runs] {
    state->mark_started();
    std::this_thread::sleep_for(runs);
  });
  state->done = comm_stream.record();
  return Work(state);
}

TEST(Timeline, PlacesStreamHostAndCollectiveSpansOnTheHostClock) {
  CpuStream compute(CpuStream::Mode::inline_on_caller, "compute");
  CpuStream comm(CpuStream::Mode::worker_thread, "comm");
  Timeline timeline(1);
  const Clock::time_point before = Clock::now();
  timeline.begin_step(7, compute);

  Event begin = compute.record();
  Work work = fake_collective(comm, 42, 20ms);
  timeline.add_collective("reduce_scatter bucket 0", work, {{"bucket", 0}});
  std::this_thread::sleep_for(10ms);  // "backward" on the compute stream, overlapping the collective
  timeline.add_stream_span(Lane::compute, "backward h0", begin, compute.record(), {{"block", 1}});
  const Clock::time_point wait_start = Clock::now();
  work.wait();
  timeline.add_host_span(Lane::host, "wait bucket 0", wait_start, Clock::now());
  timeline.end_step();

  std::vector<Span> spans = timeline.resolve();
  ASSERT_EQ(spans.size(), 4u);
  const Span& collective = spans[0];
  const Span& backward = spans[1];
  const Span& wait = spans[2];
  const Span& step = spans[3];
  EXPECT_EQ(collective.lane, Lane::comm);
  EXPECT_GE(ms(collective.end - collective.begin), 19.0);
  EXPECT_EQ(collective.args.at("bucket"), 0);
  EXPECT_EQ(collective.args.at("sequence"), 42);
  EXPECT_EQ(collective.args.at("elements"), 1000);
  EXPECT_EQ(collective.args.at("bytes"), 4000);
  EXPECT_EQ(collective.args.at("dtype"), "f32");
  EXPECT_GE(collective.args.at("queued_us").get<double>(), 0.0);
  EXPECT_EQ(backward.lane, Lane::compute);
  EXPECT_GE(ms(backward.end - backward.begin), 9.0);
  EXPECT_TRUE(collective.begin < backward.end && backward.begin < collective.end) << "they overlap";
  EXPECT_EQ(wait.lane, Lane::host);
  EXPECT_GE(wait.end, collective.end - 1ms);
  EXPECT_EQ(step.name, "step 7");
  EXPECT_EQ(step.args.at("step"), 7);
  EXPECT_LE(before, timeline.origin());
  EXPECT_LE(step.begin, backward.begin);
  EXPECT_GE(step.end, wait.end);
}

TEST(Timeline, ReportingBeforeAStepBeganIsABug) {
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  Timeline timeline(0);
  EXPECT_THROW(timeline.add_stream_span(Lane::compute, "x", compute.record(), compute.record()), std::logic_error);
  EXPECT_THROW(timeline.end_step(), std::logic_error);
}

TEST(ChromeTrace, HasNamedLanesAndCompleteEventsInMicroseconds) {
  const Clock::time_point origin = Clock::now();
  std::vector<Span> spans = {
      {Lane::comm, "reduce_scatter bucket 1", origin + 3ms, origin + 5ms, {{"bucket", 1}}},
      {Lane::host, "step 2", origin, origin + 10ms, {}},
      {Lane::compute, "forward h0", origin + 1ms, origin + 2ms, {}},
  };
  nlohmann::json trace = chrome_trace(3, spans, origin);
  std::map<std::string, int> tid_of_lane;
  std::vector<nlohmann::json> complete;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    EXPECT_EQ(e.at("pid"), 3);
    if (e.at("ph") == "M" && e.at("name") == "thread_name") tid_of_lane[e.at("args").at("name")] = e.at("tid");
    if (e.at("ph") == "X") complete.push_back(e);
  }
  ASSERT_EQ(tid_of_lane.size(), 3u);
  ASSERT_EQ(complete.size(), 3u);
  // In time order; microseconds from the origin.
  EXPECT_EQ(complete[0].at("name"), "step 2");
  EXPECT_EQ(complete[0].at("tid"), tid_of_lane.at("host"));
  EXPECT_DOUBLE_EQ(complete[0].at("dur").get<double>(), 10000.0);
  EXPECT_EQ(complete[1].at("name"), "forward h0");
  EXPECT_EQ(complete[1].at("tid"), tid_of_lane.at("compute stream"));
  EXPECT_DOUBLE_EQ(complete[1].at("ts").get<double>(), 1000.0);
  EXPECT_EQ(complete[2].at("tid"), tid_of_lane.at("comm stream"));
  EXPECT_EQ(complete[2].at("args").at("bucket"), 1);
  EXPECT_EQ(complete[2].at("cat"), "comm stream");
}

class TraceSessionTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("zt_trace_session_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  CpuStream compute_{CpuStream::Mode::inline_on_caller};
};

TEST_F(TraceSessionTest, TracesOnlyTheRangeAndWritesAfterItsLastStep) {
  TraceSession session(parse_step_range("2:3"), dir_ / "trace" / "rank0.json", 0);
  EXPECT_EQ(session.begin_step(1, compute_), nullptr);
  session.end_step();
  Timeline* step2 = session.begin_step(2, compute_);
  ASSERT_NE(step2, nullptr);
  session.end_step();
  EXPECT_FALSE(std::filesystem::exists(session.file()));
  ASSERT_NE(session.begin_step(3, compute_), nullptr);
  session.end_step();
  ASSERT_TRUE(std::filesystem::exists(session.file()));
  EXPECT_EQ(session.begin_step(4, compute_), nullptr);
  EXPECT_FALSE(session.finish()) << "already written";

  std::ifstream in(session.file());
  nlohmann::json trace = nlohmann::json::parse(in);
  int steps = 0;
  for (const nlohmann::json& e : trace.at("traceEvents")) steps += e.at("ph") == "X";
  EXPECT_EQ(steps, 2);
}

TEST_F(TraceSessionTest, FinishWritesWhatARunEndingInsideTheRangeTraced) {
  TraceSession session(parse_step_range("2:9"), dir_ / "rank1.json", 1);
  ASSERT_NE(session.begin_step(2, compute_), nullptr);
  session.end_step();
  EXPECT_FALSE(std::filesystem::exists(session.file()));
  EXPECT_TRUE(session.finish());
  EXPECT_TRUE(std::filesystem::exists(session.file()));
}

TEST_F(TraceSessionTest, NothingTracedWritesNothing) {
  TraceSession session(parse_step_range("5"), dir_ / "rank0.json", 0);
  EXPECT_EQ(session.begin_step(1, compute_), nullptr);
  EXPECT_FALSE(session.finish());
  EXPECT_FALSE(std::filesystem::exists(session.file()));
}

}  // namespace
}  // namespace zt::trace
