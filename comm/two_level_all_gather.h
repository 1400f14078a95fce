// An all-gather that crosses each host's link once.
//
// With H hosts of L ranks each, placed host by host (rank h*L + l is local rank l of host h), a flat
// ring crosses every host's link in both directions and moves (n-1)/n of the output over it, n = H*L.
// In two levels it moves (H-1)/H (a half instead of three quarters for 2 hosts x 2 ranks):
//  1. across hosts: the ranks of each local index l exchange their own chunks (L rings of H ranks
//     side by side, each host's link carrying its L ranks' chunks to every other host);
//  2. within each host: for every host h, the L ranks exchange the chunks of host h's ranks that
//     step 1 gave them (H all-gathers of L ranks over the link within the host, which is faster).
// Both steps copy, so the result is bitwise the flat ring's, and every chunk lands directly in the
// caller's view. Step 1 runs after the collectives issued before it on the communicator and before
// those issued after it, as the communicator's own all-gather would; step 2 may overlap the later
// ones (it uses the links within the host). As with any collective, the chunks belong to the
// all-gather until `done` completed: a second all-gather into them must be issued after that (step
// 1 of the next could otherwise overwrite what step 2 of this one still sends). On NCCL, step 2
// runs on its own communicator beside the world's reductions, as a secondary partition's gathers
// do. Where the layout gives nothing to gain (one host, one rank per host, ranks not placed host
// by host) it is the communicator's own all-gather.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.h"

namespace zt {

class TwoLevelAllGather {
 public:
  // ranks_per_host: Communicator::ranks_per_host_block(), or 0 for a flat ring. With 1 <
  // ranks_per_host < world size, creates the two communicators of the levels (collective over comm).
  TwoLevelAllGather(Communicator& comm, int ranks_per_host);

  // The collectives one all-gather issued: `done` completes when every chunk is in place (after
  // all the others); `parts` are all of them with a label for timelines ("" for a flat ring, else
  // kAcrossHosts and kWithinHost), to count their time.
  static constexpr std::string_view kAcrossHosts = " across hosts", kWithinHost = " within host";
  struct Issued {
    Work done;
    std::vector<std::pair<std::string_view, Work>> parts;
  };
  // Communicator::all_gather's semantics and argument checks, all made before anything is issued
  // (the chunk form and the one-buffer form).
  Issued all_gather(BufferView in, std::span<const BufferView> chunks, Stream& producer);
  Issued all_gather(BufferView in, BufferView out, Stream& producer);

  Communicator& communicator() const { return comm_; }
  bool two_level() const { return across_hosts_ != nullptr; }
  int hosts() const { return two_level() ? across_hosts_->world_size() : 1; }
  int ranks_per_host() const { return two_level() ? within_host_->world_size() : comm_.world_size(); }
  // Sizes the workspaces for all-gathers of up to `numel` output elements
  // (Communicator::reserve_workspace): the levels', or the communicator's for a flat ring.
  void reserve_workspace(DType dtype, std::size_t numel);
  // CPU time of the levels' comm threads and their wait for a CPU (Communicator::cpu_time_ms,
  // cpu_wait_ms), 0 for a flat ring: the communicator's own threads are not counted.
  double cpu_time_ms() const;
  std::optional<double> cpu_wait_ms() const;

 private:
  Communicator& comm_;
  std::unique_ptr<Communicator> across_hosts_;  // the ranks of this rank's local index, one per host
  std::unique_ptr<Communicator> within_host_;   // this host's ranks
};

}  // namespace zt
