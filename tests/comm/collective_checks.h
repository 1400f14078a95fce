// One collective checked end to end on a communicator of any backend: inputs built from the
// exact-value patterns of comm_test_util.h, results compared element for element on every rank.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace zt::test {

struct CollectiveCase {
  CollectiveKind kind;
  ReduceOp op = ReduceOp::sum;
  std::string name() const;
};

// Every collective and reduction the interface offers.
std::vector<CollectiveCase> all_collective_cases();
// 0, 1, primes, sizes not divisible by 2 or 4, and a few MiB.
std::vector<std::size_t> test_sizes();

// size: elements per rank's chunk for reduce_scatter (output) and all_gather (input), the whole
// buffer for all_reduce and broadcast. Broadcast is checked from root 0 and from the last rank.
void check_collective(Communicator& comm, const CollectiveCase& c, DType dtype, bool in_place, std::size_t size);

// An all-gather under test over comm's ranks: the communicator's own, or an algorithm built on it.
struct AllGatherUnderTest {
  std::function<Work(BufferView in, BufferView out, Stream& producer)> into_one_buffer;
  std::function<Work(BufferView in, std::span<const BufferView> chunks, Stream& producer)> into_chunks;
};
// Both forms checked as check_collective checks the communicator's own: into one buffer, and into
// chunks apart in reverse rank order with gaps that must stay untouched. chunk: elements per rank.
void check_all_gather_forms(Communicator& comm, const AllGatherUnderTest& gather, DType dtype, bool in_place,
                            std::size_t chunk);

}  // namespace zt::test
