#include <iostream>

#include "models/cpu/blas_kernels.h"
#include "runtime/cli/cli.h"

int main(int argc, char** argv) {
  // First, before MPI or any thread starts: may re-execute this binary once with OpenBLAS's fast
  // kernels for this CPU (models/cpu/blas_kernels.h says why).
  zt::models::cpu::ensure_fast_blas_kernels(argv);
  return zt::cli::run_cli(argc, argv, std::cout, std::cerr);
}
