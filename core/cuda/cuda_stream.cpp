#include "core/cuda/cuda_stream.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/cuda/cuda_check.h"
#include "core/handle_pool.h"
#include "core/log.h"

namespace zt {

namespace {

// One pool of events per device: a step records hundreds, and creating and destroying each one
// costs driver calls on the hot path.
HandlePool<cudaEvent_t>& event_pool(int device_index) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<HandlePool<cudaEvent_t>>> pools;
  std::lock_guard lock(mutex);
  auto& pool = pools[device_index];
  if (!pool)
    pool = std::make_unique<HandlePool<cudaEvent_t>>([device_index] {
      cudaEvent_t event = nullptr;
      ZT_CUDA_CHECK(cudaSetDevice(device_index));
      // Timing stays enabled: step timings and the timeline are measured with these events.
      // Blocking sync: a host thread that waits on one (the comm thread before a staged copy, the
      // step's end) sleeps instead of spinning on a core that compute or MPI needs.
      ZT_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventBlockingSync));
      return event;
    });
  return *pool;
}

}  // namespace

CudaEventState::CudaEventState(int device_index) : device_index_(device_index) {
  ZT_CUDA_CHECK(cudaSetDevice(device_index_));
  event_ = event_pool(device_index_).take();
}

CudaEventState::~CudaEventState() { event_pool(device_index_).give(event_); }

bool CudaEventState::query() {
  cudaError_t status = cudaEventQuery(event_);
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  ZT_CUDA_CHECK(status);
  return true;
}

void CudaEventState::synchronize() { ZT_CUDA_CHECK(cudaEventSynchronize(event_)); }

double CudaEventState::elapsed_ms_since(detail::EventState& start) {
  CudaEventState* cuda_start = as_cuda_event(&start);
  if (!cuda_start) throw std::logic_error("elapsed time between a CUDA event and an event of another device");
  // cudaEventElapsedTime fails with cudaErrorNotReady on an event that has not completed yet.
  ZT_CUDA_CHECK(cudaEventSynchronize(cuda_start->event_));
  ZT_CUDA_CHECK(cudaEventSynchronize(event_));
  float ms = 0.0f;
  ZT_CUDA_CHECK(cudaEventElapsedTime(&ms, cuda_start->event_, event_));
  return ms;
}

CudaStream::CudaStream(int device_index, Priority priority) : device_index_(device_index) {
  ZT_CUDA_CHECK(cudaSetDevice(device_index_));
  int least = 0;
  int greatest = 0;
  ZT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  ZT_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking,
                                             priority == Priority::high ? greatest : least));
}

CudaStream::~CudaStream() {
  if (cudaStreamDestroy(stream_) != cudaSuccess)
    log::error("cudaStreamDestroy failed: {}", cudaGetErrorString(cudaGetLastError()));
}

Event CudaStream::record() {
  auto state = std::make_shared<CudaEventState>(device_index_);
  ZT_CUDA_CHECK(cudaEventRecord(state->handle(), stream_));
  return Event(state);
}

void CudaStream::wait(const Event& event) {
  if (!event.state()) return;
  if (CudaEventState* cuda_event = as_cuda_event(event.state().get())) {
    ZT_CUDA_CHECK(cudaStreamWaitEvent(stream_, cuda_event->handle(), 0));
  } else {
    event.synchronize();
  }
}

void CudaStream::synchronize() { ZT_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

CudaStream& as_cuda_stream(Stream& stream, std::string_view work) {
  if (!stream.device().is_cuda())
    throw std::invalid_argument(std::string(work) + " was given a stream of " + stream.device().str());
  return static_cast<CudaStream&>(stream);
}

CudaEventState* as_cuda_event(detail::EventState* state) {
  return state && state->device().is_cuda() ? static_cast<CudaEventState*>(state) : nullptr;
}

}  // namespace zt
