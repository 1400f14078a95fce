#include "runtime/config/config_value.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "runtime/config/nearest_name.h"
#include "core/error.h"

namespace zt {
namespace {

// Quoted scalars ("4", '4', block literals, !!str) are strings, never numbers or booleans: a
// quoted number in a config is far more often a mistake than an intent.
bool is_quoted(const YAML::Node& node) { return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str"; }

std::string shorten(std::string_view text) {
  constexpr std::size_t kMaxShown = 40;
  if (text.size() <= kMaxShown) return std::string(text);
  return std::string(text.substr(0, kMaxShown - 3)) + "...";
}

std::string_view without_plus_sign(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  return text;
}

// A finite number written as YAML writes numbers; nothing otherwise (inf and nan are rejected:
// no config key means "infinitely large").
std::optional<double> parse_number(std::string_view text) {
  text = without_plus_sign(text);
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

// A decimal integer, or a number such as 5e8 or 1.0e6 that is exactly an integer (sizes are
// often written that way). `why` says what is wrong when nothing is returned.
std::optional<std::int64_t> parse_integer(std::string_view text, std::string& why) {
  std::string_view digits = without_plus_sign(text);
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (!digits.empty() && end == digits.data() + digits.size()) {
    if (error == std::errc()) return value;
    why = "too large for a 64-bit integer";
    return std::nullopt;
  }
  std::optional<double> as_number = parse_number(text);
  if (!as_number) return std::nullopt;
  if (std::trunc(*as_number) != *as_number) {
    why = "not a whole number";
    return std::nullopt;
  }
  // 2^63 itself is not representable as int64, hence the strict upper bound.
  if (*as_number < -9223372036854775808.0 || *as_number >= 9223372036854775808.0) {
    why = "too large for a 64-bit integer";
    return std::nullopt;
  }
  return static_cast<std::int64_t>(*as_number);
}

// The YAML 1.2 core spellings only; yes/no/on/off are rejected because YAML 1.1 tools read them as
// booleans and others as strings.
std::optional<bool> parse_boolean(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

bool in_range(const NumberRange& range, double value) {
  bool above_min = range.min_exclusive ? value > range.min : value >= range.min;
  bool below_max = range.max_exclusive ? value < range.max : value <= range.max;
  return above_min && below_max;
}

// Shortest text that reads back as the same double, always recognisable as a float ("1.0").
std::string format_number(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string format_bound(double bound, bool integers) {
  return integers ? fmt::format("{}", static_cast<std::int64_t>(bound)) : fmt::format("{}", bound);
}

std::string range_text(const NumberRange& range, bool integers) {
  bool has_min = std::isfinite(range.min);
  bool has_max = std::isfinite(range.max);
  // Only finite bounds are formatted: casting an infinite one to an integer is undefined behaviour.
  std::string min = has_min ? format_bound(range.min, integers) : "";
  std::string max = has_max ? format_bound(range.max, integers) : "";
  if (has_min && has_max) {
    if (integers && !range.min_exclusive && !range.max_exclusive) return min + ".." + max;
    return fmt::format("{}{}, {}{}", range.min_exclusive ? "(" : "[", min, max, range.max_exclusive ? ")" : "]");
  }
  if (has_min) return fmt::format("{} {}", range.min_exclusive ? ">" : ">=", min);
  if (has_max) return fmt::format("{} {}", range.max_exclusive ? "<" : "<=", max);
  return "";
}

std::string with_range(std::string what, const NumberRange& range, bool integers) {
  std::string text = range_text(range, integers);
  if (text.empty()) return what;
  if (std::isfinite(range.min) && std::isfinite(range.max)) return what + " in " + text;
  return what + " " + text;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string joined;
  for (const std::string& item : items) {
    if (!joined.empty()) joined += separator;
    joined += item;
  }
  return joined;
}

// A value as quoted in messages: numbers as they are, text in single quotes.
std::string found_text(const ConfigValue& value) {
  // fmt rather than operator+: GCC 12 at -O3 reports a false -Wrestrict on "'" + str + "'" (GCC bug 105329).
  if (const auto* text = std::get_if<std::string>(&value)) return fmt::format("'{}'", shorten(*text));
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return fmt::format("{}", *integer);
  if (const auto* number = std::get_if<double>(&value)) return fmt::format("{}", *number);
  if (const auto* boolean = std::get_if<bool>(&value)) return *boolean ? "true" : "false";
  std::vector<std::string> items;
  for (double item : std::get<std::vector<double>>(value)) items.push_back(fmt::format("{}", item));
  return "[" + join(items, ", ") + "]";
}

// Double-quoted YAML string: every character reads back as itself.
std::string quote_yaml_string(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\n': quoted += "\\n"; break;
      case '\t': quoted += "\\t"; break;
      case '\r': quoted += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) quoted += fmt::format("\\x{:02x}", c);
        else quoted += c;
    }
  }
  return quoted + "\"";
}

[[noreturn]] void throw_bad_value(const std::string& where, std::string_view key_label, std::string_view problem) {
  throw UserError(fmt::format("{}: bad value for '{}': {}", where, key_label, problem));
}

}  // namespace

std::string ValueSource::at(const YAML::Mark& mark) const {
  if (!has_positions_ || mark.is_null()) return name_;
  return fmt::format("{}:{}:{}", name_, mark.line + 1, mark.column + 1);
}

std::string describe_yaml_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing (an empty value)";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return fmt::format("a list of {} item{}", node.size(), node.size() == 1 ? "" : "s");
    case YAML::NodeType::Scalar:
      if (is_quoted(node)) return fmt::format("\"{}\" (a quoted string)", shorten(node.Scalar()));
      if (parse_number(node.Scalar())) return node.Scalar();
      return "'" + shorten(node.Scalar()) + "'";
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

std::string_view value_type_name(const ConfigKey& key) {
  switch (key.type) {
    case ValueType::integer: return "integer";
    case ValueType::number: return "number";
    case ValueType::boolean: return "boolean";
    case ValueType::string: return "string";
    case ValueType::choice: return "choice";
    case ValueType::number_list: return key.list_length == 2 ? "list of 2 numbers" : "list of numbers";
  }
  return "value";
}

std::string allowed_values_text(const ConfigKey& key) {
  switch (key.type) {
    case ValueType::integer: return range_text(key.range, true) + (key.auto_value ? ", auto" : "");
    case ValueType::number: return range_text(key.range, false);
    case ValueType::boolean: return "true, false";
    case ValueType::string: return key.allowed_text.empty() ? "any string" : key.allowed_text;
    case ValueType::choice: return join(key.choices, ", ");
    case ValueType::number_list: return with_range(fmt::format("{} numbers", key.list_length), key.range, false);
  }
  return "";
}

std::string expected_value_text(const ConfigKey& key) {
  switch (key.type) {
    case ValueType::integer: return with_range("an integer", key.range, true) + (key.auto_value ? " or auto" : "");
    case ValueType::number: return with_range("a number", key.range, false);
    case ValueType::boolean: return "true or false";
    case ValueType::string: return key.allowed_text.empty() ? "a string" : key.allowed_text;
    case ValueType::choice: return "one of " + join(key.choices, ", ");
    case ValueType::number_list:
      return with_range(fmt::format("a list of {} numbers", key.list_length), key.range, false);
  }
  return "a value";
}

std::optional<std::string> value_problem(const ConfigKey& key, const ConfigValue& value) {
  const std::string expected = "expected " + expected_value_text(key) + ", found " + found_text(value);
  switch (key.type) {
    case ValueType::integer:
      if (!in_range(key.range, static_cast<double>(std::get<std::int64_t>(value)))) return expected;
      return std::nullopt;
    case ValueType::number:
      if (!in_range(key.range, std::get<double>(value))) return expected;
      return std::nullopt;
    case ValueType::boolean: return std::nullopt;
    case ValueType::string: {
      if (!key.check_text) return std::nullopt;
      std::optional<std::string> problem = key.check_text(std::get<std::string>(value));
      if (problem) return expected + " (" + *problem + ")";
      return std::nullopt;
    }
    case ValueType::choice: {
      const std::string& name = std::get<std::string>(value);
      if (std::find(key.choices.begin(), key.choices.end(), name) != key.choices.end()) return std::nullopt;
      std::optional<std::string> suggestion = nearest_name(name, key.choices);
      if (suggestion) return expected + "; did you mean '" + *suggestion + "'?";
      return expected;
    }
    case ValueType::number_list: {
      const auto& list = std::get<std::vector<double>>(value);
      if (list.size() != key.list_length) return expected;
      for (double item : list)
        if (!in_range(key.range, item)) return expected;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string format_config_value(const ConfigKey& key, const ConfigValue& value) {
  if (key.auto_value && value == ConfigValue(*key.auto_value)) return "auto";
  if (const auto* text = std::get_if<std::string>(&value))
    return key.type == ValueType::choice ? *text : quote_yaml_string(*text);
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return fmt::format("{}", *integer);
  if (const auto* number = std::get_if<double>(&value)) return format_number(*number);
  if (const auto* boolean = std::get_if<bool>(&value)) return *boolean ? "true" : "false";
  std::vector<std::string> items;
  for (double item : std::get<std::vector<double>>(value)) items.push_back(format_number(item));
  return "[" + join(items, ", ") + "]";
}

ConfigValue read_config_value(const ConfigKey& key, const YAML::Node& node, const YAML::Mark& key_mark,
                              const ValueSource& source) {
  // An empty value ("key:") has the position of whatever follows it; the key's is more useful.
  const std::string where = source.at(node.IsNull() ? key_mark : node.Mark());
  const std::string expected = "expected " + expected_value_text(key) + ", found ";
  auto fail = [&](const std::string& found) { throw_bad_value(where, key.path, expected + found); };
  const bool plain_scalar = node.IsScalar() && !is_quoted(node);

  ConfigValue value;
  switch (key.type) {
    case ValueType::string:
      if (node.IsNull()) value = std::string();  // "key:" with nothing after it is the empty string
      else if (node.IsScalar()) value = node.Scalar();
      else fail(describe_yaml_node(node));
      break;
    case ValueType::choice:
      if (!node.IsScalar()) fail(describe_yaml_node(node));
      value = node.Scalar();
      break;
    case ValueType::boolean: {
      std::optional<bool> boolean = plain_scalar ? parse_boolean(node.Scalar()) : std::nullopt;
      if (!boolean) fail(describe_yaml_node(node));
      value = *boolean;
      break;
    }
    case ValueType::integer: {
      // The word, not its stored value: a literal 0 is still out of range.
      if (key.auto_value && plain_scalar && node.Scalar() == "auto") return *key.auto_value;
      std::string why;
      std::optional<std::int64_t> integer = plain_scalar ? parse_integer(node.Scalar(), why) : std::nullopt;
      if (!integer) fail(describe_yaml_node(node) + (why.empty() ? "" : " (" + why + ")"));
      value = *integer;
      break;
    }
    case ValueType::number: {
      std::optional<double> number = plain_scalar ? parse_number(node.Scalar()) : std::nullopt;
      if (!number) fail(describe_yaml_node(node));
      value = *number;
      break;
    }
    case ValueType::number_list: {
      if (!node.IsSequence() || node.size() != key.list_length) fail(describe_yaml_node(node));
      std::vector<double> list;
      for (std::size_t i = 0; i < node.size(); ++i) {
        const YAML::Node item = node[i];
        bool plain_item = item.IsScalar() && !is_quoted(item);
        std::optional<double> number = plain_item ? parse_number(item.Scalar()) : std::nullopt;
        if (!number || !in_range(key.range, *number)) {
          throw_bad_value(source.at(item.Mark()), fmt::format("{}[{}]", key.path, i),
                          fmt::format("expected {}, found {}", with_range("a number", key.range, false),
                                      describe_yaml_node(item)));
        }
        list.push_back(*number);
      }
      value = std::move(list);
      break;
    }
  }
  if (std::optional<std::string> problem = value_problem(key, value)) throw_bad_value(where, key.path, *problem);
  return value;
}

}  // namespace zt
