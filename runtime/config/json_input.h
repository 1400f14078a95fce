// JSON files users hand zerotrain (DeepSpeed configs, Hugging Face config.json), parsed with a
// limit on nesting: nlohmann::json's dump and destruction recurse, so a value nested 200,000
// levels deep would overflow the stack long after parsing succeeded. No real config nests more
// than a handful of levels.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace zt {

inline constexpr int kMaxJsonDepth = 64;

// Throws zt::UserError naming `what` on invalid JSON or nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json_input(const std::string& text, const std::string& what);

}  // namespace zt
