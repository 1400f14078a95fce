#include "comm/mpi_communicator.h"

#include <fmt/format.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <vector>

#include "comm/consistency_check.h"
#include "core/device_ops.h"
#include "core/log.h"
#include "comm/mpi_check.h"
#include "comm/mpi_progress.h"
#include "comm/mpi_ring.h"

namespace zt {

namespace {

// MPI counts are int. all_reduce and broadcast are element-wise, so larger buffers go in pieces.
constexpr std::size_t kMaxPiece = std::size_t{1} << 30;

int as_mpi_count(std::size_t count, const CollectiveDesc& desc) {
  if (count > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument(fmt::format("{}: a chunk of {} elements exceeds what one MPI call can take ({})",
                                            desc.str(), count, INT_MAX));
  return static_cast<int>(count);
}

// Blocking copy between host and device memory on the calling (comm) thread, which has already
// waited for the collective's producer: no device-wide synchronisation (copy_now would make one).
void staging_copy(BufferView dst, BufferView src) {
  CpuStream here(CpuStream::Mode::inline_on_caller, "staging-copy");
  copy_async(dst, src, here);
}

// Everything a communicator needs before it starts: a usable MPI and device, and where it sits.
LaunchInfo checked_launch_info(MPI_Comm parent, Device device) {
  require_mpi_ready();
  require_available(device);
  return query_launch_info(parent);
}

// What a thread of this communicator runs first: GPU ranks make their device current.
std::function<void()> device_setup(Device device) {
  if (device.is_cpu()) return {};
  return [device] { activate(device); };
}

Buffer::HostMemory staging_memory(Device device) {
  return device.is_cuda() ? Buffer::HostMemory::pinned : Buffer::HostMemory::pageable;
}

}  // namespace

bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

MpiCommunicator::MpiCommunicator(MPI_Comm parent, Device device, CommOptions options,
                                 Watchdog::TimeoutHandler on_timeout)
    : Communicator(checked_launch_info(parent, device), std::move(options)),
      device_(device),
      cuda_aware_(device.is_cuda() && mpi_is_cuda_aware()),
      on_timeout_(on_timeout),
      comm_(MpiComm::duplicate(parent)),
      watchdog_(this->options().timeout(), std::move(on_timeout),
                {this->options().flight_record_dir, this->options().name, rank(), world_size()},
                device_setup(device)),
      staging_(staging_memory(device)),
      scratch_(Buffer::HostMemory::pageable),
      stream_(CpuStream::Mode::worker_thread, "comm:" + this->options().name, device_setup(device)) {
  if (device_.is_cuda())
    log::debug("mpi communicator '{}' on {}: GPU buffers {}", name(), device_.str(),
               cuda_aware_ ? "go to CUDA-aware MPI directly where no host arithmetic is needed"
                           : "are staged through pinned host memory");
}

MpiCommunicator::~MpiCommunicator() {
  try {
    stream_.synchronize();
  } catch (const std::exception& e) {
    log::debug("mpi communicator '{}' closed after a failed collective: {}", name(), e.what());
  }
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key, std::string name) {
  // MPI_Comm_split is a collective on comm_, so it runs on the comm thread in issue order.
  MPI_Comm sub = MPI_COMM_NULL;
  stream_.enqueue([&] { ZT_MPI_CHECK(MPI_Comm_split(comm_.get(), color < 0 ? MPI_UNDEFINED : color, key, &sub)); });
  stream_.synchronize();
  MpiComm owned(sub);
  if (!owned) return nullptr;
  CommOptions sub_options = options();
  sub_options.name = std::move(name);
  return std::make_unique<MpiCommunicator>(owned.get(), device_, std::move(sub_options), on_timeout_);
}

bool MpiCommunicator::passes_device_buffers_directly(const CollectiveDesc& desc) const {
  if (!cuda_aware_) return false;
  // MPI's own reductions only exist for f32 sums; bf16/f16 ops and avg run on the host.
  switch (desc.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::broadcast:
    case CollectiveKind::barrier: return true;
    case CollectiveKind::all_reduce: return desc.dtype == DType::f32 && desc.op == ReduceOp::sum;
    case CollectiveKind::reduce_scatter: return false;  // its ring adds on the host (mpi_ring.h)
  }
  return false;
}

Work MpiCommunicator::launch(Collective collective, Stream& producer) {
  auto state = new_work_state(collective);
  stream_.wait(producer.record());
  stream_.enqueue([this, state, c = std::move(collective)] {
    state->mark_started();
    try {
      if (options().debug_check) check_same_collective(comm_.get(), c.desc, name());
      run(c);
    } catch (const CommError&) {
      throw;
    } catch (const std::exception& e) {
      throw CommError(fmt::format("{} failed: {}", state->where(), e.what()));
    }
  });
  state->done = stream_.record();
  watchdog_.track(state);
  return Work(state);
}

void MpiCommunicator::run(const Collective& c) {
  if (c.desc.kind == CollectiveKind::barrier) {  // no buffers, nothing to stage
    run_on_host_memory(c.desc.kind, c.desc.op, BufferView{}, BufferView{}, true, 0);
    return;
  }
  if (device_.is_cuda() && !passes_device_buffers_directly(c.desc)) {
    run_staged(c);
    return;
  }
  if (c.desc.kind == CollectiveKind::all_gather) {  // one input, world_size output chunks
    as_mpi_count(c.in[0].numel, c.desc);
    // This rank's chunk by a copy that knows the device: with CUDA-aware MPI these are GPU buffers.
    const BufferView& own = c.out[static_cast<std::size_t>(rank())];
    if (!c.in_place) staging_copy(own, c.in[0]);
    ring_all_gather(comm_.get(), own, c.out, true, options().poll_interval());  // see mpi_ring.h
    return;
  }
  for (std::size_t t = 0; t < c.in.size(); ++t)
    run_on_host_memory(c.desc.kind, c.desc.op, c.in[t], c.out[t], c.in_place, c.desc.root);
}

void MpiCommunicator::reserve_workspace(CollectiveKind kind, DType dtype, std::size_t numel) {
  const std::size_t p = static_cast<std::size_t>(world_size()), size = dtype_size(dtype);
  // What run_staged and ring_reduce_scatter take for such a collective; an average is the
  // operation staged in the most cases.
  CollectiveDesc desc;
  desc.kind = kind, desc.dtype = dtype, desc.op = ReduceOp::avg, desc.count = numel;
  std::size_t staging = 0, scratch = 0;
  if (device_.is_cuda() && !passes_device_buffers_directly(desc))
    staging = kind == CollectiveKind::reduce_scatter ? numel + numel / p : numel;
  // The ring's partial sums: two chunks from 3 ranks on; on 2 ranks one, used only in place.
  if (kind == CollectiveKind::reduce_scatter && p > 1) scratch = (p > 2 ? 2 : 1) * (numel / p);
  stream_.enqueue([this, staging_bytes = staging * size, scratch_bytes = scratch * size] {
    staging_.reserve(staging_bytes);
    scratch_.reserve(scratch_bytes);
  });
  stream_.synchronize();
}

void MpiCommunicator::run_staged(const Collective& c) {
  const std::size_t r = static_cast<std::size_t>(rank());
  if (c.desc.kind == CollectiveKind::all_gather) {  // gathered on the host, then copied out chunk by chunk
    const BufferView& in = c.in[0];
    BufferView stage = staging_.get(in.dtype, in.numel * c.out.size());
    std::vector<BufferView> stage_chunks;
    for (std::size_t q = 0; q < c.out.size(); ++q) stage_chunks.push_back(stage.slice(q * in.numel, in.numel));
    staging_copy(stage_chunks[r], in);
    as_mpi_count(in.numel, c.desc);
    ring_all_gather(comm_.get(), stage_chunks[r], stage_chunks, true, options().poll_interval());
    for (std::size_t q = 0; q < c.out.size(); ++q) staging_copy(c.out[q], stage_chunks[q]);
    return;
  }
  for (std::size_t t = 0; t < c.in.size(); ++t) {
    const BufferView& in = c.in[t];
    const BufferView& out = c.out[t];
    switch (c.desc.kind) {
      case CollectiveKind::all_reduce: {
        BufferView stage = staging_.get(in.dtype, in.numel);
        staging_copy(stage, in);
        run_on_host_memory(c.desc.kind, c.desc.op, stage, stage, true, 0);
        staging_copy(out, stage);
        break;
      }
      case CollectiveKind::reduce_scatter: {
        // [ input: n chunks | result: 1 chunk ]
        BufferView stage = staging_.get(in.dtype, in.numel + out.numel);
        BufferView stage_in = stage.slice(0, in.numel);
        BufferView stage_out = stage.slice(in.numel, out.numel);
        staging_copy(stage_in, in);
        run_on_host_memory(c.desc.kind, c.desc.op, stage_in, stage_out, false, 0);
        staging_copy(out, stage_out);
        break;
      }
      case CollectiveKind::all_gather: break;  // above
      case CollectiveKind::broadcast: {
        BufferView stage = staging_.get(in.dtype, in.numel);
        if (rank() == c.desc.root) staging_copy(stage, in);
        run_on_host_memory(c.desc.kind, c.desc.op, stage, stage, true, c.desc.root);
        staging_copy(out, stage);
        break;
      }
      case CollectiveKind::barrier: break;
    }
  }
}

void MpiCommunicator::run_on_host_memory(CollectiveKind kind, ReduceOp op, const BufferView& in,
                                         const BufferView& out, bool in_place, int root) {
  MPI_Comm comm = comm_.get();
  MPI_Request request = MPI_REQUEST_NULL;
  auto complete = [&] { complete_polling(request, options().poll_interval()); };
  MPI_Datatype type = mpi_datatype(in.dtype);
  const std::size_t element = dtype_size(in.dtype);
  switch (kind) {
    case CollectiveKind::all_reduce: {
      MPI_Op sum = sum_ops_.sum(in.dtype);
      std::size_t offset = 0;
      do {  // at least once: a 0-element collective still takes part
        std::size_t count = std::min(kMaxPiece, in.numel - offset);
        auto* recv = static_cast<std::byte*>(out.data) + offset * element;
        const void* send = in_place ? MPI_IN_PLACE : static_cast<const std::byte*>(in.data) + offset * element;
        ZT_MPI_CHECK(MPI_Iallreduce(send, recv, static_cast<int>(count), type, sum, comm, &request));
        complete();
        offset += count;
      } while (offset < in.numel);
      if (op == ReduceOp::avg) divide_host(out, world_size());
      return;
    }
    case CollectiveKind::reduce_scatter: {
      // Not MPI_Ireduce_scatter_block: see mpi_ring.h (which also checks the chunk fits an MPI
      // count). In place, out is this rank's chunk of in.
      ring_reduce_scatter(comm, sum_ops_.sum(in.dtype), in, out, scratch_, options().poll_interval());
      if (op == ReduceOp::avg) divide_host(out, world_size());
      return;
    }
    case CollectiveKind::all_gather: throw std::logic_error("all_gather runs in MpiCommunicator::run");
    case CollectiveKind::broadcast: {
      if (rank() == root && !in_place) staging_copy(out, in);
      std::size_t offset = 0;
      do {
        std::size_t count = std::min(kMaxPiece, out.numel - offset);
        ZT_MPI_CHECK(MPI_Ibcast(static_cast<std::byte*>(out.data) + offset * element, static_cast<int>(count), type,
                                root, comm, &request));
        complete();
        offset += count;
      } while (offset < out.numel);
      return;
    }
    case CollectiveKind::barrier:
      ZT_MPI_CHECK(MPI_Ibarrier(comm, &request));
      complete();
      return;
  }
}

}  // namespace zt
