#include "runtime/train/resume_choice.h"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/checkpoint/checkpoint_reader.h"
#include "core/error.h"
#include "core/log.h"
#include "runtime/config/hf_config_shape.h"
#include "core/safe_file.h"

namespace zt {
namespace {

std::optional<std::string> read_text(const std::filesystem::path& path) {
  std::string why;
  return read_regular_file(path, why);
}

std::uint32_t crc32_of_text(const std::string& text) {
  return static_cast<std::uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
}

std::string run_name(const std::string& run_id) { return run_id.empty() ? "(no run id)" : run_id; }

ResumeChoice decide(const CheckpointConfig& c, const std::filesystem::path& root) {
  const std::vector<checkpoint::SavedCheckpoint> saved = checkpoint::saved_checkpoints(root);
  ResumeChoice choice;
  if (c.resume == "auto") {
    std::set<std::string> runs;
    for (const auto& s : saved) runs.insert(s.run_id);
    if (runs.size() > 1)
      throw UserError(fmt::format("checkpoint.dir {} holds the checkpoints of {} runs ({}); resume: auto cannot tell "
                                  "which to continue: name one with --resume PATH, or move the others away",
                                  root.string(), runs.size(), fmt::join(runs, ", ")));
    if (!saved.empty()) choice.from = saved.back().dir;  // the one run's newest save
  } else if (!c.resume.empty() && c.resume != "none") {
    choice.from = std::filesystem::path(c.resume);
  }
  if (choice.from) {
    checkpoint::CheckpointReader reader(*choice.from);
    choice.step = reader.manifest().step;
    choice.run_id = reader.manifest().run_id;
    choice.next_save_index = reader.manifest().save_index + 1;
    const std::optional<std::string> manifest = read_text(*choice.from / checkpoint::kManifestFile);
    choice.manifest_crc32 = manifest ? crc32_of_text(*manifest) : 0;
  } else {
    choice.run_id = new_run_id();
  }
  // Saves go to root: another run's checkpoints there would be replaced (same steps) or resumed.
  std::vector<std::string> others;
  for (const auto& s : saved) {
    if (s.run_id == choice.run_id) {
      choice.next_save_index = std::max(choice.next_save_index, s.save_index + 1);
    } else {
      others.push_back(fmt::format("{} (run {})", s.dir.filename().string(), run_name(s.run_id)));
    }
  }
  if (!others.empty()) {
    const std::string what = choice.from ? fmt::format("this run (resumed from {}, run {})", choice.from->string(),
                                                       run_name(choice.run_id))
                                         : "a new run (checkpoint.resume: none)";
    throw UserError(fmt::format("checkpoint.dir {} holds {} checkpoint(s) of another run: {}; {} would mix its saves "
                                "with them. Continue that run with --resume auto, set another checkpoint.dir (or "
                                "logging.run_dir), or delete them",
                                root.string(), others.size(), fmt::join(others, ", "), what));
  }
  return choice;
}

}  // namespace

nlohmann::json resume_choice_to_json(const ResumeChoice& c) {
  return {{"from", c.from ? c.from->string() : ""}, {"step", c.step},       {"crc32", c.manifest_crc32},
          {"run_id", c.run_id},                      {"next", c.next_save_index}, {"problem", c.problem}};
}

ResumeChoice resume_choice_from_json(const nlohmann::json& j) {
  ResumeChoice c;
  if (const std::string from = j.at("from").get<std::string>(); !from.empty()) c.from = from;
  c.step = j.at("step").get<std::int64_t>();
  c.manifest_crc32 = j.at("crc32").get<std::uint32_t>();
  c.run_id = j.at("run_id").get<std::string>();
  c.next_save_index = j.at("next").get<std::int64_t>();
  c.problem = j.at("problem").get<std::string>();
  return c;
}

ResumeChoice choose_resume(const CheckpointConfig& checkpoint, const std::filesystem::path& root) {
  try {
    return decide(checkpoint, root);
  } catch (const UserError& e) {
    ResumeChoice failed;
    failed.problem = e.what();
    return failed;
  }
}

std::optional<std::string> resume_mismatch(const ResumeChoice& choice) {
  if (!choice.from) return std::nullopt;
  const std::filesystem::path manifest = *choice.from / checkpoint::kManifestFile;
  const std::optional<std::string> text = read_text(manifest);
  if (!text)
    return fmt::format("rank 0 resumes from {} (step {}), which this rank does not see ({} is missing)",
                       choice.from->string(), choice.step, manifest.string());
  if (const std::uint32_t crc = crc32_of_text(*text); crc != choice.manifest_crc32)
    return fmt::format("rank 0 resumes from {} (step {}, manifest CRC32 {:08x}), but this rank's {} differs (CRC32 "
                       "{:08x})",
                       choice.from->string(), choice.step, choice.manifest_crc32, manifest.string(), crc);
  return std::nullopt;
}

std::string new_run_id() {
  std::random_device device;  // /dev/urandom: two runs started at once still differ
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", device(), device(), device(), device());
}

std::filesystem::path checkpoint_root(const Config& config) {
  return config.checkpoint.dir.empty() ? std::filesystem::path(config.logging.run_dir) / "checkpoints"
                                       : std::filesystem::path(config.checkpoint.dir);
}

Config with_model_shape_of_resumed_checkpoint(Config config) {
  const std::string init_from = config.model.init_from;
  if (init_from.empty() || config.checkpoint.resume == "none" || hf_config_json_for(init_from)) return config;
  const ResumeChoice choice = choose_resume(config.checkpoint, checkpoint_root(config));
  if (!choice.from) return config;  // a fresh start reads the weights, and says they are gone
  config.model = checkpoint::CheckpointReader(*choice.from).config().model;
  config.model.init_from = init_from;
  // The checks across keys skipped the unknown shape: run them all on the one now known.
  config = parse_config(config_to_yaml(config), fmt::format("the config with the model shape of {}",
                                                            choice.from->string()));
  log::progress("model.init_from {} has no config.json (moved or deleted?): the model's shape is that of the "
                "checkpoint it resumes from, {}, which needs none of init_from's weights",
                init_from, choice.from->string());
  return config;
}

}  // namespace zt
