// Element types and reductions of the MPI backend.
//
// MPI has no bf16 or f16, so those buffers travel as MPI_UINT16_T and are summed by user-defined
// ops. Each pairwise combine converts both operands to fp32, adds in fp32 and rounds the result
// to the 16-bit type (to nearest, ties to even): that is the correctly rounded 16-bit sum, the
// same per-step rounding NCCL applies. A sum over n ranks is therefore rounded n-1 times, in an
// order that depends on MPI's reduction tree.
//
// avg is computed after the sum: each element is converted to fp32, divided by n in fp32 and
// rounded once more to the 16-bit type (f32 buffers: divided in fp32). For the power-of-two world
// sizes of data-parallel training the division is exact, so avg rounds exactly as the sum does.
#pragma once

#include <mpi.h>

#include "comm/mpi_handles.h"
#include "core/buffer.h"

namespace zt {

MPI_Datatype mpi_datatype(DType dtype);

// The sum ops of one communicator; user-defined ops live from construction to destruction
// (created after MPI_Init, freed before MPI_Finalize with the communicator).
class MpiSumOps {
 public:
  MpiSumOps();
  MPI_Op sum(DType dtype) const;

 private:
  MpiOp bf16_sum_;
  MpiOp f16_sum_;
};

// x <- x / divisor for every element of a host view (the avg step after a sum).
void divide_host(BufferView data, int divisor);

// The user functions behind the ops, exposed for tests: inout[i] <- round(in[i] + inout[i]).
void bf16_sum_function(void* in, void* inout, int* length, MPI_Datatype* datatype);
void f16_sum_function(void* in, void* inout, int* length, MPI_Datatype* datatype);

}  // namespace zt
