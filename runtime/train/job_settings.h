// The YAML config turned into what the model, the engine and the schedule take. Every setting the
// trainer hands down passes through here, so the mapping from DeepSpeed-style keys to zerotrain's
// own structs is in one place.
#pragma once

#include <memory>
#include <string>

#include "comm/comm_options.h"
#include "models/device_time.h"
#include "models/model.h"
#include "optim/lr_schedule.h"
#include "runtime/config/config.h"
#include "core/device.h"
#include "zero/engine_options.h"

namespace zt {

std::unique_ptr<models::Model> build_model(const ModelConfig& config);
ZeroOptions zero_options(const Config& config);
// Throws zt::UserError for settings the number of ranks makes impossible: a stage-3 secondary
// partition group (zero_hpz_partition_size) that does not divide them. `plan`, which shows
// stage 3 whatever the config's stage, checks with any_stage.
void check_settings_for_world(const Config& config, int world_size, bool any_stage = false);
// The emulated device's rates (config.emulation; meaningful when it is enabled).
models::DeviceRates emulated_rates(const EmulationConfig& emulation);
LrSchedule lr_schedule(const Config& config);
// train.device resolved for this rank: cuda is cuda:local_rank (one GPU per rank of a node; more
// ranks than GPUs is an error naming both counts); auto is cuda:(local_rank mod GPUs) when a GPU
// is visible, else cpu; cuda:N is that device for every rank of the node. Throws zt::UserError
// when the device is unusable, or the precision needs a GPU.
Device resolve_device(const Config& config, int local_rank, int local_size);
// The rule itself, for a node that sees visible_gpus GPUs (no device is touched): what
// resolve_device applies, and what the GPU kit's settings are checked against on machines without
// a GPU.
Device resolve_device_setting(const std::string& setting, int local_rank, int local_size, int visible_gpus);

}  // namespace zt
