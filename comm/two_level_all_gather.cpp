#include "comm/two_level_all_gather.h"

#include <fmt/format.h>

#include <stdexcept>

namespace zt {

TwoLevelAllGather::TwoLevelAllGather(Communicator& comm, int ranks_per_host) : comm_(comm) {
  const int n = comm.world_size();
  if (ranks_per_host <= 1 || ranks_per_host >= n) return;
  if (n % ranks_per_host != 0)
    throw std::invalid_argument(
        fmt::format("two-level all-gather: {} ranks per host do not divide the {} ranks", ranks_per_host, n));
  // Names unique per group: each communicator's ranks publish flight records under its name.
  const int r = comm.rank(), local = r % ranks_per_host, host = r / ranks_per_host;
  across_hosts_ = comm.split(local, r, fmt::format("{}-across-hosts-{}", comm.name(), local));
  within_host_ = comm.split(host, r, fmt::format("{}-within-host-{}", comm.name(), host));
}

TwoLevelAllGather::Issued TwoLevelAllGather::all_gather(BufferView in, std::span<const BufferView> chunks,
                                                        Stream& producer) {
  if (!two_level()) {
    Work work = comm_.all_gather(in, chunks, producer);
    return {work, {{"", work}}};
  }
  comm_.check_all_gather(in, chunks);  // all of it, before any level is issued
  const std::size_t hosts = static_cast<std::size_t>(this->hosts());
  const std::size_t per_host = static_cast<std::size_t>(ranks_per_host());
  const std::size_t local = static_cast<std::size_t>(within_host_->rank());
  // Step 1: chunk h*L + l from the rank of local index l on host h (this rank's own included).
  std::vector<BufferView> same_local_index;
  for (std::size_t h = 0; h < hosts; ++h) same_local_index.push_back(chunks[h * per_host + local]);
  // Ordered on the hosts' links as the communicator's own all-gather would be: after the
  // collectives already issued on it, and before those issued later. Run beside them, stage 3's
  // backward gathers took bandwidth from the reductions that free the bucket buffers backward waits
  // for. The exchange within the host uses no host link: it may overlap the next ones.
  across_hosts_->comm_stream().wait(comm_.comm_stream().record());
  Issued issued;
  const Work across = across_hosts_->all_gather(in, same_local_index, producer);
  comm_.comm_stream().wait(across.event());
  issued.parts.emplace_back(kAcrossHosts, across);
  // Step 2: host h's chunks, this rank's part being the one step 1 wrote; after step 1.
  for (std::size_t h = 0; h < hosts; ++h) {
    const std::span<const BufferView> host_chunks = chunks.subspan(h * per_host, per_host);
    issued.done = within_host_->all_gather(host_chunks[local], host_chunks, across_hosts_->comm_stream());
    issued.parts.emplace_back(kWithinHost, issued.done);
  }
  return issued;
}

TwoLevelAllGather::Issued TwoLevelAllGather::all_gather(BufferView in, BufferView out, Stream& producer) {
  if (!two_level()) {
    Work work = comm_.all_gather(in, out, producer);
    return {work, {{"", work}}};
  }
  const std::size_t n = static_cast<std::size_t>(comm_.world_size());
  if (out.numel != n * in.numel)
    throw std::invalid_argument(fmt::format("all_gather of {} elements per rank into {} elements on {} ranks",
                                            in.numel, out.numel, n));
  std::vector<BufferView> chunks;
  for (std::size_t q = 0; q < n; ++q) chunks.push_back(out.slice(q * in.numel, in.numel));
  return all_gather(in, chunks, producer);
}

void TwoLevelAllGather::reserve_workspace(DType dtype, std::size_t numel) {
  if (!two_level()) return comm_.reserve_workspace(CollectiveKind::all_gather, dtype, numel);
  const auto per_rank = numel / static_cast<std::size_t>(comm_.world_size());
  across_hosts_->reserve_workspace(CollectiveKind::all_gather, dtype, per_rank * static_cast<std::size_t>(hosts()));
  within_host_->reserve_workspace(CollectiveKind::all_gather, dtype,
                                  per_rank * static_cast<std::size_t>(ranks_per_host()));
}

double TwoLevelAllGather::cpu_time_ms() const {
  return two_level() ? across_hosts_->cpu_time_ms() + within_host_->cpu_time_ms() : 0.0;
}

std::optional<double> TwoLevelAllGather::cpu_wait_ms() const {
  if (!two_level()) return 0.0;
  const std::optional<double> across = across_hosts_->cpu_wait_ms(), within = within_host_->cpu_wait_ms();
  if (!across || !within) return std::nullopt;
  return *across + *within;
}

}  // namespace zt
