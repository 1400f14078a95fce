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
  o.adamw = config.optimizer;  // AdamW's options are the optimizer section's keys
  o.gradient_clipping = config.train.gradient_clipping;
  o.recompute_every = static_cast<int>(config.train.activation_checkpointing);
  o.loss_scaling = config.precision.dtype == DType::f16;
  o.loss_scaler = config.precision;  // the loss scaler's options are precision's keys
  return o;
}

void check_settings_for_world(const Config& config, int world_size, bool any_stage) {
  const ZeroConfig& zero = config.zero_optimization;
  if ((any_stage || zero.stage == 3) && world_size % zero.zero_hpz_partition_size != 0)
    throw UserError(fmt::format("zero_optimization.zero_hpz_partition_size {} does not divide the {} ranks: each "
                                "group of that many consecutive ranks keeps a copy of the parameters; give the "
                                "ranks per host, or 1",
                                zero.zero_hpz_partition_size, world_size));
}

LrSchedule lr_schedule(const Config& config) {
  LrSchedule s;
  static_cast<LrScheduleOptions&>(s) = config.scheduler;  // the section is the schedule's own options
  s.lr = config.optimizer.lr;
  s.total_steps = config.train.steps;
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
