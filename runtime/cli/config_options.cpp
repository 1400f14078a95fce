#include "runtime/cli/config_options.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/cli/launcher_env.h"
#include "runtime/config/deepspeed_config.h"

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

// A DeepSpeed config as zerotrain settings, shown as the YAML it amounts to (rank 0 only).
DeepSpeedTranslation read_deepspeed(const std::string& file) {
  const auto [world, ranks_from] = launcher_world_size();
  DeepSpeedTranslation translation = translate_deepspeed_config(file, world, ranks_from);
  if (launcher_rank() == 0) {
    std::cout << "# " << file << " as zerotrain YAML:\n" << translation.yaml();
    if (!translation.deepspeed_defaults.empty())
      std::cout << "# DeepSpeed's defaults for what it leaves out (a --config YAML overrides them):\n"
                << translation.defaults_yaml();
    for (const std::string& note : translation.notes) std::cout << "# note: " << note << "\n";
    std::cout.flush();
  }
  return translation;
}

// WarmupCosineLR's ratios as a scheduler section of rates (0 until optimizer.lr is known).
ConfigLayer rate_layer(const std::vector<std::pair<std::string, double>>& ratios, double lr, const std::string& name) {
  std::string yaml = ratios.empty() ? "" : "scheduler:\n";
  for (const auto& [path, ratio] : ratios) yaml += fmt::format("  {}: {}\n", path.substr(path.find('.') + 1), ratio * lr);
  return {yaml, name};
}

// The layers, lowest first: DeepSpeed's defaults for what the file leaves out, the --config YAML
// (which overrides only what it states), the file's own settings, then --set. WarmupCosineLR's
// ratios become rates once optimizer.lr is known (a second pass; the first holds them at 0, which
// no rule refuses). Whatever still differs from what DeepSpeed would run is printed as a note.
Config load_with_deepspeed(const DeepSpeedTranslation& translation, const std::string& file,
                           const std::optional<std::string>& yaml, const std::vector<std::string>& overrides) {
  const std::string defaults_name = "DeepSpeed's defaults for what " + file + " leaves out";
  const std::string ratios_name = file + " (WarmupCosineLR's ratios x optimizer.lr)";
  const std::optional<ConfigLayer> yaml_layer = yaml ? std::optional(read_config_layer(*yaml)) : std::nullopt;
  auto layers_at = [&](double lr) {
    std::vector<ConfigLayer> layers = {{translation.defaults_yaml(), defaults_name},
                                       rate_layer(translation.default_ratios_of_lr, lr, defaults_name)};
    if (yaml_layer) layers.push_back(*yaml_layer);  // read once: both passes see the same file
    layers.push_back({translation.yaml(), file + " (as the zerotrain YAML above)"});
    layers.push_back(rate_layer(translation.ratios_of_lr, lr, ratios_name));
    return layers;
  };
  Config config = parse_config_layers(layers_at(0.0), overrides);
  if (!translation.ratios_of_lr.empty() || !translation.default_ratios_of_lr.empty())
    config = parse_config_layers(layers_at(config.optimizer.lr), overrides);
  if (launcher_rank() == 0)
    for (const std::string& line : differences_from_deepspeed(translation, config)) std::cout << "# note: " << line << "\n";
  std::cout.flush();
  return config;
}

}  // namespace

void declare_config_options(po::options_description& options, bool required) {
  (void)required;  // --config or --deepspeed: checked when the config is loaded
  options.add_options()("config,c", po::value<std::string>()->value_name("FILE"),
                        "experiment config (YAML; a .json file is read as a DeepSpeed config)")(
      "deepspeed", po::value<std::string>()->value_name("FILE"),
      "a DeepSpeed config (ds_config.json): its keys are mapped onto zerotrain's (docs/coming-from.md) and "
      "applied over --config, if given")(
      "set", po::value<std::vector<std::string>>()->value_name("KEY=VALUE")->composing(),
      "override one config key after the file is read, e.g. --set zero_optimization.stage=3; the value is YAML "
      "and is checked like one in the file; repeatable");
}

bool has_config_options(const po::variables_map& options) {
  return options.count("config") > 0 || options.count("set") > 0 || options.count("deepspeed") > 0;
}

Config load_config_options(const po::variables_map& options) {
  std::vector<std::string> overrides;
  if (options.count("set")) overrides = options["set"].as<std::vector<std::string>>();
  for (const std::string& assignment : overrides) check_utf8(assignment);
  std::optional<std::string> yaml, deepspeed;
  if (options.count("config")) {
    const std::string file = options["config"].as<std::string>();
    if (file.ends_with(".json"))
      deepspeed = file;
    else
      yaml = file;
  }
  if (options.count("deepspeed")) {
    if (deepspeed) throw UsageError("give one DeepSpeed config: --config is a .json file and --deepspeed is given too");
    deepspeed = options["deepspeed"].as<std::string>();
  }
  if (!yaml && !deepspeed) throw UsageError("the option '--config' is required");
  if (!deepspeed) return load_config(*yaml, overrides);
  return load_with_deepspeed(read_deepspeed(*deepspeed), *deepspeed, yaml, overrides);
}

}  // namespace zt::cli
