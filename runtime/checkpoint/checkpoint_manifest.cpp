#include "runtime/checkpoint/checkpoint_manifest.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <string_view>

#include "core/error.h"

namespace zt::checkpoint {

nlohmann::ordered_json shard_file_to_json(const ShardFileEntry& entry) {
  return {{"name", entry.name}, {"rank", entry.rank}, {"kind", entry.kind}, {"bytes", entry.bytes},
          {"crc32", entry.crc32}};
}

namespace {

// An integer member of a manifest object in [min, max] of Int. nlohmann's get<Int>() converts a
// float (1e300, -1.5) with undefined behaviour, so the kind and range are checked first.
template <typename Int>
Int integer_at(const nlohmann::json& object, const char* key, Int min = std::numeric_limits<Int>::min(),
               Int max = std::numeric_limits<Int>::max()) {
  const nlohmann::json& value = object.at(key);
  bool in_range = false;
  if (value.is_number_unsigned()) {
    auto v = value.get<std::uint64_t>();
    in_range = v <= static_cast<std::uint64_t>(max) && (min <= 0 || v >= static_cast<std::uint64_t>(min));
  } else if (value.is_number_integer()) {
    auto v = value.get<std::int64_t>();
    in_range = v >= static_cast<std::int64_t>(min) &&
               (max > static_cast<Int>(std::numeric_limits<std::int64_t>::max()) || v <= static_cast<std::int64_t>(max));
  }
  if (!in_range)
    throw UserError(fmt::format("'{}' must be an integer in [{}, {}], found {}", key, min, max, value.dump()));
  return value.get<Int>();
}

// Bounds of manifest integers: a crafted manifest must not make the resume overflow (step + 1,
// chunk x ranks, offset + size). Steps match train.steps' largest value; element counts and
// byte sizes stay far below 2^63 (2^40 elements of fp32 are 4 TiB per shard file).
constexpr std::int64_t kMaxSteps = 1'000'000'000'000;
constexpr std::size_t kMaxElements = std::size_t{1} << 40;
constexpr std::uint64_t kMaxFileBytes = std::uint64_t{1} << 46;
constexpr int kMaxRanks = 1 << 20;

}  // namespace

ShardFileEntry shard_file_from_json(const nlohmann::json& json) {
  return {json.at("name").get<std::string>(), integer_at<int>(json, "rank", 0, kMaxRanks - 1), json.at("kind").get<std::string>(),
          integer_at<std::uint64_t>(json, "bytes", 0, kMaxFileBytes), integer_at<std::uint32_t>(json, "crc32")};
}

nlohmann::ordered_json manifest_to_json(const Manifest& m) {
  nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
  for (const BlockEntry& b : m.blocks)
    blocks.push_back({{"name", b.name}, {"numel", b.numel}, {"chunk_numel", b.chunk_numel},
                      {"shard_offset", b.shard_offset}});
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const ShardFileEntry& f : m.files) files.push_back(shard_file_to_json(f));
  const LossScaler::State& s = m.loss_scaler;
  return {{"format", "zerotrain-checkpoint"},
          {"format_version", m.format_version},
          {"step", m.step},
          {"run_id", m.run_id},
          {"save_index", m.save_index},
          {"optimizer_steps", m.optimizer_steps},
          {"world_size", m.world_size},
          {"zero_stage", m.zero_stage},
          {"partition", {{"shard_ranks", m.shard_ranks}, {"shard_numel", m.shard_numel}, {"blocks", blocks}}},
          {"loader", data::loader_position_to_json(m.loader)},
          {"loss_scaler",
           {{"scale", s.scale},
            {"hysteresis_left", s.hysteresis_left},
            {"iteration", s.iteration},
            {"last_overflow_iteration", s.last_overflow_iteration},
            {"skipped_steps", s.skipped_steps}}},
          {"rng", nullptr},  // no random state: data order and init are pure functions of seeds and positions
          {"files", files},
          {"config_yaml", m.config_yaml}};
}

Manifest manifest_from_json(const nlohmann::json& json, const std::filesystem::path& source) {
  Manifest m;
  try {
    m.format_version = integer_at<int>(json, "format_version");
    if (m.format_version != kFormatVersion)
      throw UserError(fmt::format("{}: unsupported checkpoint format version {} (this zerotrain reads version {})",
                                  source.string(), m.format_version, kFormatVersion));
    m.step = integer_at<std::int64_t>(json, "step", 0, kMaxSteps);
    // Absent in checkpoints written before run ids: one anonymous run, ordered by step.
    if (json.contains("run_id")) m.run_id = json.at("run_id").get<std::string>();
    if (json.contains("save_index")) m.save_index = integer_at<std::int64_t>(json, "save_index", 0, kMaxSteps);
    m.optimizer_steps = integer_at<std::int64_t>(json, "optimizer_steps", 0, m.step);
    m.world_size = integer_at<int>(json, "world_size", 1, kMaxRanks);
    m.zero_stage = integer_at<int>(json, "zero_stage", 0, 3);
    const nlohmann::json& partition = json.at("partition");
    m.shard_ranks = integer_at<int>(partition, "shard_ranks", 1, m.world_size);
    m.shard_numel = integer_at<std::size_t>(partition, "shard_numel", 0, kMaxElements);
    for (const nlohmann::json& b : partition.at("blocks"))
      m.blocks.push_back({b.at("name").get<std::string>(), integer_at<std::size_t>(b, "numel", 0, kMaxElements),
                          integer_at<std::size_t>(b, "chunk_numel", 0, kMaxElements),
                          integer_at<std::size_t>(b, "shard_offset", 0, kMaxElements)});
    m.loader = data::loader_position_from_json(json.at("loader"), source.string());
    const nlohmann::json& s = json.at("loss_scaler");
    // The scale is used as a float on the device: beyond FLT_MAX the conversion is undefined.
    if (!s.at("scale").is_number() || !(s.at("scale").get<double>() > 0.0) ||
        !(s.at("scale").get<double>() <= std::numeric_limits<float>::max()))
      throw UserError(fmt::format("'scale' must be a number in (0, {}], found {}", std::numeric_limits<float>::max(),
                                  s.at("scale").dump()));
    m.loss_scaler = {s.at("scale").get<double>(), integer_at<int>(s, "hysteresis_left", 0),
                     integer_at<std::int64_t>(s, "iteration", 0, kMaxSteps),
                     integer_at<std::int64_t>(s, "last_overflow_iteration", -1, kMaxSteps),
                     integer_at<std::int64_t>(s, "skipped_steps", 0, m.step)};
    for (const nlohmann::json& f : json.at("files")) m.files.push_back(shard_file_from_json(f));
    m.config_yaml = json.at("config_yaml").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: not a valid checkpoint manifest: {}", source.string(), e.what()));
  } catch (const UserError& e) {
    if (std::string_view(e.what()).starts_with(source.string())) throw;
    throw UserError(fmt::format("{}: not a valid checkpoint manifest: {}", source.string(), e.what()));
  }
  if (m.shard_ranks < 1) throw UserError(fmt::format("{}: partition.shard_ranks must be >= 1", source.string()));
  for (const BlockEntry& b : m.blocks)
    if (b.chunk_numel * static_cast<std::size_t>(m.shard_ranks) < b.numel ||
        b.shard_offset + b.chunk_numel > m.shard_numel)
      throw UserError(fmt::format("{}: block {} does not fit the partition", source.string(), b.name));
  return m;
}

}  // namespace zt::checkpoint
