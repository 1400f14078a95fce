// A small MPI program that misbehaves on purpose, run under mpirun by expect_failure.cmake to check
// that hangs and disagreements end the job non-zero with a clear message instead of hanging CTest.
//
//   failure_probe stop            ranks other than 0 stop issuing collectives after #1: rank 0
//                                 blocks in #2 until its watchdog ends the process (exit 3)
//   failure_probe rank-dies       rank 1 dies (_exit(1)) after #1; the others block in #2
//   failure_probe debug-mismatch  with comm.debug_check, rank 1 issues a broadcast where the
//                                 others all-reduce: every rank fails with both descriptions
//   failure_probe ok              every rank does the same: exits 0 (the control case)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

#include "comm/mpi_bootstrap.h"
#include "comm/mpi_communicator.h"
#include "core/cpu_stream.h"
#include "core/log.h"

namespace {

int run(const std::string& mode) {
  using namespace zt;
  CommOptions options;
  options.timeout = std::chrono::seconds(2);
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
  int status = 0;
  try {
    zt::MpiSession mpi(&argc, &argv);
    status = run(mode);
  } catch (const std::exception& e) {
    zt::log::error("{}", e.what());
    status = 1;
  }
  return status;
}
