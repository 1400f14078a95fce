// RAII owners of MPI handles. Freeing after MPI_Finalize is an error, so the destructors check
// and skip (the handle died with MPI); communicators must still be destroyed before finalisation
// for their comm threads to stop cleanly.
#pragma once

#include <mpi.h>

#include <utility>

namespace zt {

class MpiComm {
 public:
  MpiComm() = default;
  explicit MpiComm(MPI_Comm adopted) : comm_(adopted) {}  // takes ownership (MPI_COMM_NULL allowed)
  // MPI_Comm_dup of parent, with MPI_ERRORS_RETURN so that checked calls report errors.
  static MpiComm duplicate(MPI_Comm parent);
  ~MpiComm() { reset(); }
  MpiComm(MpiComm&& other) noexcept : comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}
  MpiComm& operator=(MpiComm&& other) noexcept;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  MPI_Comm get() const { return comm_; }
  explicit operator bool() const { return comm_ != MPI_COMM_NULL; }
  void reset() noexcept;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

class MpiOp {
 public:
  MpiOp() = default;
  MpiOp(MPI_User_function* function, bool commutative);
  ~MpiOp() { reset(); }
  MpiOp(MpiOp&& other) noexcept : op_(std::exchange(other.op_, MPI_OP_NULL)) {}
  MpiOp& operator=(MpiOp&& other) noexcept;
  MpiOp(const MpiOp&) = delete;
  MpiOp& operator=(const MpiOp&) = delete;

  MPI_Op get() const { return op_; }
  void reset() noexcept;

 private:
  MPI_Op op_ = MPI_OP_NULL;
};

}  // namespace zt
