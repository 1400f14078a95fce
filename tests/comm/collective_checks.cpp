#include "tests/comm/collective_checks.h"

#include <gtest/gtest.h>

#include "core/cpu_stream.h"
#include "core/dtype.h"
#include "tests/comm/comm_test_util.h"

namespace zt::test {

std::string CollectiveCase::name() const {
  std::string text(collective_name(kind));
  if (kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter) text += "_" + std::string(reduce_op_name(op));
  return text;
}

std::vector<CollectiveCase> all_collective_cases() {
  return {{CollectiveKind::all_reduce, ReduceOp::sum},     {CollectiveKind::all_reduce, ReduceOp::avg},
          {CollectiveKind::reduce_scatter, ReduceOp::sum}, {CollectiveKind::reduce_scatter, ReduceOp::avg},
          {CollectiveKind::all_gather},                    {CollectiveKind::broadcast}};
}

std::vector<std::size_t> test_sizes() { return {0, 1, 2, 3, 7, 13, 31, 1021, 4099, 65537, (1u << 20) + 3}; }

namespace {

constexpr float kSentinel = -7.0f;

// x rounded to the nearest value of dtype, as a 16-bit buffer stores it.
float representable(float x, DType dtype) {
  switch (dtype) {
    case DType::f32: return x;
    case DType::bf16: return bf16_to_float(float_to_bf16(x));
    case DType::f16: return f16_to_float(float_to_f16(x));
    case DType::i32: break;
  }
  return x;
}

// The sums are exact in every dtype; an average over a world size that is not a power of two is
// not, and a 16-bit buffer holds it rounded once more (reduction_ops.h).
float reduced(const CollectiveCase& c, int world, std::size_t i, std::size_t chunk, DType dtype) {
  float sum = reduction_sum(world, i, chunk, dtype);
  return c.op == ReduceOp::avg ? representable(sum / static_cast<float>(world), dtype) : sum;
}

void check_all_reduce(Communicator& comm, const CollectiveCase& c, DType dtype, bool in_place, std::size_t size) {
  const int n = comm.world_size();
  const int r = comm.rank();
  std::vector<float> input(size), expected(size);
  for (std::size_t i = 0; i < size; ++i) {
    input[i] = reduction_input(r, i, size, dtype);
    expected[i] = reduced(c, n, i, size, dtype);
  }
  CpuStream compute(CpuStream::Mode::inline_on_caller, "compute");
  Buffer in = make_buffer(comm.device(), dtype, input);
  if (in_place) {
    comm.all_reduce(in.view(), c.op, compute).wait();
    EXPECT_TRUE(same_values(read_buffer(in.view()), expected));
    return;
  }
  Buffer out = make_buffer(comm.device(), dtype, std::vector<float>(size, kSentinel));
  comm.all_reduce(in.view(), out.view(), c.op, compute).wait();
  EXPECT_TRUE(same_values(read_buffer(out.view()), expected));
  EXPECT_TRUE(same_values(read_buffer(in.view()), input)) << "the input of an out-of-place all_reduce changed";
}

void check_reduce_scatter(Communicator& comm, const CollectiveCase& c, DType dtype, bool in_place, std::size_t chunk) {
  const int n = comm.world_size();
  const int r = comm.rank();
  const std::size_t total = chunk * static_cast<std::size_t>(n);
  std::vector<float> input(total), expected(chunk);
  for (std::size_t i = 0; i < total; ++i) input[i] = reduction_input(r, i, chunk, dtype);
  for (std::size_t j = 0; j < chunk; ++j) expected[j] = reduced(c, n, static_cast<std::size_t>(r) * chunk + j, chunk, dtype);
  CpuStream compute(CpuStream::Mode::inline_on_caller, "compute");
  Buffer in = make_buffer(comm.device(), dtype, input);
  if (in_place) {
    BufferView own = in.slice(static_cast<std::size_t>(r) * chunk, chunk);
    comm.reduce_scatter(in.view(), own, c.op, compute).wait();
    std::vector<float> after = read_buffer(in.view());
    std::vector<float> expected_all = input;
    std::copy(expected.begin(), expected.end(), expected_all.begin() + static_cast<std::ptrdiff_t>(r * chunk));
    EXPECT_TRUE(same_values(after, expected_all)) << "in place: own chunk reduced, other chunks unchanged";
    return;
  }
  Buffer out = make_buffer(comm.device(), dtype, std::vector<float>(chunk, kSentinel));
  comm.reduce_scatter(in.view(), out.view(), c.op, compute).wait();
  EXPECT_TRUE(same_values(read_buffer(out.view()), expected));
  EXPECT_TRUE(same_values(read_buffer(in.view()), input)) << "the input of an out-of-place reduce_scatter changed";
}

void check_all_gather(Communicator& comm, const AllGatherUnderTest& gather, DType dtype, bool in_place,
                      std::size_t chunk) {
  const int n = comm.world_size();
  const int r = comm.rank();
  std::vector<float> input(chunk), expected(chunk * static_cast<std::size_t>(n));
  for (std::size_t j = 0; j < chunk; ++j) input[j] = gather_input(r, j, dtype);
  for (int k = 0; k < n; ++k)
    for (std::size_t j = 0; j < chunk; ++j) expected[static_cast<std::size_t>(k) * chunk + j] = gather_input(k, j, dtype);
  CpuStream compute(CpuStream::Mode::inline_on_caller, "compute");
  std::vector<float> initial(expected.size(), kSentinel);
  if (in_place) {
    std::copy(input.begin(), input.end(), initial.begin() + static_cast<std::ptrdiff_t>(r * chunk));
    Buffer out = make_buffer(comm.device(), dtype, initial);
    gather.into_one_buffer(out.slice(static_cast<std::size_t>(r) * chunk, chunk), out.view(), compute).wait();
    EXPECT_TRUE(same_values(read_buffer(out.view()), expected));
    return;
  }
  Buffer in = make_buffer(comm.device(), dtype, input);
  Buffer out = make_buffer(comm.device(), dtype, initial);
  gather.into_one_buffer(in.view(), out.view(), compute).wait();
  EXPECT_TRUE(same_values(read_buffer(out.view()), expected));
}

// The chunks apart, in reverse rank order, with 3 elements between them that must stay untouched:
// the layout of a part of every rank's chunk of a larger buffer.
void check_all_gather_into_chunks(Communicator& comm, const AllGatherUnderTest& gather, DType dtype, bool in_place,
                                  std::size_t chunk) {
  const std::size_t n = static_cast<std::size_t>(comm.world_size());
  const int r = comm.rank();
  const std::size_t stride = chunk + 3;
  auto place = [&](std::size_t q) { return (n - 1 - q) * stride + 1; };
  std::vector<float> initial(n * stride + 1, kSentinel), expected = initial;
  for (std::size_t q = 0; q < n; ++q)
    for (std::size_t j = 0; j < chunk; ++j) expected[place(q) + j] = gather_input(static_cast<int>(q), j, dtype);
  std::vector<float> input(chunk);
  for (std::size_t j = 0; j < chunk; ++j) input[j] = gather_input(r, j, dtype);
  if (in_place) std::copy(input.begin(), input.end(), initial.begin() + static_cast<std::ptrdiff_t>(place(r)));
  Buffer out = make_buffer(comm.device(), dtype, initial);
  std::vector<BufferView> chunks;
  for (std::size_t q = 0; q < n; ++q) chunks.push_back(out.slice(place(q), chunk));
  CpuStream compute(CpuStream::Mode::inline_on_caller, "compute");
  Buffer in = make_buffer(comm.device(), dtype, input);
  gather.into_chunks(in_place ? chunks[static_cast<std::size_t>(r)] : in.view(), chunks, compute).wait();
  EXPECT_TRUE(same_values(read_buffer(out.view()), expected)) << "all_gather into separate chunks";
}

void check_broadcast(Communicator& comm, DType dtype, bool in_place, std::size_t size) {
  const int n = comm.world_size();
  const int r = comm.rank();
  CpuStream compute(CpuStream::Mode::inline_on_caller, "compute");
  for (int root : {0, n - 1}) {
    SCOPED_TRACE("root " + std::to_string(root));
    std::vector<float> input(size), expected(size);
    for (std::size_t j = 0; j < size; ++j) {
      input[j] = gather_input(r, j, dtype);
      expected[j] = gather_input(root, j, dtype);
    }
    Buffer in = make_buffer(comm.device(), dtype, input);
    if (in_place) {
      comm.broadcast(in.view(), root, compute).wait();
      EXPECT_TRUE(same_values(read_buffer(in.view()), expected));
      continue;
    }
    Buffer out = make_buffer(comm.device(), dtype, std::vector<float>(size, kSentinel));
    comm.broadcast(in.view(), out.view(), root, compute).wait();
    EXPECT_TRUE(same_values(read_buffer(out.view()), expected));
    EXPECT_TRUE(same_values(read_buffer(in.view()), input)) << "the input of an out-of-place broadcast changed";
  }
}

}  // namespace

void check_all_gather_forms(Communicator& comm, const AllGatherUnderTest& gather, DType dtype, bool in_place,
                            std::size_t chunk) {
  check_all_gather(comm, gather, dtype, in_place, chunk);
  check_all_gather_into_chunks(comm, gather, dtype, in_place, chunk);
}

void check_collective(Communicator& comm, const CollectiveCase& c, DType dtype, bool in_place, std::size_t size) {
  SCOPED_TRACE(c.name() + " " + std::string(dtype_name(dtype)) + (in_place ? " in-place" : " out-of-place") +
               " size " + std::to_string(size) + " on " + comm.device().str() + " (" +
               std::string(comm.backend_name()) + ")");
  switch (c.kind) {
    case CollectiveKind::all_reduce: check_all_reduce(comm, c, dtype, in_place, size); break;
    case CollectiveKind::reduce_scatter: check_reduce_scatter(comm, c, dtype, in_place, size); break;
    case CollectiveKind::all_gather: {
      const AllGatherUnderTest own{
          [&](BufferView in, BufferView out, Stream& producer) { return comm.all_gather(in, out, producer); },
          [&](BufferView in, std::span<const BufferView> chunks, Stream& producer) {
            return comm.all_gather(in, chunks, producer);
          }};
      check_all_gather_forms(comm, own, dtype, in_place, size);
      break;
    }
    case CollectiveKind::broadcast: check_broadcast(comm, dtype, in_place, size); break;
    case CollectiveKind::barrier: comm.barrier(comm.comm_stream()).wait(); break;
  }
}

}  // namespace zt::test
