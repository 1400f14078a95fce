// How long a block's latest whole gather took on the link: the summed durations of its
// collectives that cross the slowest link (a flat ring's, or in two levels those across hosts: the
// steps within a host overlap the next piece's and take a faster link; only the last piece's,
// which ends the gather, counts), once every one of them has completed. A block gathered in pieces
// counts all of them, and not the time between them (other blocks' gathers, or the update of the
// next piece). A collective's duration runs from this rank's start, so each piece also counts the
// time this rank waited for the last rank to issue it: a gather of many pieces on ranks out of
// step reads longer than its bytes take.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "comm/two_level_all_gather.h"
#include "comm/work.h"

namespace zt {

class GatherTime {
 public:
  // The gather of elements [begin, begin + count) of the block's chunks of chunk_numel (a piece,
  // or the whole). The first piece (begin 0) begins a new gather, forgetting an earlier one still
  // running (its time would be mixed with this one's); the one reaching chunk_numel makes it whole
  // (pieces of one gather are issued over a pass, the last of them maybe much later).
  void add(const TwoLevelAllGather::Issued& issued, std::size_t begin, std::size_t count, std::size_t chunk_numel);
  // The time of the latest gather whose collectives have all completed; nullopt before one has.
  std::optional<double> latest_ms();

 private:
  std::vector<Work> running_;  // the pieces since the latest first piece
  bool whole_ = false;  // running_ holds every piece
  std::optional<double> latest_ms_;
};

}  // namespace zt
