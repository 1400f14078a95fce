// The stop-signal handler in a real process: a second signal ends it at once, copies of the first
// arriving together count once, SIGUSR1 (a launcher's relay) is a stop too; once a stop is
// pending, a log line never blocks on a stderr pipe nobody reads (as mpirun's, once it has begun
// to stop a job), so the rank reaches its final checkpoint.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "core/log.h"
#include "core/stop_signal.h"

namespace zt {
namespace {

TEST(StopSignal, TheFirstSignalIsRecorded) {
  StopSignalHandler handler;
  EXPECT_EQ(StopSignalHandler::received(), 0);
  std::raise(SIGTERM);
  EXPECT_EQ(StopSignalHandler::received(), SIGTERM);
}

TEST(StopSignal, SigUsr1IsAStopRequest) {
  StopSignalHandler handler;
  std::raise(SIGUSR1);
  EXPECT_EQ(StopSignalHandler::received(), SIGUSR1);
  EXPECT_EQ(stop_signal_name(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(StopRequested(SIGUSR1).exit_code(), 138);
}

TEST(StopSignal, CopiesArrivingTogetherCountOnce) {
  StopSignalHandler handler;
  std::raise(SIGINT);
  std::raise(SIGINT);  // as `timeout -s INT` sends it to the process and to its group
  std::raise(SIGUSR1);  // and a launcher relays it
  EXPECT_EQ(StopSignalHandler::received(), SIGINT);
}

TEST(StopSignal, ARepeatedRelayNeverEndsTheProcess) {
  StopSignalHandler handler;
  std::raise(SIGUSR1);
  sleep(1);
  usleep(100'000);
  std::raise(SIGUSR1);  // a relay delivered twice, later than the 1 s copies get
  EXPECT_EQ(StopSignalHandler::received(), SIGUSR1);
}

TEST(StopSignalDeathTest, ASecondSignalEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StopSignalHandler handler;
        std::raise(SIGTERM);
        sleep(1);
        usleep(100'000);
        std::raise(SIGTERM);
        std::_Exit(0);
      },
      testing::KilledBySignal(SIGTERM), "");
}

// stderr becomes a pipe whose reader never reads, filled to the brim: a blocking write would hang.
void make_stderr_a_full_pipe() {
  int fds[2];
  if (pipe(fds) != 0) std::_Exit(3);
  const int flags = fcntl(fds[1], F_GETFL);
  fcntl(fds[1], F_SETFL, flags | O_NONBLOCK);
  const std::string block(4096, 'x');
  while (write(fds[1], block.data(), block.size()) > 0) {
  }
  fcntl(fds[1], F_SETFL, flags);  // blocking again, as the rank's stderr is
  dup2(fds[1], STDERR_FILENO);
}

TEST(StopSignalDeathTest, AfterAStopALogLineNeverBlocksOnAFullPipe) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(10);  // a blocked write ends the child with SIGALRM, which fails the test
        make_stderr_a_full_pipe();
        StopSignalHandler handler;
        std::raise(SIGTERM);
        log::write(log::Level::warn, "SIGTERM received: stopping after this step");
        std::_Exit(StopSignalHandler::received() == SIGTERM ? 0 : 2);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace zt
