// The Trainer's checkpoint side: where a run starts (a checkpoint or the seed) and when it saves.
// The format and its guarantees live in runtime/checkpoint/.
#include <fmt/format.h>

#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "runtime/checkpoint/checkpoint_writer.h"
#include "core/error.h"
#include "core/log.h"
#include "core/memory.h"
#include "runtime/interop/hf_weights.h"
#include "runtime/train/resume_choice.h"
#include "runtime/train/trainer.h"

namespace zt {

void Trainer::restore_or_init() {
  const CheckpointConfig& c = config_.checkpoint;
  checkpoint_root_ = checkpoint_root(config_);
  // Rank 0 alone resolves checkpoint.resume (and refuses another run's checkpoint.dir); every rank
  // then checks it sees that very checkpoint (resume_choice.h).
  const ResumeChoice choice = guard_->agree_on_resume([&] { return choose_resume(c, checkpoint_root_); });
  run_id_ = choice.run_id;
  next_save_index_ = choice.next_save_index;
  if (c.resume == "auto" && !choice.from)
    log::progress("resume: auto found no complete checkpoint in {}: starting fresh", checkpoint_root_.string());
  // Writes interrupted by a crash are never read; a resumed run clears them away.
  if (c.resume != "none" && comm_->rank() == 0)
    for (const auto& partial : checkpoint::remove_partial_checkpoints(checkpoint_root_))
      log::info("removed the partial checkpoint {} (an interrupted write)", partial.string());
  if (!choice.from && !config_.model.init_from.empty()) {
    // A fresh run from Hugging Face weights: step 1, zero AdamW moments, the initial loss scale.
    interop::HfWeights weights(config_.model.init_from, *model_);
    engine_->load_state(weights, 0, engine_->loss_scaler().state());
    log::progress("initialised {} tensors from {} (model.init_from)", weights.tensor_count(), config_.model.init_from);
    return;
  }
  if (!choice.from) {
    engine_->init_parameters(static_cast<std::uint64_t>(config_.model.init_seed));
    return;
  }
  const std::filesystem::path& from = *choice.from;
  checkpoint::CheckpointReader reader(from);
  reader.check_model_matches(config_.model);
  reader.check_blocks_match(*model_);
  const checkpoint::Manifest& m = reader.manifest();
  engine_->load_state(reader, m.optimizer_steps, m.loss_scaler);
  train_batches_->restore(m.loader);
  first_step_ = m.step + 1;
  log::progress("resumed from {} (step {}, saved by {} rank(s) with ZeRO stage {}); continuing at step {}",
                from.string(), m.step, m.world_size, m.zero_stage, first_step_);
  // Allowed either way: a checkpoint holds the fp32 master weights and moments, which any compute
  // dtype continues from. But the steps are not the ones the saved run would have taken.
  const DType saved_dtype = reader.config().precision.dtype;
  if (saved_dtype != config_.precision.dtype)
    log::progress("resume: the checkpoint's run computed in {}, this one computes in {}: the fp32 master weights "
                  "and AdamW moments carry over and the parameters are rounded from them, so from step {} the "
                  "losses differ from a continued {} run",
                  dtype_name(saved_dtype), dtype_name(config_.precision.dtype), first_step_, dtype_name(saved_dtype));
}

std::optional<std::filesystem::path> Trainer::newest_checkpoint_of_this_run() const {
  std::optional<std::filesystem::path> newest;
  for (const checkpoint::SavedCheckpoint& saved : checkpoint::saved_checkpoints(checkpoint_root_))
    if (saved.run_id == run_id_) newest = saved.dir;  // oldest save first
  return newest;
}

bool Trainer::checkpoint_due(std::int64_t step) const {
  const std::int64_t interval = config_.checkpoint.interval;
  return interval > 0 && (step % interval == 0 || step == config_.train.steps);
}

void Trainer::save_checkpoint(std::int64_t step) {
  const auto started = std::chrono::steady_clock::now();
  collect_background_save(true);  // at most one save in flight
  checkpoint::SaveRequest request;
  request.root = checkpoint_root_;
  request.step = step;
  request.config_yaml = config_to_yaml(config_);
  request.loader = train_batches_->position();
  request.rank = comm_->rank();
  request.world_size = comm_->world_size();
  request.barrier = [this] { comm_->barrier(ctx_->stream()).wait(); };
  request.keep_last = config_.checkpoint.keep_last;
  request.run_id = run_id_;
  request.save_index = next_save_index_++;
  request.peer_timeout = std::chrono::duration<double>(config_.comm.timeout_s);
  if (config_.checkpoint.async_save) {
    checkpoint::save_checkpoint_async(*engine_, *model_, request, *background_saves_);
    const double blocked = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (comm_->rank() == 0)
      log::progress("step {} | checkpoint {}: the state copied in {:.3f} s; its files are written in the background",
                    step, (checkpoint_root_ / checkpoint::checkpoint_dir_name(step)).string(), blocked);
    return;
  }
  checkpoint::SaveResult saved = checkpoint::save_checkpoint(*engine_, *model_, request);
  if (comm_->rank() == 0)
    log::progress("step {} | checkpoint {} ({}) written in {:.3f} s", step, saved.dir.string(),
                  format_bytes(static_cast<std::int64_t>(saved.bytes)), saved.seconds);
}

void Trainer::collect_background_save(bool wait) {
  if (!background_saves_ || !background_saves_->in_flight()) return;
  if (!wait && !background_saves_->finished()) return;
  const std::optional<checkpoint::SaveResult> saved = background_saves_->wait();  // rethrows its error
  if (saved && comm_->rank() == 0)
    log::progress("checkpoint {} ({}) complete, written in the background in {:.3f} s", saved->dir.string(),
                  format_bytes(static_cast<std::int64_t>(saved->bytes)), saved->seconds);
}

}  // namespace zt
