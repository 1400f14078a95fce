// Where and in which precision a model computes: the CPU (fp32 arithmetic, OpenBLAS; f32, bf16 or
// f16 storage) or one CUDA device
// (fp32, bf16 or f16 storage with fp32 accumulation in matrix products; cuBLAS handle, stream and
// workspace). The ops (models/ops/) run on it and dispatch on its device; one context per rank
// and device.
#pragma once

#include <memory>

#include "core/device.h"
#include "core/dtype.h"
#include "core/stream.h"
#include "models/device_rates.h"

namespace zt::models {

// What a CUDA compute context may use. Each choice changes speed, never the contract of an op.
struct CudaOptions {
  // fp32 matrix products on TF32 tensor cores (10-bit mantissa inputs, fp32 accumulation), like
  // PyTorch's "high" matmul precision (precision.tf32); changes nothing for bf16/f16.
  bool allow_tf32 = true;
  // Attention on cuDNN's fused kernels where cuDNN loads, else the flash kernels
  // (train.cudnn_attention; models/cuda/fused_attention.h).
  bool cudnn_attention = true;
  // Biases and GELU fused into the products as cuBLASLt epilogues, else separate kernels
  // (models/cuda/gemm.h).
  bool gemm_epilogues = true;
};

class ComputeContext {
 public:
  // CPU compute on the calling thread, with storage in dtype: f32, or bf16/f16, whose ops widen
  // their views to fp32, compute in fp32 and round each stored result once (cpu/fp32_views.h), as
  // the CUDA kernels do. threads sets the process's CPU compute threads (OpenBLAS's; see
  // cpu::set_compute_threads); 1 is right when every core runs its own rank.
  static std::unique_ptr<ComputeContext> cpu(int threads = 1, DType dtype = DType::f32);
  // CUDA compute on device `index` with the given storage dtype. Throws zt::UserError in a
  // CPU-only build or when the device is not visible.
  static std::unique_ptr<ComputeContext> cuda(int index, DType dtype, CudaOptions options = {});

  // An emulated accelerator, for measuring the engine and the network at an accelerator's ratio of
  // compute to communication on machines without one: buffers, streams, memory accounting and
  // every collective are the CPU device's, real and of real sizes, but a block's forward and
  // backward do no arithmetic. Each waits on the clock for the time models/device_time.h gives at `rates`,
  // using no CPU core. The work outside the blocks (loss mean, gradient statistics, AdamW) runs on
  // the CPU as usual. A measuring instrument: the parameters never change meaningfully.
  static std::unique_ptr<ComputeContext> emulated(const DeviceRates& rates, DType dtype);

  virtual ~ComputeContext() = default;
  virtual Device device() const = 0;
  virtual DType dtype() const = 0;
  // The compute stream: all of this context's work is ordered on it.
  virtual Stream& stream() = 0;
  void synchronize() { stream().synchronize(); }
  // The emulated device's rates; null for a real device.
  virtual const DeviceRates* emulation() const { return nullptr; }
};

}  // namespace zt::models
