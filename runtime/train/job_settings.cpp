#include "runtime/train/job_settings.h"

#include <fmt/format.h>

#include "core/device_ops.h"
#include "core/error.h"
#include "models/family.h"

namespace zt {

std::unique_ptr<models::Model> build_model(const ModelConfig& config) {
  return models::model_family(config.type).build(config);
}

namespace {
DType comm_dtype(const Config& config) {
  switch (config.zero_optimization.communication_data_type) {
    case CommDataType::fp32: return DType::f32;
    case CommDataType::bf16: return DType::bf16;
    case CommDataType::fp16: return DType::f16;
    case CommDataType::compute: return config.precision.dtype;
  }
  return DType::f32;
}
}  // namespace

models::DeviceRates emulated_rates(const EmulationConfig& emulation) {
  return {.flops_per_s = emulation.tflops * 1e12 * emulation.mfu, .bytes_per_s = emulation.memory_gbps * 1e9};
}

ZeroOptions zero_options(const Config& config) {
  ZeroOptions o;
  static_cast<ZeroConfig&>(o) = config.zero_optimization;  // the section is the engine's own options
  o.compute_dtype = config.precision.dtype;
  o.comm_dtype = comm_dtype(config);
  o.gradient_accumulation_steps = static_cast<int>(config.train.gradient_accumulation_steps);
  o.adamw = AdamWHyper{static_cast<float>(config.optimizer.lr), static_cast<float>(config.optimizer.betas[0]),
                       static_cast<float>(config.optimizer.betas[1]), static_cast<float>(config.optimizer.eps),
                       static_cast<float>(config.optimizer.weight_decay)};
  o.decay_embeddings = !config.optimizer.no_decay_embeddings;
  o.decay_bias_and_norm = !config.optimizer.no_decay_bias_and_norm;
  o.gradient_clipping = config.train.gradient_clipping;
  o.recompute_every = static_cast<int>(config.train.activation_checkpointing);
  o.loss_scaling = config.precision.dtype == DType::f16;
  o.loss_scaler = config.precision;  // the loss scaler's options are precision's keys
  return o;
}

CommBackend comm_backend(const Config& config) {
  switch (config.comm.backend) {
    case CommBackendChoice::auto_select: return CommBackend::auto_select;
    case CommBackendChoice::mpi: return CommBackend::mpi;
    case CommBackendChoice::nccl: return CommBackend::nccl;
  }
  return CommBackend::auto_select;
}

LrSchedule lr_schedule(const Config& config) {
  LrSchedule s;
  switch (config.scheduler.type) {
    case SchedulerType::constant: s.kind = LrSchedule::Kind::constant; break;
    case SchedulerType::warmup_cosine: s.kind = LrSchedule::Kind::warmup_cosine; break;
    case SchedulerType::warmup_linear: s.kind = LrSchedule::Kind::warmup_linear; break;
    case SchedulerType::WarmupLR: s.kind = LrSchedule::Kind::deepspeed_warmup; break;
    case SchedulerType::WarmupDecayLR: s.kind = LrSchedule::Kind::deepspeed_warmup_decay; break;
    case SchedulerType::WarmupCosineLR: s.kind = LrSchedule::Kind::deepspeed_warmup_cosine; break;
  }
  s.lr = config.optimizer.lr;
  s.min_lr = config.scheduler.min_lr;
  s.warmup_steps = config.scheduler.warmup_steps;
  s.total_steps = config.train.steps;
  s.warmup = config.scheduler.warmup_type == WarmupType::log ? LrSchedule::Warmup::log : LrSchedule::Warmup::linear;
  s.warmup_min_lr = config.scheduler.warmup_min_lr;
  return s;
}

Device resolve_device_setting(const std::string& setting, int local_rank, int local_size, int visible_gpus) {
  if (setting == "auto") return visible_gpus > 0 ? Device::cuda(local_rank % visible_gpus) : Device::cpu();
  if (setting == "cuda") {
    if (local_size > visible_gpus)
      throw UserError(fmt::format("train.device cuda gives each rank of a node its own GPU, but this node runs {} "
                                  "ranks and sees {} GPU(s); start at most {} rank(s) per node, or name one "
                                  "device (cuda:N) for ranks to share",
                                  local_size, visible_gpus, visible_gpus));
    return Device::cuda(local_rank);
  }
  const Device device = Device::parse(setting);
  if (device.is_cuda() && device.index >= visible_gpus)
    throw UserError(fmt::format("train.device {} was asked for, but this node sees {} GPU(s)", setting, visible_gpus));
  return device;
}

Device resolve_device(const Config& config, int local_rank, int local_size) {
  const std::string& setting = config.train.device;
  // Naming a GPU in a build without CUDA is the one "built without CUDA" error (device_count throws).
  const int gpus = setting.starts_with("cuda") ? cuda_device_ops().device_count() : cuda_device_count();
  if (gpus == 0 && setting.starts_with("cuda")) require_available(Device::cuda(0));  // names the CUDA error
  const Device device = resolve_device_setting(setting, local_rank, local_size, gpus);
  require_available(device);
  return device;
}

}  // namespace zt
