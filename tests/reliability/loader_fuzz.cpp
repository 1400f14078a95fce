// Feeds the config loader, the token-shard reader, the token loader and the checkpoint manifest
// reader thousands of malformed inputs and checks that each one ends in a zt::UserError (the CLI turns it into one message and
// exit status 1) or loads, never in another exception, a crash or undefined behaviour. In a build
// with ZT_SANITIZE=address,undefined (CI's build-sanitize/, scripts/test.sh) the loaders run under
// AddressSanitizer and UBSan (-fno-sanitize-recover=all), so memory errors and UB abort the test
// instead of passing silently.
//
// The inputs are systematic rather than random where the format allows (every key with every wrong
// type, a shard truncated at every offset, every bit of the header flipped), plus seeded random
// garbage, so a failure reproduces from the case name it prints.
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "runtime/checkpoint/checkpoint_manifest.h"
#include "runtime/config/config.h"
#include "runtime/config/config_schema.h"
#include "core/error.h"
#include "runtime/data/shard_format.h"
#include "runtime/data/shard_reader.h"
#include "runtime/data/shard_writer.h"
#include "runtime/data/token_loader.h"

namespace {

namespace fs = std::filesystem;

struct Tally {
  int loaded = 0;
  int rejected = 0;  // zt::UserError, as required
  std::vector<std::string> failures;  // anything else
};

// Runs one case: success and zt::UserError are fine; any other exception is a failure.
void run_case(Tally& tally, const std::string& name, const std::function<void()>& body) {
  try {
    body();
    ++tally.loaded;
    // Triage aid: which malformed inputs were accepted (not a failure by itself).
    if (std::getenv("ZT_FUZZ_LIST_LOADED") != nullptr) std::printf("loaded: %s\n", name.c_str());
  } catch (const zt::UserError& e) {
    ++tally.rejected;
    if (std::string(e.what()).empty()) tally.failures.push_back(name + ": a UserError without a message");
  } catch (const std::exception& e) {
    tally.failures.push_back(fmt::format("{}: {} instead of a zt::UserError: {}", name, typeid(e).name(), e.what()));
  } catch (...) {
    tally.failures.push_back(name + ": a non-std exception");
  }
}

std::string random_bytes(std::mt19937_64& rng, std::size_t n, bool printable) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(printable ? 32 + rng() % 95 : rng() % 256);
  return s;
}

// ---- configs ----

void fuzz_configs(Tally& tally) {
  auto parse = [&](const std::string& name, const std::string& text, std::vector<std::string> overrides = {}) {
    run_case(tally, name, [&] { zt::parse_config(text, "fuzz.yaml", overrides); });
  };
  const std::vector<std::string> wrong_values = {
      "\"text\"", "[1, 2]", "{a: 1}", "1e400", "-1e400", "-1", "0", "99999999999999999999999", "-9223372036854775809",
      ".nan", ".inf", "true", "null", "~", "''", "0x10", "1_000", "\"\\x00\"", "&a 1", "*undefined_alias", "!!binary AAAA",
      "[", "{", "'unterminated", "- list item", "2.5", "-0.0", "1e-400", "9223372036854775807"};
  for (const zt::ConfigKey& key : zt::config_keys()) {
    const std::string section(key.section()), name(key.name());
    for (const std::string& value : wrong_values) {
      parse(fmt::format("{}={}", key.path, value), fmt::format("{}:\n  {}: {}\n", section, name, value));
      parse(fmt::format("--set {}={}", key.path, value), "", {fmt::format("{}={}", key.path, value)});
    }
    parse(key.path + " nested", fmt::format("{}:\n  {}:\n    unknown: 1\n", section, name));
    parse(key.path + " unknown sibling", fmt::format("{}:\n  {}_typo: 1\n", section, name));
    parse(key.path + " duplicate", fmt::format("{}:\n  {}: 1\n  {}: 2\n", section, name, name));
    parse("--set " + key.path + " without value", "", {key.path});
    parse("--set " + key.path + "= empty", "", {key.path + "="});
  }
  for (const zt::ConfigSection& section : zt::config_sections()) {
    parse(section.name + " scalar", section.name + ": 5\n");
    parse(section.name + " list", section.name + ": [1, 2]\n");
    parse(section.name + " unknown key", section.name + ":\n  no_such_key: 1\n");
  }
  const std::vector<std::pair<std::string, std::string>> documents = {
      {"empty", ""}, {"only a comment", "# nothing\n"}, {"scalar document", "42\n"}, {"list document", "- a\n- b\n"},
      {"unknown section", "no_such_section: {a: 1}\n"}, {"tab indentation", "train:\n\tsteps: 5\n"},
      {"two documents", "train: {steps: 5}\n---\ntrain: {steps: 6}\n"}, {"null section", "train:\n"},
      {"anchors and merge", "base: &b {steps: 5}\ntrain:\n  <<: *b\n"}, {"BOM", "\xEF\xBB\xBFtrain: {steps: 5}\n"},
      {"NUL in text", std::string("train: {steps: 5}\n\0garbage", 27)},
      {"deep flow nesting", std::string(2000, '[') + std::string(2000, ']')},
      {"deep block nesting", [] { std::string s; for (int i = 0; i < 500; ++i) s += std::string(i, ' ') + "a:\n"; return s; }()},
      {"huge key", std::string(100000, 'k') + ": 1\n"},
      {"huge string value", "logging:\n  run_dir: \"" + std::string(100000, 'x') + "\"\n"},
  };
  for (const auto& [name, text] : documents) parse(name, text);
  // A valid resolved config cut at every offset: every prefix must load or be rejected cleanly.
  const std::string valid = zt::config_to_yaml(zt::default_config());
  for (std::size_t cut = 0; cut <= valid.size(); cut += 7) parse(fmt::format("resolved config cut at {}", cut), valid.substr(0, cut));
  std::mt19937_64 rng(20240520);
  for (int i = 0; i < 300; ++i) parse(fmt::format("binary garbage #{}", i), random_bytes(rng, 1 + rng() % 512, false));
  for (int i = 0; i < 300; ++i) parse(fmt::format("printable garbage #{}", i), random_bytes(rng, 1 + rng() % 512, true));
  // Random single-byte edits of the valid config: mostly near-misses of real keys and values.
  for (int i = 0; i < 1000; ++i) {
    std::string text = valid;
    text[rng() % text.size()] = static_cast<char>(rng() % 256);
    parse(fmt::format("resolved config with byte edit #{}", i), text);
  }
}

// ---- token shards ----

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Opens the shard as training does: the reader, then a loader over it that takes a few batches.
void load_shard(const fs::path& path) {
  zt::data::TokenShard shard(path);
  shard.check_tokens_below(256);
  zt::data::TokenLoader loader({path.string(), 2, 8, 0, 1, 7, 256, zt::data::WindowOrder::shuffled});
  std::vector<std::int32_t> inputs(16), targets(16);
  for (int i = 0; i < 5; ++i) loader.next(inputs, targets);
}

void fuzz_shards(Tally& tally, const fs::path& dir) {
  std::vector<std::uint16_t> tokens(300);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i * 37 % 256);
  const fs::path good = dir / "good.bin";
  zt::data::write_token_shard(good, tokens);
  const std::string valid = read_file(good);
  run_case(tally, "the valid shard", [&] { load_shard(good); });
  const fs::path bad = dir / "bad.bin";
  auto check = [&](const std::string& name, const std::string& bytes) {
    write_file(bad, bytes);
    run_case(tally, name, [&] { load_shard(bad); });
  };
  for (std::size_t cut = 0; cut < valid.size(); cut += cut < 1100 ? 1 : 13)
    check(fmt::format("shard truncated at {}", cut), valid.substr(0, cut));
  for (std::size_t bit = 0; bit < 8 * 16; ++bit) {  // magic, version, count, and the first reserved ints
    std::string bytes = valid;
    bytes[bit / 8] = static_cast<char>(bytes[bit / 8] ^ (1 << (bit % 8)));
    check(fmt::format("shard header bit {} flipped", bit), bytes);
  }
  const std::vector<std::int32_t> counts = {0, 1, 2, 299, 301, -1, INT32_MIN, INT32_MAX};
  for (std::int32_t count : counts) {
    std::string bytes = valid;
    std::memcpy(bytes.data() + 8, &count, sizeof(count));
    check(fmt::format("shard header token count {}", count), bytes);
  }
  std::string big_tokens = valid;
  for (std::size_t i = zt::data::kShardHeaderBytes; i + 1 < big_tokens.size(); i += 2) big_tokens[i + 1] = '\xff';
  check("tokens beyond the vocabulary", big_tokens);
  check("trailing garbage", valid + "xyz");
  check("empty file", "");
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200; ++i) {
    std::string bytes = valid;
    for (int flips = 0; flips < 4; ++flips) bytes[rng() % bytes.size()] = static_cast<char>(rng() % 256);
    check(fmt::format("shard with random byte edits #{}", i), bytes);
  }
  run_case(tally, "a directory instead of a shard", [&] { load_shard(dir); });
  run_case(tally, "a missing shard", [&] { load_shard(dir / "missing.bin"); });
}

// ---- checkpoint manifests ----

// Every JSON pointer of `json` (objects and arrays, recursively), e.g. "/partition/blocks/0/numel".
void collect_pointers(const nlohmann::json& json, const std::string& at, std::vector<std::string>& out) {
  if (json.is_object())
    for (const auto& [key, value] : json.items()) {
      out.push_back(at + "/" + key);
      collect_pointers(value, at + "/" + key, out);
    }
  if (json.is_array())
    for (std::size_t i = 0; i < json.size(); ++i) {
      out.push_back(at + "/" + std::to_string(i));
      collect_pointers(json[i], at + "/" + std::to_string(i), out);
    }
}

void fuzz_manifests(Tally& tally) {
  zt::checkpoint::Manifest valid;
  valid.step = 8;
  valid.optimizer_steps = 8;
  valid.world_size = 2;
  valid.zero_stage = 2;
  valid.shard_ranks = 2;
  valid.shard_numel = 100;
  valid.config_yaml = "train: {steps: 8}\n";
  valid.blocks = {{"embedding", 120, 60, 0}, {"head", 80, 40, 60}};
  valid.loader = {1, 64};
  valid.loss_scaler = {65536.0, 2, 8, -1, 0};
  for (int rank = 0; rank < 2; ++rank)
    for (const char* kind : {"master", "exp_avg", "exp_avg_sq"})
      valid.files.push_back({fmt::format("rank_{:05}.{}.f32", rank, kind), rank, kind, 400, 0x1234u});
  const nlohmann::json good = nlohmann::json::parse(zt::checkpoint::manifest_to_json(valid).dump());
  std::vector<std::string> pointers;
  collect_pointers(good, "", pointers);
  // As CheckpointReader reads manifest.json: a JSON syntax error is its own UserError, then the fields.
  auto check = [&](const std::string& name, const std::string& text) {
    nlohmann::json json;
    try {
      json = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      run_case(tally, name, [&] { throw zt::UserError(e.what()); });
      return;
    }
    run_case(tally, name, [&] { zt::checkpoint::manifest_from_json(json, "manifest.json"); });
  };
  check("the valid manifest", good.dump());
  const std::vector<nlohmann::json> wrong_values = {nullptr, "text", -1, -1.5, 1e300, 18446744073709551615ull,
                                                    INT64_MIN, nlohmann::json::array(), nlohmann::json::object(),
                                                    true, 0};
  for (const std::string& pointer : pointers) {
    nlohmann::json removed = good;
    const nlohmann::json::json_pointer where(pointer);
    removed[where.parent_pointer()].erase(removed[where.parent_pointer()].is_object()
                                              ? removed[where.parent_pointer()].find(where.back())
                                              : removed[where.parent_pointer()].begin() + std::stoi(where.back()));
    check("manifest without " + pointer, removed.dump());
    for (const nlohmann::json& value : wrong_values) {
      nlohmann::json changed = good;
      changed[where] = value;
      check(fmt::format("manifest with {} = {}", pointer, value.dump()), changed.dump());
    }
  }
  // Integers a resume would overflow on (step + 1, chunk x ranks, offset + size) or that name the
  // loader's "nothing prepared" epoch: every integer of the manifest set to INT64_MAX is refused.
  for (const std::string& pointer : pointers) {
    const nlohmann::json::json_pointer where(pointer);
    if (!good[where].is_number_integer()) continue;
    nlohmann::json changed = good;
    changed[where] = INT64_MAX;
    const std::string name = fmt::format("manifest with {} = INT64_MAX", pointer);
    const int loaded_before = tally.loaded;
    check(name, changed.dump());
    if (tally.loaded != loaded_before) tally.failures.push_back(name + ": accepted, but no run can reach it");
  }
  const std::string text = good.dump(2);
  for (std::size_t cut = 0; cut < text.size(); cut += 5) check(fmt::format("manifest cut at {}", cut), text.substr(0, cut));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::string edited = text;
    edited[rng() % edited.size()] = static_cast<char>(rng() % 256);
    check(fmt::format("manifest with byte edit #{}", i), edited);
  }
  check("manifest as an array", "[1, 2, 3]");
  check("empty manifest", "");
  check("manifest null", "null");
}

}  // namespace

int main() {
  const fs::path dir = fs::temp_directory_path() / fmt::format("zt-loader-fuzz-{}", ::getpid());
  fs::create_directories(dir);
  Tally configs, shards, manifests;
  fuzz_configs(configs);
  fuzz_shards(shards, dir);
  fuzz_manifests(manifests);
  fs::remove_all(dir);
  std::printf("configs: %d cases, %d loaded, %d rejected with a zt::UserError, %zu failures\n",
              configs.loaded + configs.rejected + static_cast<int>(configs.failures.size()), configs.loaded,
              configs.rejected, configs.failures.size());
  std::printf("shards:  %d cases, %d loaded, %d rejected with a zt::UserError, %zu failures\n",
              shards.loaded + shards.rejected + static_cast<int>(shards.failures.size()), shards.loaded,
              shards.rejected, shards.failures.size());
  std::printf("manifests: %d cases, %d loaded, %d rejected with a zt::UserError, %zu failures\n",
              manifests.loaded + manifests.rejected + static_cast<int>(manifests.failures.size()), manifests.loaded,
              manifests.rejected, manifests.failures.size());
  for (const auto* tally : {&configs, &shards, &manifests})
    for (const std::string& failure : tally->failures) std::printf("FAIL %s\n", failure.c_str());
  return configs.failures.empty() && shards.failures.empty() && manifests.failures.empty() ? 0 : 1;
}
