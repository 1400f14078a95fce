// The schema table: one entry per config key, the single source of truth for loading, --set
// overrides, validation, printing and the reference docs.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/config/config.h"

namespace zt {

enum class ValueType { integer, number, boolean, string, choice, number_list };

// A value already checked for its key's type. Choices are held by name until stored.
using ConfigValue = std::variant<std::int64_t, double, bool, std::string, std::vector<double>>;

// Bounds of an integer or number key (or of each element of a number list).
struct NumberRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  bool max_exclusive = false;
};

struct ConfigKey {
  std::string path{};  // "section.key", e.g. "zero_optimization.stage"
  ValueType type = ValueType::integer;
  ConfigValue default_value{};
  NumberRange range{};                 // integer, number, number_list
  std::vector<std::string> choices{};  // choice: the YAML names
  std::vector<int> choice_values{};    // choice: the enum value of each name
  std::size_t list_length = 0;         // number_list
  // integer keys that also take the word `auto` (the engine then chooses): stored as this value,
  // which lies outside the key's range.
  std::optional<std::int64_t> auto_value{};
  // string keys with a format: what is wrong with `text`, or nothing when it is fine.
  std::function<std::optional<std::string>(std::string_view text)> check_text{};
  std::string allowed_text{};  // string keys with a format: the formats, for messages and docs
  std::string doc{};           // one line, for the reference docs
  std::function<void(Config&, const ConfigValue&)> store{};
  std::function<ConfigValue(const Config&)> read{};

  std::string_view section() const { return std::string_view(path).substr(0, path.find('.')); }
  std::string_view name() const { return std::string_view(path).substr(path.find('.') + 1); }
};

struct ConfigSection {
  std::string name;
  std::string doc;
};

// A named model shape; its values are stored into the listed keys unless those were given.
struct ModelPresetShape {
  std::string name;  // as written in model.preset
  std::string description;
  std::vector<std::pair<std::string, ConfigValue>> values;  // key path -> value (of the key's type)
};

// A rule that involves several keys, checked after all keys are read.
struct ConsistencyRule {
  std::string description;       // for the docs
  std::vector<std::string> keys;  // the keys involved; the first one given explicitly is blamed
  // The problem with `config`, or nothing when it satisfies the rule.
  std::function<std::optional<std::string>(const Config& config)> check;
};

std::span<const ConfigSection> config_sections();
std::span<const ConfigKey> config_keys();  // in schema order, section by section
std::span<const ModelPresetShape> model_presets();
std::span<const ConsistencyRule> consistency_rules();

const ConfigSection* find_config_section(std::string_view name);
const ConfigKey* find_config_key(std::string_view path);

// What is wrong with `value` for `key` (out of range, not a choice, bad format), or nothing.
// `value` must already have the key's type.
std::optional<std::string> value_problem(const ConfigKey& key, const ConfigValue& value);

// `value` as YAML text: 42, 0.0003, true, "text", [0.9, 0.95]; choices unquoted.
std::string format_config_value(const ConfigKey& key, const ConfigValue& value);

// What a key accepts, for messages: "an integer in 1..1024", "one of gpt2, mlp", ...
std::string expected_value_text(const ConfigKey& key);

// The allowed values alone, for the docs: "1..1024", "gpt2, mlp", ">= 0", "any string".
std::string allowed_values_text(const ConfigKey& key);

std::string_view value_type_name(const ConfigKey& key);  // "integer", "list of 2 numbers", ...

}  // namespace zt
