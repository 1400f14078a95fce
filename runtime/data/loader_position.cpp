#include "runtime/data/loader_position.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace zt::data {
namespace {

// At most 2^53: a run has far fewer epochs and windows, and UINT64_MAX is the loader's "no epoch
// prepared yet", which a crafted position must not be able to name.
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 53;

std::uint64_t read_count(const nlohmann::json& json, const char* key, std::string_view source) {
  // A JSON parser reads 5 as unsigned, while a json built in code from an int holds a signed 5.
  const bool valid = json.is_object() && json.contains(key) && json.at(key).is_number_integer() &&
                     (json.at(key).is_number_unsigned() || json.at(key).get<std::int64_t>() >= 0) &&
                     json.at(key).get<std::uint64_t>() <= kMaxCount;
  if (!valid) {
    throw UserError(fmt::format("{}: the data loader position needs \"{}\" as an integer in [0, {}], found {}",
                                source, key, kMaxCount,
                                json.is_object() && json.contains(key) ? json.at(key).dump() : "nothing"));
  }
  return json.at(key).get<std::uint64_t>();
}

}  // namespace

nlohmann::json loader_position_to_json(const LoaderPosition& position) {
  return {{"epoch", position.epoch}, {"window", position.window}};
}

LoaderPosition loader_position_from_json(const nlohmann::json& json, std::string_view source) {
  return {.epoch = read_count(json, "epoch", source), .window = read_count(json, "window", source)};
}

}  // namespace zt::data
