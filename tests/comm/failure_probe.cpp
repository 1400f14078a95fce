// A small MPI program that misbehaves on purpose, run under mpirun by expect_failure.cmake to check
// that hangs and disagreements end the job non-zero with a clear message instead of hanging CTest.
//
//   failure_probe stop            ranks other than 0 stop issuing collectives after #1: rank 0
//                                 blocks in #2 until its watchdog ends the process (exit 3)
//   failure_probe rank-dies       rank 1 dies (_exit(1)) after #1; the others block in #2
//   failure_probe debug-mismatch  with comm.debug_check, rank 1 issues a broadcast where the
//                                 others all-reduce: every rank fails with both descriptions
//   failure_probe ok              every rank does the same: exits 0 (the control case)
//
// A second argument names a directory for the ranks' flight records (CommOptions::
// flight_record_dir): a timeout then names the ranks that never reached the collective.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>

#include "comm/mpi_bootstrap.h"
#include "comm/mpi_communicator.h"
#include "core/cpu_stream.h"
#include "core/log.h"

namespace {

int run(const std::string& mode, const std::string& record_dir) {
  using namespace zt;
  CommOptions options;
  if (!record_dir.empty()) {
    // Records of an earlier run must be gone before any rank writes its own.
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::filesystem::remove_all(record_dir);
    MPI_Barrier(MPI_COMM_WORLD);
    std::filesystem::create_directories(record_dir);
    options.flight_record_dir = record_dir;
  }
  options.timeout_s = 2;
  options.debug_check = mode == "debug-mismatch";
  MpiCommunicator comm(MPI_COMM_WORLD, Device::cpu(), options);
  log::set_rank(comm.rank());
  CpuStream compute(CpuStream::Mode::inline_on_caller);
  Buffer data(Device::cpu(), DType::f32, 1000, MemCategory::grads);
  comm.all_reduce(data.view(), ReduceOp::sum, compute).wait();
  log::info("collective #1 done");

  if (mode == "stop" && comm.rank() != 0) return 0;  // goes on to MPI_Finalize, never to #2
  if (mode == "rank-dies" && comm.rank() == 1) {
    log::info("dying on purpose");
    std::fflush(nullptr);
    _exit(1);
  }
  Work second = mode == "debug-mismatch" && comm.rank() == 1 ? comm.broadcast(data.view(), 0, compute)
                                                             : comm.all_reduce(data.view(), ReduceOp::sum, compute);
  second.wait();
  log::info("collective #2 done");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "ok";
  std::string record_dir = argc > 2 ? argv[2] : "";
  int status = 0;
  try {
    zt::MpiSession mpi(&argc, &argv);
    status = run(mode, record_dir);
  } catch (const std::exception& e) {
    zt::log::error("{}", e.what());
    status = 1;
  }
  return status;
}
