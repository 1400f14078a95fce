#include "runtime/config/json_input.h"

#include <fmt/format.h>

#include "core/error.h"

namespace zt {

nlohmann::json parse_json_input(const std::string& text, const std::string& what) {
  const nlohmann::json::parser_callback_t depth_limit = [&](int depth, nlohmann::json::parse_event_t,
                                                            nlohmann::json&) {
    if (depth > kMaxJsonDepth)
      throw UserError(fmt::format("{}: nested more than {} levels deep; no config needs that", what, kMaxJsonDepth));
    return true;
  };
  try {
    return nlohmann::json::parse(text, depth_limit);
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(fmt::format("{}: not valid JSON: {}", what, e.what()));
  }
}

}  // namespace zt
