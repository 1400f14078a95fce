// Errors raised by zerotrain and the check macros that turn a failed library call into one.
//
// Every CUDA, cuBLAS, NCCL and MPI call goes through a check that throws zt::CallError carrying
// the call's text, file:line and the library's own error string (see cuda/cuda_check.h, mpi_check.h).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace zt {

// A mistake of the user's (config, CLI, data, checkpoint): the message says what and where,
// and the CLI prints it without a stack of internals and exits non-zero.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A library call that failed.
class CallError : public std::runtime_error {
 public:
  CallError(std::string_view library, std::string_view call, const char* file, int line,
            std::string_view library_message);
};

[[noreturn]] void throw_call_error(std::string_view library, std::string_view call, const char* file,
                                   int line, std::string_view library_message);

}  // namespace zt
