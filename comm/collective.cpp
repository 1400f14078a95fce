#include "comm/collective.h"

#include <fmt/format.h>

#include "core/memory.h"

namespace zt {

std::string_view collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::barrier: return "barrier";
  }
  return "unknown_collective";
}

std::string_view reduce_op_name(ReduceOp op) { return op == ReduceOp::sum ? "sum" : "avg"; }

std::string CollectiveDesc::str() const {
  std::string name(collective_name(kind));
  if (kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter)
    name += fmt::format("({})", reduce_op_name(op));
  else if (kind == CollectiveKind::broadcast)
    name += fmt::format("(root {})", root);
  if (kind == CollectiveKind::barrier) return fmt::format("{} #{}", name, sequence);
  std::string tensors_note = tensors > 1 ? fmt::format(" in {} tensors", tensors) : "";
  return fmt::format("{} #{}: {} x {}{} ({})", name, sequence, count, dtype_name(dtype), tensors_note,
                     format_bytes(static_cast<std::int64_t>(count * dtype_size(dtype))));
}

}  // namespace zt
