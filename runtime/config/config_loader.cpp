// Loading: YAML file and --set overrides -> assignments (each checked on its own) -> defaults,
// assignments in order, model preset -> checks across keys -> Config.
#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "runtime/config/config.h"
#include "runtime/config/config_schema.h"
#include "runtime/config/config_value.h"
#include "runtime/config/hf_config_shape.h"
#include "runtime/config/nearest_name.h"
#include "core/error.h"
#include "core/safe_file.h"

namespace zt {
namespace {

// One key given a value by the file or by --set; `origin` is where, for later messages.
struct Assignment {
  const ConfigKey* key;
  ConfigValue value;
  std::string origin;
};

std::vector<std::string> section_names() {
  std::vector<std::string> names;
  for (const ConfigSection& section : config_sections()) names.push_back(section.name);
  return names;
}

std::vector<std::string> key_names_in(std::string_view section) {
  std::vector<std::string> names;
  for (const ConfigKey& key : config_keys())
    if (key.section() == section) names.emplace_back(key.name());
  return names;
}

std::string comma_list(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return list;
}

// The key whose own name (without the section) is nearest to `name`, in whichever section: catches
// keys written under the wrong section, like "train.lr" for "optimizer.lr".
std::optional<std::string> key_in_any_section(std::string_view name) {
  std::vector<std::string> names;
  for (const ConfigKey& key : config_keys()) names.emplace_back(key.name());
  std::optional<std::string> nearest = nearest_name(name, names);
  if (!nearest) return std::nullopt;
  for (const ConfigKey& key : config_keys())
    if (key.name() == *nearest) return key.path;
  return std::nullopt;
}

// The valid key (or section) most likely meant by the unknown dotted `path`.
std::optional<std::string> suggest_key(std::string_view path) {
  const std::size_t dot = path.find('.');
  if (dot == std::string_view::npos) {
    if (std::optional<std::string> section = nearest_name(path, section_names())) return section;
    return key_in_any_section(path);
  }
  const std::string_view section = path.substr(0, dot);
  const std::string_view name = path.substr(dot + 1);
  std::string section_meant(section);
  if (find_config_section(section) == nullptr) section_meant = nearest_name(section, section_names()).value_or("");
  if (!section_meant.empty()) {
    std::string same_name = section_meant + "." + std::string(name);
    if (find_config_key(same_name) != nullptr) return same_name;
    if (std::optional<std::string> nearest = nearest_name(name, key_names_in(section_meant)))
      return section_meant + "." + *nearest;
  }
  return key_in_any_section(name);
}

std::string unknown_key_message(std::string_view path) {
  if (std::optional<std::string> suggestion = suggest_key(path))
    return fmt::format("unknown key '{}'; did you mean '{}'?", path, *suggestion);
  const std::size_t dot = path.find('.');
  if (dot != std::string_view::npos && find_config_section(path.substr(0, dot)) != nullptr) {
    std::string_view section = path.substr(0, dot);
    return fmt::format("unknown key '{}' (the keys of '{}' are {})", path, section, comma_list(key_names_in(section)));
  }
  return fmt::format("unknown key '{}' (the sections are {})", path, comma_list(section_names()));
}

// ---- The file ----

std::string read_config_file(const std::filesystem::path& file) {
  std::error_code error;
  if (std::filesystem::is_directory(file, error))
    throw UserError(fmt::format("cannot read config file '{}': it is a directory", file.string()));
  std::string why;
  std::optional<std::string> text = read_regular_file(file, why);
  if (!text) throw UserError(fmt::format("cannot read config file '{}': {}", file.string(), why));
  return std::move(*text);
}

// Rejects binary files (or a config saved as UTF-16) with a clear message before the YAML parser
// makes something confusing of them.
void check_is_text(std::string_view text, std::string_view source_name) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const bool control = byte < 0x20 && byte != '\n' && byte != '\r' && byte != '\t';
    const std::size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3 : (byte >> 3) == 0x1E ? 4 : 0;
    bool valid = !control && length != 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (!valid) {
      throw UserError(fmt::format("{}:{}: not a YAML text file (byte 0x{:02x} at offset {} is not UTF-8 text)",
                                  source_name, line, byte, i));
    }
    if (byte == '\n') ++line;
    i += length;
  }
}

// A map key as text; keys that are lists or maps are not config keys.
std::string key_text(const YAML::Node& key, const ValueSource& source) {
  if (!key.IsScalar())
    throw UserError(fmt::format("{}: a key must be a plain name, found {}", source.at(key.Mark()), describe_yaml_node(key)));
  return key.Scalar();
}

// yaml-cpp keeps both entries of a repeated key, so repeats are caught here rather than one
// silently winning.
void check_not_repeated(std::map<std::string, YAML::Mark>& seen, const std::string& path, const YAML::Mark& mark,
                        const ValueSource& source) {
  auto [first, inserted] = seen.emplace(path, mark);
  if (!inserted) {
    throw UserError(fmt::format("{}: duplicate key '{}' (first given at line {}, column {})", source.at(mark), path,
                                first->second.line + 1, first->second.column + 1));
  }
}

// Remembers where the latest document started; ignores everything else.
class DocumentStartRecorder : public YAML::EventHandler {
 public:
  YAML::Mark start;
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The one YAML document of a config (a null node when there is none). yaml-cpp 0.7's LoadAll never
// returns, allocating as it goes, when a document starts with a token its parser does not consume,
// such as a stray ',' (yaml-cpp issue #1040, fixed after 0.8): the parser then yields empty
// documents forever, all starting at the same position. So the documents are first walked with the
// event parser, stopping at such a repeat, and only a single good document is built with Load.
// `hint` is appended to syntax errors.
YAML::Node load_single_document(std::string_view yaml_text, const ValueSource& source, std::string_view hint = "") {
  const std::string text(yaml_text);
  std::vector<YAML::Mark> starts;
  try {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentStartRecorder recorder;
    // Three documents are enough to tell "more than one" from "stuck after the first".
    while (starts.size() < 3 && parser.HandleNextDocument(recorder)) {
      if (!starts.empty() && recorder.start.pos == starts.back().pos) {
        const auto at = static_cast<std::size_t>(recorder.start.pos);
        throw UserError(fmt::format("{}: YAML syntax error: unexpected '{}'{}", source.at(recorder.start),
                                    at < text.size() ? text.substr(at, 1) : std::string("end of file"), hint));
      }
      starts.push_back(recorder.start);
    }
    if (starts.empty()) return YAML::Node();  // an empty file, or only comments
    if (starts.size() > 1)
      throw UserError(fmt::format("{}: a config is one YAML document, found more (separated by '---')", source.at(starts[1])));
    return YAML::Load(text);
  } catch (const YAML::Exception& error) {
    throw UserError(fmt::format("{}: YAML syntax error: {}{}", source.at(error.mark), error.msg, hint));
  }
}

// Everything wrong with a config, collected so that one run reports it all. A key whose value
// was rejected is remembered, so that rules across keys are not checked against its default.
struct Problems {
  std::vector<std::string> messages;
  std::set<std::string> failed_keys;
  void add(std::string message) { messages.push_back(std::move(message)); }
};

std::vector<Assignment> read_yaml_assignments(std::string_view yaml_text, const ValueSource& source,
                                              Problems& problems) {
  const YAML::Node root = load_single_document(yaml_text, source);
  if (root.IsNull()) return {};  // all defaults
  if (!root.IsMap()) {
    throw UserError(fmt::format("{}: the top level must be a map of sections ({}), found {}", source.at(root.Mark()),
                                comma_list(section_names()), describe_yaml_node(root)));
  }

  std::vector<Assignment> assignments;
  std::map<std::string, YAML::Mark> seen;
  // Each key is checked on its own; a mistake is recorded and reading goes on with the next key.
  auto attempt = [&problems](const std::function<void()>& step) {
    try {
      step();
    } catch (const UserError& error) {
      problems.add(error.what());
    }
  };
  for (const auto& section_entry : root) {
    attempt([&] {
      const std::string section = key_text(section_entry.first, source);
      const YAML::Mark section_mark = section_entry.first.Mark();
      check_not_repeated(seen, section, section_mark, source);
      if (find_config_section(section) == nullptr)
        throw UserError(fmt::format("{}: {}", source.at(section_mark), unknown_key_message(section)));
      const YAML::Node& body = section_entry.second;
      if (body.IsNull()) return;  // a section whose keys are all commented out
      if (!body.IsMap()) {
        throw UserError(fmt::format("{}: section '{}' must be a map of its keys, found {}", source.at(body.Mark()),
                                    section, describe_yaml_node(body)));
      }
      for (const auto& key_entry : body) {
        std::string path;
        attempt([&] {
          path = section + "." + key_text(key_entry.first, source);
          const YAML::Mark key_mark = key_entry.first.Mark();
          check_not_repeated(seen, path, key_mark, source);
          const ConfigKey* key = find_config_key(path);
          if (key == nullptr) throw UserError(fmt::format("{}: {}", source.at(key_mark), unknown_key_message(path)));
          try {
            assignments.push_back({key, read_config_value(*key, key_entry.second, key_mark, source), source.at(key_mark)});
          } catch (const UserError&) {
            problems.failed_keys.insert(path);
            throw;
          }
        });
      }
    });
  }
  return assignments;
}

// ---- --set overrides ----

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// "model.n_layer=4": the value is YAML (a scalar or a flow list like [0.9, 0.99]) with the same
// checks as in a file; the whole argument stands for the position in messages.
Assignment read_override(const std::string& argument) {
  const std::string origin = "--set " + argument;
  const std::size_t equals = argument.find('=');
  if (equals == std::string::npos)
    throw UserError(fmt::format("{}: expected KEY=VALUE, e.g. --set model.n_layer=4", origin));
  const std::string path(trimmed(std::string_view(argument).substr(0, equals)));
  const std::string value_text = argument.substr(equals + 1);
  if (path.empty()) throw UserError(fmt::format("{}: no key before '='", origin));
  if (find_config_section(path) != nullptr) {
    throw UserError(fmt::format("{}: '{}' is a section; set one of its keys, e.g. '{}.{}'", origin, path, path,
                                key_names_in(path).front()));
  }
  const ConfigKey* key = find_config_key(path);
  if (key == nullptr) throw UserError(fmt::format("{}: {}", origin, unknown_key_message(path)));
  const ValueSource source = ValueSource::override_argument(origin);
  const YAML::Node node =
      load_single_document(value_text, source, fmt::format(" in the value; quote it, e.g. {}='\"...\"'", path));
  return {key, read_config_value(*key, node, YAML::Mark::null_mark(), source), origin};
}

// ---- Resolving ----

// Fills the preset's shape into the keys that were not given explicitly.
void apply_model_preset(Config& config, const std::map<std::string, std::string>& origin_of) {
  const std::string_view preset_name = choice_name(config.model.preset);
  for (const ModelPresetShape& preset : model_presets()) {
    if (preset.name != preset_name) continue;
    for (const auto& [path, value] : preset.values)
      if (!origin_of.contains(path)) find_config_key(path)->store(config, value);
  }
}

// With model.init_from, the checkpoint's config.json gives the shape keys that were not given
// explicitly (an explicit preset wins: the weights are then checked against it when loaded).
// Those keys' origin (read_origin_of) is the config.json, so that a check across keys that no
// key given explicitly takes part in blames the file the values came from. Returns false when the
// shape is unknown: init_from names no config.json (moved or deleted after a run began; a resumed
// run takes the shape from its checkpoint, runtime/train/resume_choice.h).
bool apply_init_from_shape(Config& config, const std::map<std::string, std::string>& origin_of,
                           std::map<std::string, std::string>& read_origin_of) {
  if (config.model.init_from.empty() || origin_of.contains("model.preset")) return true;
  const std::optional<std::filesystem::path> config_json = hf_config_json_for(config.model.init_from);
  if (!config_json) return false;
  for (const auto& [path, value] : hf_config_shape(*config_json)) {
    if (origin_of.contains(path)) continue;
    find_config_key(path)->store(config, value);
    read_origin_of[path] = fmt::format("{} (model.init_from)", config_json->string());
  }
  config.model.preset = ModelPreset::none;  // the shape is the checkpoint's, not the default preset's
  return true;
}

Config resolve(const std::vector<Assignment>& assignments, const std::string& fallback_origin, Problems& problems) {
  Config config;
  for (const ConfigKey& key : config_keys()) key.store(config, key.default_value);
  std::map<std::string, std::string> origin_of;
  for (const Assignment& assignment : assignments) {
    assignment.key->store(config, assignment.value);
    origin_of[assignment.key->path] = assignment.origin;
  }
  apply_model_preset(config, origin_of);
  std::map<std::string, std::string> read_origin_of;  // keys read from init_from's config.json
  bool shape_known = true;
  try {
    shape_known = apply_init_from_shape(config, origin_of, read_origin_of);
  } catch (const UserError& error) {
    problems.add(fmt::format("{}: {}", origin_of.count("model.init_from") ? origin_of["model.init_from"] : fallback_origin,
                             error.what()));
  }
  for (const ConsistencyRule& rule : consistency_rules()) {
    // A key whose own value was rejected would be checked with its default: skip the rule.
    if (std::any_of(rule.keys.begin(), rule.keys.end(),
                    [&](const std::string& path) { return problems.failed_keys.contains(path); }))
      continue;
    // A shape still unknown (the default preset's) is not checked against the other keys.
    if (!shape_known && std::any_of(rule.keys.begin(), rule.keys.end(),
                                    [](const std::string& path) { return path.starts_with("model."); }))
      continue;
    std::optional<std::string> problem = rule.check(config);
    if (!problem) continue;
    // Blame the first key of the rule that was given explicitly: that is where to fix it; else the
    // config.json a key was read from.
    std::string origin = fallback_origin;
    bool blamed = false;
    for (const auto* origins : {&origin_of, &read_origin_of}) {
      for (const std::string& path : rule.keys) {
        if (auto given = origins->find(path); given != origins->end()) {
          origin = given->second;
          blamed = true;
          break;
        }
      }
      if (blamed) break;
    }
    problems.add(fmt::format("{}: {}", origin, *problem));
  }
  return config;
}

// One problem reads as before; several are listed, one per line, under a count.
void throw_if_any(const Problems& problems, std::string_view source_name) {
  if (problems.messages.empty()) return;
  if (problems.messages.size() == 1) throw UserError(problems.messages.front());
  std::string message = fmt::format("{}: {} problems in the config:", source_name, problems.messages.size());
  for (const std::string& m : problems.messages) message += "\n  " + m;
  throw UserError(message);
}

}  // namespace

Config default_config() {
  Problems problems;
  Config config = resolve({}, "defaults", problems);
  throw_if_any(problems, "defaults");
  return config;
}

Config parse_config_layers(std::span<const ConfigLayer> layers, std::span<const std::string> overrides) {
  Problems problems;
  std::vector<Assignment> assignments;
  for (const ConfigLayer& layer : layers) {
    check_is_text(layer.yaml_text, layer.source_name);
    for (Assignment& assignment :
         read_yaml_assignments(layer.yaml_text, ValueSource::file(layer.source_name), problems))
      assignments.push_back(std::move(assignment));
  }
  for (const std::string& argument : overrides) {
    try {
      assignments.push_back(read_override(argument));
    } catch (const UserError& error) {
      problems.add(error.what());
      const std::string path(trimmed(std::string_view(argument).substr(0, argument.find('='))));
      problems.failed_keys.insert(path);
    }
  }
  const std::string source_name = layers.empty() ? std::string("defaults") : layers.back().source_name;
  Config config = resolve(assignments, source_name, problems);
  throw_if_any(problems, source_name);
  return config;
}

Config parse_config(std::string_view yaml_text, std::string_view source_name, std::span<const std::string> overrides) {
  const ConfigLayer layer{std::string(yaml_text), std::string(source_name)};
  return parse_config_layers({&layer, 1}, overrides);
}

ConfigLayer read_config_layer(const std::filesystem::path& file) { return {read_config_file(file), file.string()}; }

Config load_config(const std::filesystem::path& file, std::span<const std::string> overrides) {
  return parse_config(read_config_file(file), file.string(), overrides);
}

std::int64_t effective_seq_len(const Config& config) {
  return config.data.seq_len == 0 ? config.model.block_size : config.data.seq_len;
}

}  // namespace zt
