#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "models/cpu/blas_kernels.h"
#include "runtime/cli/address_space.h"
#include "runtime/cli/cli.h"

int main(int argc, char** argv) {
  // First, before MPI or any thread starts: may re-execute this binary once with OpenBLAS's fast
  // kernels for this CPU (models/cpu/blas_kernels.h says why).
  zt::models::cpu::ensure_fast_blas_kernels(argv);
  // Then, before MPI starts: an address-space limit too low to start under hangs the process
  // (address_space.h says why). _Exit, because exit() would join OpenBLAS's stuck threads.
  if (const auto problem = zt::cli::address_space_problem_here()) {
    std::fprintf(stderr, "zerotrain: %s\n", problem->c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
  return zt::cli::run_cli(argc, argv, std::cout, std::cerr);
}
