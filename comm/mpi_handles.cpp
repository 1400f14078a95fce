#include "comm/mpi_handles.h"

#include "comm/mpi_check.h"

namespace zt {

namespace {
bool mpi_alive() {
  int finalized = 1;
  return MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized;
}
}  // namespace

MpiComm MpiComm::duplicate(MPI_Comm parent) {
  MPI_Comm comm = MPI_COMM_NULL;
  ZT_MPI_CHECK(MPI_Comm_dup(parent, &comm));
  MpiComm owned(comm);
  ZT_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  return owned;
}

MpiComm& MpiComm::operator=(MpiComm&& other) noexcept {
  if (this != &other) {
    reset();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
  }
  return *this;
}

void MpiComm::reset() noexcept {
  if (comm_ != MPI_COMM_NULL && comm_ != MPI_COMM_WORLD && comm_ != MPI_COMM_SELF && mpi_alive())
    MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

MpiOp::MpiOp(MPI_User_function* function, bool commutative) {
  ZT_MPI_CHECK(MPI_Op_create(function, commutative ? 1 : 0, &op_));
}

MpiOp& MpiOp::operator=(MpiOp&& other) noexcept {
  if (this != &other) {
    reset();
    op_ = std::exchange(other.op_, MPI_OP_NULL);
  }
  return *this;
}

void MpiOp::reset() noexcept {
  if (op_ != MPI_OP_NULL && mpi_alive()) MPI_Op_free(&op_);
  op_ = MPI_OP_NULL;
}

}  // namespace zt
