// What a collective is, independent of the backend that runs it: the kind, the reduction, the
// element type and count, and its place in the communicator's sequence. Errors, the watchdog
// and the debug consistency check all describe a collective with this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/dtype.h"

namespace zt {

enum class CollectiveKind : std::uint8_t { all_reduce, reduce_scatter, all_gather, broadcast, barrier };

// sum: element-wise sum over ranks. avg: the sum divided by the number of ranks (see
// communicator.h for the exact rounding of each backend and dtype).
enum class ReduceOp : std::uint8_t { sum, avg };

std::string_view collective_name(CollectiveKind kind);
std::string_view reduce_op_name(ReduceOp op);

struct CollectiveDesc {
  CollectiveKind kind = CollectiveKind::barrier;
  ReduceOp op = ReduceOp::sum;     // all_reduce and reduce_scatter only
  DType dtype = DType::f32;
  std::size_t count = 0;           // elements of the larger side: all_reduce/broadcast the buffer,
                                   // reduce_scatter the input, all_gather the output
  int root = 0;                    // broadcast only
  std::uint64_t sequence = 0;      // 1, 2, ... per communicator, in issue order
  int tensors = 1;                 // >1 for a multi-tensor launch; count is then the total

  // "all_reduce(sum) #7: 1048576 x f32 (4.00 MiB)"
  std::string str() const;
  bool operator==(const CollectiveDesc&) const = default;
};

}  // namespace zt
