#include "comm/comm_options.h"

#include <fmt/format.h>

#include "core/error.h"

namespace zt {

CommBackend parse_comm_backend(std::string_view name) {
  if (name == "auto") return CommBackend::auto_select;
  if (name == "mpi") return CommBackend::mpi;
  if (name == "nccl") return CommBackend::nccl;
  throw UserError(fmt::format("unknown comm backend '{}' (expected auto, mpi or nccl)", name));
}

std::string_view comm_backend_name(CommBackend backend) {
  switch (backend) {
    case CommBackend::auto_select: return "auto";
    case CommBackend::mpi: return "mpi";
    case CommBackend::nccl: return "nccl";
  }
  return "unknown";
}

}  // namespace zt
