// ZT_MPI_CHECK(call): throws zt::CallError with MPI's error string when call does not return
// MPI_SUCCESS. Communicators that use it must set MPI_ERRORS_RETURN, or MPI aborts first.
#pragma once

#include <mpi.h>

#include "core/error.h"

namespace zt::detail {
inline void check_mpi(int code, const char* call, const char* file, int line) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw_call_error("MPI", call, file, line, length ? std::string_view(text, length) : "unknown MPI error");
}
}  // namespace zt::detail

#define ZT_MPI_CHECK(call) ::zt::detail::check_mpi((call), #call, __FILE__, __LINE__)
