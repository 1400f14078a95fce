#include "tests/comm/comm_test_util.h"

#include <fmt/format.h>

#include "core/device_ops.h"
#include "core/cpu_stream.h"

namespace zt::test {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void write_buffer(const BufferView& view, const std::vector<float>& values) {
  Buffer host = Buffer::host(view.dtype, values.size(), MemCategory::workspace, Buffer::HostMemory::pageable);
  convert_host(values.data(), DType::f32, host.data(), view.dtype, values.size());
  copy_now(view, host.view());
}

Buffer make_buffer(Device device, DType dtype, const std::vector<float>& values) {
  Buffer buffer(device, dtype, values.size(), MemCategory::workspace);
  write_buffer(buffer.view(), values);
  return buffer;
}

std::vector<float> read_buffer(const BufferView& view) {
  Buffer host = Buffer::host(view.dtype, view.numel, MemCategory::workspace, Buffer::HostMemory::pageable);
  copy_now(host.view(), view);
  std::vector<float> values(view.numel);
  convert_host(host.data(), view.dtype, values.data(), DType::f32, view.numel);
  return values;
}

std::size_t value_period(DType dtype) {
  switch (dtype) {
    case DType::f32: return 65536;
    case DType::bf16: return 16;
    case DType::f16: return 128;
    case DType::i32: break;
  }
  return 1;
}

namespace {
float pattern(std::size_t i, std::size_t chunk_size, DType dtype) {
  std::size_t chunk = chunk_size ? i / chunk_size : 0;
  std::size_t within = chunk_size ? i % chunk_size : i;
  return static_cast<float>(1 + (chunk + within) % value_period(dtype));
}
}  // namespace

float reduction_input(int rank, std::size_t i, std::size_t chunk_size, DType dtype) {
  return static_cast<float>(1 << rank) * pattern(i, chunk_size, dtype);
}

float reduction_sum(int world, std::size_t i, std::size_t chunk_size, DType dtype) {
  return static_cast<float>((1 << world) - 1) * pattern(i, chunk_size, dtype);
}

float gather_input(int rank, std::size_t j, DType dtype) {
  return static_cast<float>(1 + (3 * static_cast<std::size_t>(rank) + j) % value_period(dtype)) +
         (rank % 2 ? 0.5f : 0.0f);
}

testing::AssertionResult same_values(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size())
    return testing::AssertionFailure() << "size " << actual.size() << " != expected " << expected.size();
  std::size_t wrong = 0;
  std::string detail;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == expected[i]) continue;
    if (++wrong <= 5) detail += fmt::format("\n  [{}] = {} (expected {})", i, actual[i], expected[i]);
  }
  if (wrong == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << wrong << " of " << actual.size() << " elements wrong:" << detail;
}

CommOptions mpi_test_options() {
  CommOptions options;
  options.backend = CommBackend::mpi;
  options.timeout_s = 60;
  return options;
}

Device test_device(bool gpu) {
  if (!gpu) return Device::cpu();
  // One GPU per local rank where there are enough, otherwise all ranks share GPU 0 (staged MPI).
  int count = cuda_device_count();
  int local_rank = 0;
  MPI_Comm host = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  MPI_Comm_rank(host, &local_rank);
  MPI_Comm_free(&host);
  return Device::cuda(count > 0 ? local_rank % count : 0);
}

}  // namespace zt::test
