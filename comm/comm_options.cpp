#include "comm/comm_options.h"

#include <fmt/format.h>

#include <cstdint>

#include "core/error.h"

namespace zt {

CommBackend parse_comm_backend(std::string_view name) {
  if (name == "auto") return CommBackend::auto_select;
  if (name == "mpi") return CommBackend::mpi;
  if (name == "nccl") return CommBackend::nccl;
  throw UserError(fmt::format("unknown comm backend '{}' (expected auto, mpi or nccl)", name));
}

std::chrono::milliseconds comm_timeout_from_seconds(double seconds) {
  const double milliseconds = seconds * 1000.0;
  // Written so that NaN fails both comparisons and takes the lower bound.
  if (!(milliseconds >= 1.0)) return std::chrono::milliseconds(1);
  if (milliseconds >= static_cast<double>(kMaxCommTimeout.count())) return kMaxCommTimeout;
  return std::chrono::milliseconds(static_cast<std::int64_t>(milliseconds));
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
