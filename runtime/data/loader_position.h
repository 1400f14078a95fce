// Where a TokenLoader stands in its data stream, small enough to store in a checkpoint.
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace zt::data {

struct LoaderPosition {
  std::uint64_t epoch = 0;
  // Windows of this epoch's order already consumed by all ranks together. Counting windows, not
  // batches, lets a run resume with another world size or batch size on the same stream.
  std::uint64_t window = 0;

  bool operator==(const LoaderPosition&) const = default;
};

// {"epoch": E, "window": W}
nlohmann::json loader_position_to_json(const LoaderPosition& position);
// Throws zt::UserError naming `source` (e.g. the checkpoint file) when a key is missing or not a
// non-negative integer.
LoaderPosition loader_position_from_json(const nlohmann::json& json, std::string_view source);

}  // namespace zt::data
