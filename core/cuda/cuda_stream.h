// CUDA streams and events behind the Stream/Event interface (see stream.h).
#pragma once

#include <cuda_runtime.h>

#include <string_view>

#include "core/stream.h"

namespace zt {

class CudaEventState final : public detail::EventState {
 public:
  explicit CudaEventState(int device_index);
  ~CudaEventState() override;
  CudaEventState(const CudaEventState&) = delete;
  CudaEventState& operator=(const CudaEventState&) = delete;

  Device device() const override { return Device::cuda(device_index_); }
  cudaEvent_t handle() const { return event_; }
  bool query() override;
  void synchronize() override;
  double elapsed_ms_since(detail::EventState& start) override;

 private:
  int device_index_;
  cudaEvent_t event_ = nullptr;
};

class CudaStream final : public Stream {
 public:
  enum class Priority { normal, high };  // the comm stream runs at high priority

  CudaStream(int device_index, Priority priority);
  ~CudaStream() override;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t handle() const { return stream_; }
  Device device() const override { return Device::cuda(device_index_); }
  Event record() override;
  // Waiting on a CUDA event is done on the device. Waiting on a CPU event blocks the host until it
  // completes, then continues: the CUDA stream cannot observe a host-side completion by itself.
  void wait(const Event& event) override;
  void synchronize() override;

 private:
  int device_index_;
  cudaStream_t stream_ = nullptr;
};

// The CUDA types behind the interfaces (stream.h: every CUDA stream and event is one of these).
// as_cuda_stream throws std::invalid_argument naming `work` for another device's stream;
// as_cuda_event gives nullptr for another device's event or one never recorded.
CudaStream& as_cuda_stream(Stream& stream, std::string_view work);
CudaEventState* as_cuda_event(detail::EventState* state);

}  // namespace zt
