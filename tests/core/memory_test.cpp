#include "core/memory.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"

namespace zt {
namespace {

using Space = MemoryTracker::Space;

TEST(MemoryTracker, ChargesCurrentAndPeakPerCategory) {
  MemoryTracker tracker;
  tracker.charge(Space::host, MemCategory::params, 100);
  tracker.charge(Space::host, MemCategory::grads, 50);
  tracker.release(Space::host, MemCategory::params, 100);
  tracker.charge(Space::host, MemCategory::params, 30);
  EXPECT_EQ(tracker.stats(Space::host, MemCategory::params).current, 30);
  EXPECT_EQ(tracker.stats(Space::host, MemCategory::params).peak, 100);
  EXPECT_EQ(tracker.stats(Space::host, MemCategory::grads).current, 50);
  // The total's peak is the peak of the sum (150), not the sum of peaks (150 here too, so check
  // a case where they differ below).
  EXPECT_EQ(tracker.total(Space::host).current, 80);
  EXPECT_EQ(tracker.total(Space::host).peak, 150);
  EXPECT_EQ(tracker.total(Space::device).peak, 0);
}

TEST(MemoryTracker, TotalPeakIsPeakOfSumNotSumOfPeaks) {
  MemoryTracker tracker;
  tracker.charge(Space::host, MemCategory::activations, 100);
  tracker.release(Space::host, MemCategory::activations, 100);
  tracker.charge(Space::host, MemCategory::workspace, 100);
  EXPECT_EQ(tracker.total(Space::host).peak, 100);
}

TEST(MemoryTracker, ReleasingMoreThanChargedIsAnError) {
  MemoryTracker tracker;
  tracker.charge(Space::host, MemCategory::buckets, 10);
  EXPECT_THROW(tracker.release(Space::host, MemCategory::buckets, 11), std::logic_error);
}

TEST(MemoryTracker, ResetPeaksStartsANewWindow) {
  MemoryTracker tracker;
  tracker.charge(Space::host, MemCategory::activations, 500);
  tracker.release(Space::host, MemCategory::activations, 400);
  tracker.reset_peaks();
  EXPECT_EQ(tracker.stats(Space::host, MemCategory::activations).peak, 100);
  EXPECT_EQ(tracker.total(Space::host).peak, 100);
}

TEST(MemoryTracker, ReportNamesCategoriesInBinaryUnits) {
  MemoryTracker tracker;
  tracker.charge(Space::host, MemCategory::optimizer, 3 * 1024 * 1024 / 2);
  EXPECT_EQ(tracker.report(Space::host), "optimizer 1.50 MiB (peak 1.50 MiB)");
  EXPECT_EQ(MemoryTracker().report(Space::host), "nothing allocated");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(2048), "2.00 KiB");
}

TEST(Buffer, ChargesItsCategoryForItsLifetime) {
  MemoryTracker tracker;
  {
    Buffer params(Device::cpu(), DType::bf16, 1000, MemCategory::params, tracker);
    Buffer master(Device::cpu(), DType::f32, 1000, MemCategory::optimizer, tracker);
    EXPECT_EQ(params.bytes(), 2000u);
    EXPECT_EQ(tracker.stats(Space::host, MemCategory::params).current, 2000);
    EXPECT_EQ(tracker.stats(Space::host, MemCategory::optimizer).current, 4000);
  }
  EXPECT_EQ(tracker.total(Space::host).current, 0);
  EXPECT_EQ(tracker.total(Space::host).peak, 6000);
}

TEST(Buffer, IsZeroFilledAlignedAndTyped) {
  MemoryTracker tracker;
  Buffer buffer(Device::cpu(), DType::f32, 37, MemCategory::workspace, tracker);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % kHostAlignment, 0u);
  const float* values = buffer.data_as<float>();
  for (std::size_t i = 0; i < buffer.numel(); ++i) EXPECT_EQ(values[i], 0.0f);
  EXPECT_THROW(buffer.data_as<bf16>(), std::logic_error);
}

TEST(Buffer, MoveTransfersOwnershipAndChargesOnce) {
  MemoryTracker tracker;
  Buffer a(Device::cpu(), DType::f32, 10, MemCategory::grads, tracker);
  void* data = a.data();
  Buffer b = std::move(a);
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(tracker.stats(Space::host, MemCategory::grads).current, 40);
  Buffer c(Device::cpu(), DType::f32, 5, MemCategory::grads, tracker);
  c = std::move(b);  // frees c's own 20 bytes
  EXPECT_EQ(tracker.stats(Space::host, MemCategory::grads).current, 40);
  std::vector<Buffer> many;
  for (int i = 0; i < 8; ++i) many.emplace_back(Device::cpu(), DType::f16, 8, MemCategory::grads, tracker);
  EXPECT_EQ(tracker.stats(Space::host, MemCategory::grads).current, 40 + 8 * 16);
}

TEST(Buffer, SlicesStayInBounds) {
  MemoryTracker tracker;
  Buffer buffer(Device::cpu(), DType::f32, 10, MemCategory::workspace, tracker);
  BufferView tail = buffer.slice(4, 6);
  EXPECT_EQ(tail.as<float>(), buffer.data_as<float>() + 4);
  EXPECT_EQ(tail.bytes(), 24u);
  EXPECT_EQ(tail.slice(6, 0).numel, 0u);
  EXPECT_THROW(buffer.slice(4, 7), std::out_of_range);
  EXPECT_THROW(tail.slice(7, 0), std::out_of_range);
}

TEST(Buffer, ZeroElementsAllocateNothing) {
  MemoryTracker tracker;
  Buffer empty(Device::cpu(), DType::f32, 0, MemCategory::buckets, tracker);
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(tracker.total(Space::host).peak, 0);
}

TEST(Device, ParsesAndRejectsClearly) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda:3"), Device::cuda(3));
  EXPECT_EQ(Device::cuda(2).str(), "cuda:2");
  // "cuda" alone names this rank's local GPU: only the training job, which knows the rank, resolves it.
  for (const char* bad : {"gpu", "cuda", "cuda:", "cuda:-1", "cuda:1x", "CPU"}) {
    try {
      Device::parse(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(Device, CudaUnavailableIsAClearError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is visible; this checks the error without one";
  try {
    require_available(Device::cuda(0));
    ADD_FAILURE() << "cuda:0 was accepted without a GPU";
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("cuda:0 was asked for"), std::string::npos) << message;
    // The cause is named: the build, or the CUDA runtime's own error (a driver too old for the
    // runtime must not read as "no GPU").
    const std::string reason = cuda_unavailable_reason();
    EXPECT_FALSE(reason.empty());
    EXPECT_NE(message.find(cuda_built() ? reason : std::string("built without CUDA")), std::string::npos) << message;
    if (cuda_built()) {
      EXPECT_NE(reason.find("cudaGetDeviceCount"), std::string::npos) << reason;
    }
  }
  EXPECT_NO_THROW(require_available(Device::cpu()));
}

}  // namespace
}  // namespace zt
