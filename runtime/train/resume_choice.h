// Where a run starts, decided once (by rank 0) for all ranks, and checked on every rank.
//
// A checkpoint belongs to the run that saved it (Manifest::run_id). A run starting from scratch
// draws a new id; a resumed run keeps its checkpoint's id. A checkpoint.dir holding checkpoints of
// another run is refused before anything is written: its saves would replace the other run's
// same-step checkpoints, and `resume: auto` could later continue the wrong run.
//
// checkpoint.dir must be the same directory on every rank (a shared filesystem across nodes).
// Rank 0 resolves checkpoint.resume and broadcasts the choice with the checkpoint's step and its
// manifest's CRC32; every rank then reads that manifest itself, and one that sees another (or
// none) stops the job on all ranks before step 1.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/config/config.h"

namespace zt {

struct ResumeChoice {
  std::optional<std::filesystem::path> from;  // the checkpoint to load; none: start from the seed
  std::int64_t step = 0;                      // its step
  std::uint32_t manifest_crc32 = 0;           // CRC32 of its manifest.json, as rank 0 read it
  std::string run_id;                         // this run's id
  std::int64_t next_save_index = 1;           // the save order number of this run's next checkpoint
  std::string problem;                        // why the job cannot start (then nothing else is set)
};

nlohmann::json resume_choice_to_json(const ResumeChoice& choice);
ResumeChoice resume_choice_from_json(const nlohmann::json& json);

// Rank 0's decision for `checkpoint` with its directory `root`. Never throws zt::UserError: a
// reason not to start goes into `problem`, to be broadcast.
ResumeChoice choose_resume(const CheckpointConfig& checkpoint, const std::filesystem::path& root);

// On every rank: why this rank does not see the checkpoint rank 0 chose, or nothing.
std::optional<std::string> resume_mismatch(const ResumeChoice& choice);

// A fresh random run id (32 hex digits).
std::string new_run_id();

// The directory checkpoints go to: checkpoint.dir, or <logging.run_dir>/checkpoints.
std::filesystem::path checkpoint_root(const Config& config);

// A run started with model.init_from whose config.json is gone (the Hugging Face directory was
// deleted or moved after the run began) cannot read its shape there; when it resumes from a
// checkpoint, which reads no weights from init_from, the shape is the checkpoint's (its resolved
// config). Returns `config` with that model section (init_from kept), or unchanged when
// init_from's config.json is there, nothing is resumed, or no checkpoint is found.
Config with_model_shape_of_resumed_checkpoint(Config config);

}  // namespace zt
