#include "comm/communicator.h"

#include <fmt/format.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

namespace zt {

namespace {

std::string view_str(const BufferView& v) {
  return fmt::format("{} x {} on {}", v.numel, dtype_name(v.dtype), v.device.str());
}

std::byte* bytes_of(const BufferView& v) { return static_cast<std::byte*>(v.data); }

}  // namespace

bool views_overlap(const BufferView& a, const BufferView& b) {
  if (a.bytes() == 0 || b.bytes() == 0) return false;
  std::byte* a0 = bytes_of(a);
  std::byte* b0 = bytes_of(b);
  return a0 < b0 + b.bytes() && b0 < a0 + a.bytes();
}

std::uint64_t Communicator::next_sequence() const {
  std::lock_guard lock(sequence_mutex_);
  return next_sequence_;
}

void Communicator::check_view(const BufferView& view, std::string_view role, CollectiveKind kind) const {
  if (view.device != device())
    throw std::invalid_argument(fmt::format("{}: the {} buffer ({}) is not on this {} communicator's device {}",
                                            collective_name(kind), role, view_str(view), backend_name(),
                                            device().str()));
  if (view.numel > 0 && view.data == nullptr)
    throw std::invalid_argument(
        fmt::format("{}: the {} buffer has {} elements but no memory", collective_name(kind), role, view.numel));
}

std::shared_ptr<detail::WorkState> Communicator::new_work_state(const Collective& c) const {
  auto state = std::make_shared<detail::WorkState>();
  state->desc = c.desc;
  state->rank = rank();
  state->world_size = world_size();
  state->comm_name = name();
  state->backend = std::string(backend_name());
  return state;
}

Work Communicator::number_and_launch(Collective collective, Stream& producer) {
  // Numbering and enqueueing happen together, so the comm stream sees collectives in number order.
  std::lock_guard lock(sequence_mutex_);
  collective.desc.sequence = next_sequence_;
  Work work = launch(std::move(collective), producer);
  ++next_sequence_;
  return work;
}

Work Communicator::all_reduce(BufferView in, BufferView out, ReduceOp op, Stream& producer) {
  constexpr auto kind = CollectiveKind::all_reduce;
  check_view(in, "input", kind);
  check_view(out, "output", kind);
  if (in.dtype != out.dtype || in.numel != out.numel)
    throw std::invalid_argument(
        fmt::format("all_reduce: input ({}) and output ({}) differ in size or dtype", view_str(in), view_str(out)));
  bool in_place = in.data == out.data;
  if (!in_place && views_overlap(in, out))
    throw std::invalid_argument("all_reduce: input and output overlap without being the same view");
  Collective c{{kind, op, in.dtype, in.numel}, {in}, {out}, in_place};
  return number_and_launch(std::move(c), producer);
}

Work Communicator::all_reduce_many(std::span<const BufferView> tensors, ReduceOp op, Stream& producer) {
  constexpr auto kind = CollectiveKind::all_reduce;
  if (tensors.empty()) throw std::invalid_argument("all_reduce_many: no tensors");
  std::size_t total = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    check_view(tensors[i], fmt::format("tensor {}", i), kind);
    if (tensors[i].dtype != tensors[0].dtype)
      throw std::invalid_argument(fmt::format("all_reduce_many: tensor {} is {} but tensor 0 is {}", i,
                                              dtype_name(tensors[i].dtype), dtype_name(tensors[0].dtype)));
    for (std::size_t j = 0; j < i; ++j)
      if (views_overlap(tensors[i], tensors[j]))
        throw std::invalid_argument(fmt::format("all_reduce_many: tensors {} and {} overlap", j, i));
    total += tensors[i].numel;
  }
  Collective c{{kind, op, tensors[0].dtype, total}, {tensors.begin(), tensors.end()}, {tensors.begin(), tensors.end()}, true};
  c.desc.tensors = static_cast<int>(tensors.size());
  return number_and_launch(std::move(c), producer);
}

Work Communicator::reduce_scatter(BufferView in, BufferView out, ReduceOp op, Stream& producer) {
  constexpr auto kind = CollectiveKind::reduce_scatter;
  check_view(in, "input", kind);
  check_view(out, "output", kind);
  if (in.dtype != out.dtype)
    throw std::invalid_argument(
        fmt::format("reduce_scatter: input ({}) and output ({}) differ in dtype", view_str(in), view_str(out)));
  const std::size_t n = static_cast<std::size_t>(world_size());
  if (in.numel != out.numel * n)
    throw std::invalid_argument(fmt::format(
        "reduce_scatter: the input must be {} equal chunks of the output's size ({} elements), so {} elements, "
        "but it has {}{}",
        n, out.numel, out.numel * n, in.numel,
        in.numel % n ? fmt::format(" (not divisible by the world size {}: pad it to {})", n, (in.numel / n + 1) * n)
                     : ""));
  BufferView own_chunk = in.slice(static_cast<std::size_t>(rank()) * out.numel, out.numel);
  bool in_place = out.numel > 0 && out.data == own_chunk.data;
  if (!in_place && views_overlap(in, out))
    throw std::invalid_argument("reduce_scatter: output overlaps the input without being this rank's chunk of it");
  Collective c{{kind, op, in.dtype, in.numel}, {in}, {out}, in_place};
  return number_and_launch(std::move(c), producer);
}

Work Communicator::all_gather(BufferView in, BufferView out, Stream& producer) {
  constexpr auto kind = CollectiveKind::all_gather;
  check_view(in, "input", kind);
  check_view(out, "output", kind);
  const std::size_t n = static_cast<std::size_t>(world_size());
  if (in.dtype != out.dtype || out.numel != in.numel * n)
    throw std::invalid_argument(fmt::format("all_gather: the output must be {} chunks of the input ({}), but it is {}",
                                            n, view_str(in), view_str(out)));
  std::vector<BufferView> chunks;
  for (std::size_t r = 0; r < n; ++r) chunks.push_back(out.slice(r * in.numel, in.numel));
  return all_gather(in, chunks, producer);
}

Work Communicator::all_gather(BufferView in, std::span<const BufferView> chunks, Stream& producer) {
  const bool in_place = check_all_gather(in, chunks);
  const std::size_t n = chunks.size();
  Collective c{{CollectiveKind::all_gather, ReduceOp::sum, in.dtype, in.numel * n},
               {in},
               {chunks.begin(), chunks.end()},
               in_place};
  return number_and_launch(std::move(c), producer);
}

bool Communicator::check_all_gather(BufferView in, std::span<const BufferView> chunks) const {
  constexpr auto kind = CollectiveKind::all_gather;
  check_view(in, "input", kind);
  const std::size_t n = static_cast<std::size_t>(world_size());
  if (chunks.size() != n)
    throw std::invalid_argument(
        fmt::format("all_gather: {} output chunks for a world of {} ranks (one per rank)", chunks.size(), n));
  for (std::size_t r = 0; r < n; ++r) {
    check_view(chunks[r], fmt::format("output chunk {}", r), kind);
    if (chunks[r].dtype != in.dtype || chunks[r].numel != in.numel)
      throw std::invalid_argument(fmt::format("all_gather: output chunk {} ({}) differs from the input ({})", r,
                                              view_str(chunks[r]), view_str(in)));
    for (std::size_t q = 0; q < r; ++q)
      if (views_overlap(chunks[q], chunks[r]))
        throw std::invalid_argument(fmt::format("all_gather: output chunks {} and {} overlap", q, r));
  }
  const std::size_t own = static_cast<std::size_t>(rank());
  bool in_place = in.numel > 0 && in.data == chunks[own].data;
  if (!in_place)
    for (const BufferView& chunk : chunks)
      if (views_overlap(in, chunk))
        throw std::invalid_argument("all_gather: input overlaps the output without being this rank's chunk of it");
  return in_place;
}

Work Communicator::broadcast(BufferView in, BufferView out, int root, Stream& producer) {
  constexpr auto kind = CollectiveKind::broadcast;
  check_view(in, "input", kind);
  check_view(out, "output", kind);
  if (root < 0 || root >= world_size())
    throw std::invalid_argument(fmt::format("broadcast: root {} is not a rank of this communicator (0..{})", root,
                                            world_size() - 1));
  if (in.dtype != out.dtype || in.numel != out.numel)
    throw std::invalid_argument(
        fmt::format("broadcast: input ({}) and output ({}) differ in size or dtype", view_str(in), view_str(out)));
  bool in_place = in.data == out.data;
  if (!in_place && views_overlap(in, out))
    throw std::invalid_argument("broadcast: input and output overlap without being the same view");
  Collective c{{kind, ReduceOp::sum, in.dtype, in.numel, root}, {in}, {out}, in_place};
  return number_and_launch(std::move(c), producer);
}

Work Communicator::barrier(Stream& producer) {
  Collective c{{CollectiveKind::barrier}, {}, {}, true};
  return number_and_launch(std::move(c), producer);
}

}  // namespace zt
