#include "comm/cuda/nccl_communicator.h"

#include <fmt/format.h>

#include "comm/consistency_check.h"
#include "comm/gpu_assignment.h"
#include "comm/cuda/nccl_check.h"
#include "core/cuda/cuda_check.h"
#include "core/log.h"
#include "comm/mpi_check.h"

namespace zt {

namespace {

ncclDataType_t nccl_datatype(DType dtype) {
  switch (dtype) {
    case DType::f32: return ncclFloat32;
    case DType::bf16: return ncclBfloat16;
    case DType::f16: return ncclFloat16;
    case DType::i32: return ncclInt32;
  }
  throw std::logic_error("nccl_datatype: unknown dtype");
}

// On one rank the average is the sum. NCCL 2.28.3 (seen on an H100) leaves the last n % 4 elements
// of an out-of-place ncclAvg on a one-rank communicator unwritten; ncclSum copies them all.
ncclRedOp_t nccl_op(ReduceOp op, int world_size) {
  return op == ReduceOp::sum || world_size == 1 ? ncclSum : ncclAvg;
}

LaunchInfo checked_launch_info(MPI_Comm parent, Device device) {
  require_mpi_ready();
  if (!device.is_cuda())
    throw UserError(fmt::format("the nccl comm backend takes GPU buffers, but the device is {} (use comm.backend "
                                "mpi or auto for CPU buffers)",
                                device.str()));
  require_available(device);
  return query_launch_info(parent);
}

// Rank 0 creates the id; MPI carries it to the others.
ncclComm_t init_nccl(MPI_Comm comm, Device device, int rank, int world_size) {
  ncclUniqueId id{};
  if (rank == 0) ZT_NCCL_CHECK(ncclGetUniqueId(&id));
  ZT_MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm));
  activate(device);
  ncclComm_t nccl = nullptr;
  ZT_NCCL_CHECK(ncclCommInitRank(&nccl, world_size, id, rank));
  return nccl;
}

}  // namespace

NcclComm::~NcclComm() { reset(); }

NcclComm::NcclComm(NcclComm&& other) noexcept
    : comm_(std::exchange(other.comm_, nullptr)), failed_(std::exchange(other.failed_, false)) {}

NcclComm& NcclComm::operator=(NcclComm&& other) noexcept {
  if (this != &other) {
    reset();
    comm_ = std::exchange(other.comm_, nullptr);
    failed_ = std::exchange(other.failed_, false);
  }
  return *this;
}

void NcclComm::reset() noexcept {
  if (!comm_) return;
  ncclResult_t result = failed_ ? ncclCommAbort(comm_) : ncclCommDestroy(comm_);
  if (result != ncclSuccess) log::error("closing a NCCL communicator failed: {}", ncclGetErrorString(result));
  comm_ = nullptr;
}

NcclCommunicator::NcclCommunicator(MPI_Comm parent, Device device, CommOptions options,
                                   Watchdog::TimeoutHandler on_timeout)
    : Communicator(checked_launch_info(parent, device), std::move(options)),
      device_(device),
      on_timeout_(on_timeout),
      mpi_(MpiComm::duplicate(parent)),
      watchdog_(this->options().timeout(), std::move(on_timeout),
                {this->options().flight_record_dir, this->options().name, rank(), world_size()},
                [device] { activate(device); }),
      stream_(device.index, CudaStream::Priority::high),
      barrier_scratch_(device, DType::f32, 1, MemCategory::comm_staging) {
  // Every rank learns about a collision, so all of them refuse instead of some hanging in NCCL init.
  GpuSharing sharing = find_shared_gpus(mpi_.get(), device_);
  if (sharing.shared)
    throw UserError(fmt::format("the nccl comm backend needs one GPU per rank, but {}; use comm.backend mpi (host "
                                "staging) or auto, or start one rank per GPU",
                                sharing.detail));
  nccl_ = NcclComm(init_nccl(mpi_.get(), device_, rank(), world_size()));
  // A peer that dies makes NCCL fail asynchronously: report it within a poll, not at the timeout.
  watchdog_.set_health_check([comm = nccl_.get(), name = name(), rank = rank()]() -> std::string {
    ncclResult_t state = ncclSuccess;
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess || state == ncclSuccess || state == ncclInProgress)
      return {};
    return fmt::format("NCCL communicator '{}' failed on rank {}: {} (a peer process died, or the network between "
                       "ranks failed)",
                       name, rank, ncclGetErrorString(state));
  });
}

NcclCommunicator::~NcclCommunicator() {
  watchdog_.set_health_check({});  // the NCCL communicator goes before the watchdog
  try {
    stream_.synchronize();
  } catch (const std::exception& e) {
    nccl_.mark_failed();
    log::debug("nccl communicator '{}' closed after a failed collective: {}", name(), e.what());
  }
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key, std::string name) {
  MPI_Comm sub = MPI_COMM_NULL;
  ZT_MPI_CHECK(MPI_Comm_split(mpi_.get(), color < 0 ? MPI_UNDEFINED : color, key, &sub));
  MpiComm owned(sub);
  if (!owned) return nullptr;
  CommOptions sub_options = options();
  sub_options.name = std::move(name);
  return std::make_unique<NcclCommunicator>(owned.get(), device_, std::move(sub_options), on_timeout_);
}

Work NcclCommunicator::launch(Collective collective, Stream& producer) {
  auto state = new_work_state(collective);
  try {
    activate(device_);
    // NCCL launches from the calling thread, so the check runs here, blocking, before the launch.
    if (options().debug_check) check_same_collective(mpi_.get(), collective.desc, name());
    stream_.wait(producer.record());
    state->started_event = stream_.record();
    enqueue_nccl(collective);
    state->done = stream_.record();
  } catch (const CommError&) {
    nccl_.mark_failed();
    throw;
  } catch (const std::exception& e) {
    nccl_.mark_failed();
    throw CommError(fmt::format("{} failed: {}", state->where(), e.what()));
  }
  watchdog_.track(state);
  return Work(state);
}

void NcclCommunicator::enqueue_nccl(const Collective& c) {
  ncclComm_t comm = nccl_.get();
  cudaStream_t stream = stream_.handle();
  const CollectiveDesc& d = c.desc;
  ncclDataType_t type = nccl_datatype(d.dtype);
  switch (d.kind) {
    case CollectiveKind::barrier:
      ZT_NCCL_CHECK(ncclAllReduce(barrier_scratch_.data(), barrier_scratch_.data(), 1, ncclFloat32, ncclSum, comm,
                                  stream));
      return;
    case CollectiveKind::all_reduce:
    {
      NcclGroup group;
      for (std::size_t t = 0; t < c.in.size(); ++t)
        if (c.in[t].numel)
          ZT_NCCL_CHECK(ncclAllReduce(c.in[t].data, c.out[t].data, c.in[t].numel, type, nccl_op(d.op, world_size()), comm, stream));
      group.end();
      return;
    }
    case CollectiveKind::reduce_scatter:
      // In place when out is this rank's chunk of in: NCCL recognises that layout itself.
      if (c.out[0].numel)
        ZT_NCCL_CHECK(
            ncclReduceScatter(c.in[0].data, c.out[0].data, c.out[0].numel, type, nccl_op(d.op, world_size()), comm, stream));
      return;
    case CollectiveKind::all_gather: {
      const BufferView& in = c.in[0];
      if (in.numel == 0) return;
      bool contiguous = true;
      for (std::size_t q = 1; q < c.out.size(); ++q)
        contiguous = contiguous && c.out[q].data == static_cast<std::byte*>(c.out[0].data) + q * in.bytes();
      if (contiguous) {
        ZT_NCCL_CHECK(ncclAllGather(in.data, c.out[0].data, in.numel, type, comm, stream));
        return;
      }
      // Chunks apart: rank q's chunk broadcast from q into its place, all in one group (NCCL's
      // pattern for an all-gather into separate buffers).
      NcclGroup group;
      for (std::size_t q = 0; q < c.out.size(); ++q)
        ZT_NCCL_CHECK(ncclBroadcast(q == static_cast<std::size_t>(rank()) ? in.data : c.out[q].data, c.out[q].data,
                                    in.numel, type, static_cast<int>(q), comm, stream));
      group.end();
      return;
    }
    case CollectiveKind::broadcast:
      if (c.in[0].numel)
        ZT_NCCL_CHECK(ncclBroadcast(c.in[0].data, c.out[0].data, c.in[0].numel, type, d.root, comm, stream));
      return;
  }
}

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm parent, Device device, const CommOptions& options,
                                                     Watchdog::TimeoutHandler on_timeout) {
  return std::make_unique<NcclCommunicator>(parent, device, options, std::move(on_timeout));
}

}  // namespace zt
