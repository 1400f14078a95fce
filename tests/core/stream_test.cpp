#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/buffer.h"
#include "core/device_ops.h"
#include "tests/support/gpu_skip.h"
#include "core/cpu_stream.h"
#if ZT_HAVE_CUDA
#include "core/cuda/cuda_stream.h"
#endif

namespace zt {
namespace {

using namespace std::chrono_literals;
using Mode = CpuStream::Mode;

TEST(CpuStream, WorkerRunsTasksInEnqueueOrder) {
  CpuStream stream(Mode::worker_thread);
  std::vector<int> order;
  for (int i = 0; i < 1000; ++i) stream.enqueue([&order, i] { order.push_back(i); });
  stream.synchronize();
  std::vector<int> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
}

TEST(CpuStream, InlineStreamRunsOnTheCallingThread) {
  CpuStream stream(Mode::inline_on_caller);
  std::thread::id ran_on;
  stream.enqueue([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(stream.record().query());
}

TEST(CpuStream, WorkerDoesNotBlockTheHost) {
  CpuStream stream(Mode::worker_thread);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  stream.enqueue([released] { released.wait(); });
  Event done = stream.record();
  EXPECT_FALSE(done.query());  // the host got here while the worker is still blocked
  release.set_value();
  done.synchronize();
  EXPECT_TRUE(done.query());
}

TEST(CpuStream, StreamWaitsOnAnotherStreamsEvent) {
  CpuStream producer(Mode::worker_thread, "producer");
  CpuStream consumer(Mode::worker_thread, "consumer");
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> value{0};
    int seen = -1;
    producer.enqueue([&] {
      std::this_thread::sleep_for(1ms);  // make a missing wait show up as a wrong read
      value = round + 1;
    });
    consumer.wait(producer.record());
    consumer.enqueue([&] { seen = value; });
    consumer.synchronize();
    EXPECT_EQ(seen, round + 1);
  }
}

TEST(CpuStream, InlineStreamWaitBlocksUntilTheEvent) {
  CpuStream comm(Mode::worker_thread, "comm");
  CpuStream compute(Mode::inline_on_caller, "compute");
  std::atomic<bool> done{false};
  comm.enqueue([&] {
    std::this_thread::sleep_for(20ms);
    done = true;
  });
  compute.wait(comm.record());
  EXPECT_TRUE(done);
}

TEST(CpuStream, ErrorSurfacesAtTheNextWaitAndIsSticky) {
  CpuStream stream(Mode::worker_thread);
  bool later_task_ran = false;
  stream.enqueue([] { throw std::runtime_error("kernel exploded"); });
  stream.enqueue([&] { later_task_ran = true; });
  Event after = stream.record();
  EXPECT_THROW(
      {
        try {
          after.synchronize();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "kernel exploded");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_FALSE(later_task_ran);
  EXPECT_THROW(stream.synchronize(), std::runtime_error);  // still failed: errors do not vanish
}

TEST(CpuStream, ErrorPropagatesToAStreamThatWaits) {
  CpuStream failing(Mode::worker_thread, "failing");
  CpuStream waiting(Mode::worker_thread, "waiting");
  failing.enqueue([] { throw std::runtime_error("collective failed"); });
  waiting.wait(failing.record());
  bool dependent_ran = false;
  waiting.enqueue([&] { dependent_ran = true; });
  EXPECT_THROW(waiting.synchronize(), std::runtime_error);
  EXPECT_FALSE(dependent_ran);

  CpuStream compute(Mode::inline_on_caller, "compute");
  EXPECT_THROW(compute.wait(failing.record()), std::runtime_error);
  // The inline stream reported the error to its caller and stays usable.
  bool ran = false;
  compute.enqueue([&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(CpuStream, InlineStreamThrowsAtOnce) {
  CpuStream compute(Mode::inline_on_caller);
  EXPECT_THROW(compute.enqueue([] { throw std::invalid_argument("bad shape"); }), std::invalid_argument);
}

TEST(CpuStream, EventsRecordTheTimeTheyCompleted) {
  CpuStream stream(Mode::worker_thread);
  Event start = stream.record();
  stream.enqueue([] { std::this_thread::sleep_for(30ms); });
  Event end = stream.record();
  double ms = end.elapsed_ms_since(start);
  EXPECT_GE(ms, 29.0);
  EXPECT_LT(ms, 5000.0);
  EXPECT_TRUE(Event().query());  // never recorded: complete
}

TEST(CpuStream, DestructorFinishesEnqueuedWork) {
  std::atomic<int> ran{0};
  {
    CpuStream stream(Mode::worker_thread);
    for (int i = 0; i < 50; ++i) stream.enqueue([&] { ++ran; });
  }
  EXPECT_EQ(ran, 50);
}

TEST(CopyAsync, CopiesHostBuffersInStreamOrder) {
  MemoryTracker tracker;
  Buffer src(Device::cpu(), DType::f32, 1000, MemCategory::workspace, tracker);
  Buffer dst(Device::cpu(), DType::f32, 1000, MemCategory::workspace, tracker);
  CpuStream stream(Mode::worker_thread);
  float* s = src.data_as<float>();
  stream.enqueue([s] { std::iota(s, s + 1000, 1.0f); });  // copy must see this write
  copy_async(dst.view(), src.view(), stream);
  stream.synchronize();
  EXPECT_EQ(dst.data_as<float>()[0], 1.0f);
  EXPECT_EQ(dst.data_as<float>()[999], 1000.0f);
  Buffer other(Device::cpu(), DType::bf16, 1000, MemCategory::workspace, tracker);
  EXPECT_THROW(copy_async(other.view(), src.view(), stream), std::invalid_argument);
}

TEST(CpuStream, TheCpuTypesAreReachedByTheDevice) {
  CpuStream stream(Mode::worker_thread);
  EXPECT_EQ(&as_cpu_stream(stream, "test work"), &stream);
  Event done = stream.record();
  done.synchronize();
  ASSERT_NE(as_cpu_event(done), nullptr);
  EXPECT_EQ(as_cpu_event(done), done.state().get());
  EXPECT_EQ(as_cpu_event(Event{}), nullptr);  // never recorded
}

#if ZT_HAVE_CUDA
TEST(CudaStream, EachDeviceRefusesTheOthersStreamsAndEvents) {
  ZT_SKIP_WITHOUT_CUDA_DEVICE();
  CudaStream cuda(0, CudaStream::Priority::normal);
  CpuStream cpu(Mode::inline_on_caller);
  EXPECT_EQ(&as_cuda_stream(cuda, "test work"), &cuda);
  try {
    as_cpu_stream(cuda, "host memory work");
    FAIL() << "a CUDA stream was taken for a CPU stream";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "host memory work was given a stream of cuda:0");
  }
  EXPECT_THROW(as_cuda_stream(cpu, "device memory work"), std::invalid_argument);
  Event on_gpu = cuda.record();
  Event on_cpu = cpu.record();
  EXPECT_EQ(as_cpu_event(on_gpu), nullptr);
  EXPECT_NE(as_cuda_event(on_gpu.state().get()), nullptr);
  EXPECT_EQ(as_cuda_event(on_cpu.state().get()), nullptr);
  EXPECT_THROW(on_gpu.elapsed_ms_since(on_cpu), std::logic_error);
}

TEST(CudaStream, RoundTripThroughDeviceMemoryWithCrossStreamWait) {
  ZT_SKIP_WITHOUT_CUDA_DEVICE();
  MemoryTracker tracker;
  Buffer host = Buffer::host(DType::f32, 1 << 20, MemCategory::workspace, Buffer::HostMemory::pinned, tracker);
  Buffer back = Buffer::host(DType::f32, 1 << 20, MemCategory::workspace, Buffer::HostMemory::pinned, tracker);
  Buffer device(Device::cuda(0), DType::f32, 1 << 20, MemCategory::workspace, tracker);
  EXPECT_EQ(tracker.total(MemoryTracker::Space::device).current, 4 << 20);
  std::iota(host.data_as<float>(), host.data_as<float>() + host.numel(), 0.0f);
  CudaStream compute(0, CudaStream::Priority::normal);
  CudaStream comm(0, CudaStream::Priority::high);
  copy_async(device.view(), host.view(), compute);
  comm.wait(compute.record());
  copy_async(back.view(), device.view(), comm);
  Event start = compute.record();
  comm.synchronize();
  EXPECT_EQ(back.data_as<float>()[12345], 12345.0f);
  EXPECT_GE(comm.record().elapsed_ms_since(start), 0.0);
}
#endif

}  // namespace
}  // namespace zt
