#include "runtime/train/rank_agreement.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "models/family.h"
#include "runtime/config/config_schema.h"
#include "core/log.h"
#include "comm/mpi_check.h"
#include "runtime/train/job_stopped.h"
#include "runtime/train/resume_choice.h"

namespace zt {
namespace {

constexpr std::size_t kMaxDifferencesShown = 10;

std::vector<DataFileDigest> digests_from_json(const nlohmann::json& json) {
  std::vector<DataFileDigest> digests;
  for (const auto& item : json)
    digests.push_back({item.at(0).get<std::string>(), item.at(1).get<std::uint64_t>(), item.at(2).get<std::uint32_t>()});
  return digests;
}

nlohmann::json digests_to_json(const std::vector<DataFileDigest>& digests) {
  nlohmann::json json = nlohmann::json::array();
  for (const DataFileDigest& d : digests) json.push_back({d.path, d.bytes, d.crc32});
  return json;
}

void compare_files(const std::vector<DataFileDigest>& reference, const std::vector<DataFileDigest>& other,
                   int rank, std::string_view role, std::vector<std::string>& out) {
  for (const DataFileDigest& mine : other) {
    auto theirs = std::find_if(reference.begin(), reference.end(),
                               [&](const DataFileDigest& d) { return d.path == mine.path; });
    if (theirs == reference.end()) {
      out.push_back(fmt::format("rank {} reads {} file {} ({} bytes), which rank 0 does not have", rank, role,
                                mine.path, mine.bytes));
    } else if (mine.bytes != theirs->bytes) {
      out.push_back(fmt::format("rank {} reads {} with a different size: {} bytes (rank 0) vs {} bytes (rank {})",
                                rank, mine.path, theirs->bytes, mine.bytes, rank));
    } else if (mine.crc32 != theirs->crc32) {
      out.push_back(fmt::format("rank {} reads {} with a different content: crc32 of the whole file "
                                "{:08x} (rank 0) vs {:08x} (rank {})",
                                rank, mine.path, theirs->crc32, mine.crc32, rank));
    }
  }
  for (const DataFileDigest& theirs : reference)
    if (std::none_of(other.begin(), other.end(), [&](const DataFileDigest& d) { return d.path == theirs.path; }))
      out.push_back(fmt::format("rank 0 reads {} file {} ({} bytes), which rank {} does not have", role, theirs.path,
                                theirs.bytes, rank));
}

// Every rank's fingerprint text, in rank order (two all-gathers: the lengths, then the bytes).
std::vector<std::string> all_gather_text(MPI_Comm comm, const std::string& mine) {
  int world = 1;
  ZT_MPI_CHECK(MPI_Comm_size(comm, &world));
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(world));
  ZT_MPI_CHECK(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  ZT_MPI_CHECK(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                              comm));
  std::vector<std::string> texts;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    texts.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return texts;
}

}  // namespace

bool is_rank_local_key(const std::string& path) {
  return path == "train.device" || path == "logging.level" || path == "logging.all_ranks";
}

RankFingerprint fingerprint_of(const Config& config) {
  RankFingerprint fingerprint;
  for (const ConfigKey& key : config_keys())
    if (!is_rank_local_key(key.path)) fingerprint.config.emplace_back(key.path, format_config_value(key, key.read(config)));
  // A run that resumes from a checkpoint reads nothing from init_from: nothing to compare.
  if (!config.model.init_from.empty() && !choose_resume(config.checkpoint, checkpoint_root(config)).from) {
    try {
      fingerprint.init_files = digest_init_from(config.model.init_from);
    } catch (const UserError& e) {
      fingerprint.init_error = e.what();
    }
  }
  if (!models::model_family(config.model.type).reads_tokens()) return fingerprint;  // synthetic data: no files
  try {
    fingerprint.train_files = digest_data_files(config.data.train_files);
    if (!config.data.val_files.empty() && config.train.eval_interval > 0)
      fingerprint.val_files = digest_data_files(config.data.val_files);
  } catch (const UserError& e) {
    fingerprint.data_error = e.what();
  }
  return fingerprint;
}

std::string to_json_text(const RankFingerprint& fingerprint) {
  nlohmann::json json;
  json["config"] = fingerprint.config;
  json["train_files"] = digests_to_json(fingerprint.train_files);
  json["val_files"] = digests_to_json(fingerprint.val_files);
  json["data_error"] = fingerprint.data_error;
  json["init_files"] = digests_to_json(fingerprint.init_files);
  json["init_error"] = fingerprint.init_error;
  return json.dump();
}

RankFingerprint fingerprint_from_json_text(const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text);
  RankFingerprint fingerprint;
  fingerprint.config = json.at("config").get<std::vector<std::pair<std::string, std::string>>>();
  fingerprint.train_files = digests_from_json(json.at("train_files"));
  fingerprint.val_files = digests_from_json(json.at("val_files"));
  fingerprint.data_error = json.at("data_error").get<std::string>();
  fingerprint.init_files = digests_from_json(json.at("init_files"));
  fingerprint.init_error = json.at("init_error").get<std::string>();
  return fingerprint;
}

std::vector<std::string> describe_differences(const RankFingerprint& reference, const RankFingerprint& other,
                                              int other_rank) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < other.config.size() && i < reference.config.size(); ++i) {
    const auto& [path, value] = other.config[i];
    if (value != reference.config[i].second)
      out.push_back(fmt::format("rank {}'s config differs from rank 0's at {}: {} (rank 0) vs {} (rank {})",
                                other_rank, path, reference.config[i].second, value, other_rank));
  }
  if (other.config.size() != reference.config.size())
    out.push_back(fmt::format("rank {} has {} config keys, rank 0 has {}: different zerotrain versions?", other_rank,
                              other.config.size(), reference.config.size()));
  if (other.data_error != reference.data_error) {
    if (!other.data_error.empty()) out.push_back(fmt::format("rank {} cannot read its data: {}", other_rank, other.data_error));
    if (!reference.data_error.empty()) out.push_back(fmt::format("rank 0 cannot read its data: {}", reference.data_error));
  }
  compare_files(reference.train_files, other.train_files, other_rank, "training", out);
  compare_files(reference.val_files, other.val_files, other_rank, "validation", out);
  if (other.init_error != reference.init_error) {
    if (!other.init_error.empty())
      out.push_back(fmt::format("rank {} cannot read model.init_from: {}", other_rank, other.init_error));
    if (!reference.init_error.empty()) out.push_back(fmt::format("rank 0 cannot read model.init_from: {}", reference.init_error));
  }
  compare_files(reference.init_files, other.init_files, other_rank, "model.init_from", out);
  return out;
}

void check_ranks_agree(MPI_Comm comm, const Config& config) {
  const auto start = std::chrono::steady_clock::now();
  int rank = 0;
  ZT_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::vector<std::string> texts = all_gather_text(comm, to_json_text(fingerprint_of(config)));
  const RankFingerprint reference = fingerprint_from_json_text(texts.front());
  std::vector<std::string> differences;
  for (std::size_t r = 1; r < texts.size(); ++r) {
    std::vector<std::string> lines =
        describe_differences(reference, fingerprint_from_json_text(texts[r]), static_cast<int>(r));
    differences.insert(differences.end(), lines.begin(), lines.end());
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (differences.empty()) {
    // Every rank meets the same missing or unreadable data file, or the same model.init_from it
    // cannot read: one message (rank 0's) and a clean stop of all ranks, rather than each rank's
    // error and the job torn down by MPI_Abort.
    for (const std::string& error : {reference.data_error, reference.init_error}) {
      if (error.empty()) continue;
      if (rank == 0) log::error("{}", error);
      throw JobStopped(kExitRanksDisagree, error);
    }
    log::debug("all {} ranks run the same config on the same data (checked in {:.1f} ms)", texts.size(), ms);
    return;
  }
  std::string message = fmt::format("ranks disagree ({} difference(s)), stopping before the first step; every rank "
                                    "must run the same config on the same data:",
                                    differences.size());
  for (std::size_t i = 0; i < differences.size() && i < kMaxDifferencesShown; ++i) message += "\n  " + differences[i];
  if (differences.size() > kMaxDifferencesShown)
    message += fmt::format("\n  ... and {} more", differences.size() - kMaxDifferencesShown);
  if (rank == 0)
    log::error("{}", message);
  else
    log::error("stopping: the ranks disagree (rank 0 lists the differences)");
  throw JobStopped(kExitRanksDisagree, message);
}

}  // namespace zt
