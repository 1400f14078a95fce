#include "comm/gpu_assignment.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <vector>

#include "comm/mpi_handles.h"
#include "core/cuda/cuda_check.h"
#include "comm/mpi_check.h"

namespace zt {

GpuSharing find_shared_gpus(MPI_Comm comm, Device device) {
  constexpr int kBusIdLength = 32;
  std::array<char, kBusIdLength> mine{};
  ZT_CUDA_CHECK(cudaDeviceGetPCIBusId(mine.data(), kBusIdLength, device.index));

  int rank = 0;
  ZT_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_Comm host_comm = MPI_COMM_NULL;
  ZT_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host_comm));
  MpiComm host(host_comm);
  int host_size = 0;
  ZT_MPI_CHECK(MPI_Comm_size(host.get(), &host_size));
  std::vector<char> bus_ids(static_cast<std::size_t>(host_size) * kBusIdLength);
  std::vector<int> ranks(static_cast<std::size_t>(host_size));
  ZT_MPI_CHECK(MPI_Allgather(mine.data(), kBusIdLength, MPI_CHAR, bus_ids.data(), kBusIdLength, MPI_CHAR, host.get()));
  ZT_MPI_CHECK(MPI_Allgather(&rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, host.get()));

  GpuSharing result;
  int local_shared = 0;
  for (int a = 0; a < host_size && !local_shared; ++a)
    for (int b = a + 1; b < host_size && !local_shared; ++b)
      if (std::strncmp(&bus_ids[a * kBusIdLength], &bus_ids[b * kBusIdLength], kBusIdLength) == 0) {
        local_shared = 1;
        result.detail = fmt::format("ranks {} and {} both use the GPU at PCI bus id {}", ranks[a], ranks[b],
                                    &bus_ids[a * kBusIdLength]);
      }
  int any_shared = 0;
  ZT_MPI_CHECK(MPI_Allreduce(&local_shared, &any_shared, 1, MPI_INT, MPI_MAX, comm));
  result.shared = any_shared != 0;
  if (result.shared && result.detail.empty()) result.detail = "ranks on another host share a GPU";
  return result;
}

}  // namespace zt
