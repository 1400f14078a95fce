// Reading one YAML value for a config key: strict type checks, then the key's range, choices or
// format. Internal to runtime/config.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "runtime/config/config_schema.h"

namespace zt {

// Where values come from, for messages: a YAML file (whose positions become "file:line:column")
// or one --set argument (which is its own position: "--set model.n_layer=4").
class ValueSource {
 public:
  static ValueSource file(std::string file_name) { return ValueSource(std::move(file_name), true); }
  static ValueSource override_argument(std::string argument) { return ValueSource(std::move(argument), false); }

  std::string at(const YAML::Mark& mark) const;  // 1-based line and column, like editors show them
  const std::string& name() const { return name_; }

 private:
  ValueSource(std::string name, bool has_positions) : name_(std::move(name)), has_positions_(has_positions) {}
  std::string name_;
  bool has_positions_;
};

// The value of `node` for `key`, checked for type and allowed values; throws zt::UserError naming
// the position, the key, what was expected and what was found. `key_mark` is used for values
// without a position of their own (an empty value).
ConfigValue read_config_value(const ConfigKey& key, const YAML::Node& node, const YAML::Mark& key_mark,
                              const ValueSource& source);

// A short description of a YAML node for messages: 4, 'four', "4" (a quoted string), a map, ...
std::string describe_yaml_node(const YAML::Node& node);

}  // namespace zt
