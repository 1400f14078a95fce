#include "runtime/checkpoint/checkpoint_manifest.h"

#include <fmt/format.h>

#include "runtime/core/error.h"

namespace zt::checkpoint {

nlohmann::ordered_json shard_file_to_json(const ShardFileEntry& entry) {
  return {{"name", entry.name}, {"rank", entry.rank}, {"kind", entry.kind}, {"bytes", entry.bytes},
          {"crc32", entry.crc32}};
}

ShardFileEntry shard_file_from_json(const nlohmann::json& json) {
  return {json.at("name").get<std::string>(), json.at("rank").get<int>(), json.at("kind").get<std::string>(),
          json.at("bytes").get<std::uint64_t>(), json.at("crc32").get<std::uint32_t>()};
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
    m.format_version = json.at("format_version").get<int>();
    if (m.format_version != kFormatVersion)
      throw UserError(fmt::format("{}: unsupported checkpoint format version {} (this zerotrain reads version {})",
                                  source.string(), m.format_version, kFormatVersion));
    m.step = json.at("step").get<std::int64_t>();
    m.optimizer_steps = json.at("optimizer_steps").get<std::int64_t>();
    m.world_size = json.at("world_size").get<int>();
    m.zero_stage = json.at("zero_stage").get<int>();
    const nlohmann::json& partition = json.at("partition");
    m.shard_ranks = partition.at("shard_ranks").get<int>();
    m.shard_numel = partition.at("shard_numel").get<std::size_t>();
    for (const nlohmann::json& b : partition.at("blocks"))
      m.blocks.push_back({b.at("name").get<std::string>(), b.at("numel").get<std::size_t>(),
                          b.at("chunk_numel").get<std::size_t>(), b.at("shard_offset").get<std::size_t>()});
    m.loader = data::loader_position_from_json(json.at("loader"), source.string());
    const nlohmann::json& s = json.at("loss_scaler");
    m.loss_scaler = {s.at("scale").get<double>(), s.at("hysteresis_left").get<int>(),
                     s.at("iteration").get<std::int64_t>(), s.at("last_overflow_iteration").get<std::int64_t>(),
                     s.at("skipped_steps").get<std::int64_t>()};
    for (const nlohmann::json& f : json.at("files")) m.files.push_back(shard_file_from_json(f));
    m.config_yaml = json.at("config_yaml").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
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
