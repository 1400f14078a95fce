#include "runtime/cli/config_options.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zt::cli {
namespace {

// The offset of the first byte of `text` that is not part of valid UTF-8, if any.
std::optional<std::size_t> invalid_utf8_at(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
    if (length == 0 || i + length > text.size()) return i;
    for (std::size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return i;
    i += length;
  }
  return std::nullopt;
}

// Config text is UTF-8 (YAML, and JSON in metrics and checkpoints): a value in another encoding
// is a command-line mistake, named here rather than failing deep inside a JSON writer.
void check_utf8(const std::string& assignment) {
  const std::size_t equals = assignment.find('=');
  const std::string key = assignment.substr(0, equals);
  if (const auto at = invalid_utf8_at(assignment)) {
    const bool in_value = equals != std::string::npos && *at > equals;
    throw UsageError(fmt::format("--set {}: the {} is not valid UTF-8 (byte 0x{:02x} at offset {})",
                                 in_value ? key : std::string("KEY=VALUE"), in_value ? "value" : "key",
                                 static_cast<unsigned char>(assignment[*at]), in_value ? *at - equals - 1 : *at));
  }
}

}  // namespace

void declare_config_options(po::options_description& options, bool required) {
  auto* file = po::value<std::string>()->value_name("FILE");
  if (required) file->required();
  options.add_options()("config,c", file, "experiment config (YAML)")(
      "set", po::value<std::vector<std::string>>()->value_name("KEY=VALUE")->composing(),
      "override one config key after the file is read, e.g. --set zero_optimization.stage=3; the value is YAML "
      "and is checked like one in the file; repeatable");
}

bool has_config_options(const po::variables_map& options) {
  return options.count("config") > 0 || options.count("set") > 0;
}

Config load_config_options(const po::variables_map& options) {
  if (!options.count("config")) throw UsageError("the option '--config' is required");
  std::vector<std::string> overrides;
  if (options.count("set")) overrides = options["set"].as<std::vector<std::string>>();
  for (const std::string& assignment : overrides) check_utf8(assignment);
  return load_config(options["config"].as<std::string>(), overrides);
}

}  // namespace zt::cli
