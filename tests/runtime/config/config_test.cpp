// Tests of the YAML experiment config: values, presets, every kind of mistake and its message,
// --set overrides, the resolved-config round trip and the committed reference docs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/config/config.h"
#include "runtime/config/config_schema.h"
#include "runtime/config/nearest_name.h"
#include "core/error.h"

#include <unistd.h>

namespace zt {
namespace {

const std::filesystem::path kSourceDir = ZT_SOURCE_DIR;

Config parse(std::string_view yaml, const std::vector<std::string>& overrides = {}) {
  return parse_config(yaml, "test.yaml", overrides);
}

// The message of the zt::UserError that `load` throws; fails the test when it throws none.
template <typename Load>
std::string error_from(Load load) {
  try {
    load();
  } catch (const UserError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a zt::UserError";
  return "";
}

std::string parse_error(std::string_view yaml, const std::vector<std::string>& overrides = {}) {
  return error_from([&] { parse(yaml, overrides); });
}

void expect_contains(const std::string& message, std::initializer_list<std::string_view> parts) {
  for (std::string_view part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nlacks: " << part;
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path write_temp_file(const std::string& name, std::string_view contents) {
  std::filesystem::path file = std::filesystem::path(testing::TempDir()) / name;
  std::ofstream(file, std::ios::binary) << contents;
  return file;
}

// ---- Values ----

TEST(ConfigDefaults, AreTheSchemaDefaultsWithTheTinyPreset) {
  Config config = default_config();
  EXPECT_EQ(config.model.type, ModelType::gpt2);
  EXPECT_EQ(config.model.preset, ModelPreset::tiny);
  EXPECT_EQ(config.model.n_layer, 2);
  EXPECT_EQ(config.model.n_head, 4);
  EXPECT_EQ(config.model.n_embd, 64);
  EXPECT_EQ(config.model.vocab_size, 256);
  EXPECT_EQ(config.model.block_size, 64);
  EXPECT_EQ(config.data.seq_len, 0);
  EXPECT_EQ(effective_seq_len(config), 64);
  EXPECT_EQ(config.train.device, "auto");
  EXPECT_EQ(config.train.train_micro_batch_size_per_gpu, 4);
  EXPECT_EQ(config.train.gradient_accumulation_steps, 1);
  EXPECT_EQ(config.train.steps, 100);
  EXPECT_EQ(config.train.seed, 1234);
  EXPECT_EQ(config.train.eval_interval, 0);
  EXPECT_EQ(config.train.eval_steps, 10);
  EXPECT_DOUBLE_EQ(config.train.gradient_clipping, 1.0);
  EXPECT_EQ(config.optimizer.type, OptimizerType::adamw);
  EXPECT_DOUBLE_EQ(config.optimizer.lr, 3e-4);
  EXPECT_EQ(config.optimizer.betas, (std::array<double, 2>{0.9, 0.95}));
  EXPECT_DOUBLE_EQ(config.optimizer.eps, 1e-8);
  EXPECT_DOUBLE_EQ(config.optimizer.weight_decay, 0.1);
  EXPECT_TRUE(config.optimizer.no_decay_bias_and_norm);
  EXPECT_FALSE(config.optimizer.no_decay_embeddings);
  EXPECT_EQ(config.scheduler.type, SchedulerType::warmup_cosine);
  EXPECT_EQ(config.precision.dtype, DType::f32);
  EXPECT_EQ(config.precision.initial_scale_power, 16);
  EXPECT_EQ(config.precision.loss_scale_window, 1000);
  EXPECT_EQ(config.precision.hysteresis, 2);
  EXPECT_EQ(config.zero_optimization.stage, 0);
  EXPECT_TRUE(config.zero_optimization.overlap_comm);
  EXPECT_EQ(config.zero_optimization.reduce_bucket_size, 6'553'600);
  EXPECT_EQ(config.zero_optimization.stage3_prefetch_bucket_size, 15'000'000);
  EXPECT_EQ(config.zero_optimization.stage3_param_persistence_threshold, 100'000);
  EXPECT_EQ(config.zero_optimization.communication_data_type, CommDataType::fp32);
  EXPECT_EQ(config.checkpoint.dir, "");
  EXPECT_EQ(config.checkpoint.keep_last, 3);
  EXPECT_EQ(config.checkpoint.resume, "none");
  EXPECT_EQ(config.logging.level, log::Level::info);
  EXPECT_EQ(config.logging.run_dir, "runs/default");
  EXPECT_FALSE(config.logging.all_ranks);
  EXPECT_EQ(config.comm.backend, CommBackend::auto_select);
  EXPECT_DOUBLE_EQ(config.comm.timeout_s, 300.0);
  EXPECT_FALSE(config.comm.debug_check);
}

TEST(ConfigSchema, EveryDefaultPassesItsOwnChecksAndEveryKeyIsDocumented) {
  for (const ConfigKey& key : config_keys()) {
    EXPECT_EQ(value_problem(key, key.default_value), std::nullopt) << key.path;
    EXPECT_FALSE(key.doc.empty()) << key.path;
    EXPECT_NE(find_config_section(key.section()), nullptr) << key.path;
    EXPECT_EQ(find_config_key(key.path), &key) << key.path << " is in the table twice";
    EXPECT_EQ(key.choices.size(), key.choice_values.size()) << key.path;
  }
  // Every preset name is a choice of model.preset and every choice but none has a shape.
  const ConfigKey& preset_key = *find_config_key("model.preset");
  std::vector<std::string> shaped = {"none"};
  for (const ModelPresetShape& preset : model_presets()) {
    shaped.push_back(preset.name);
    for (const auto& [path, value] : preset.values) {
      ASSERT_NE(find_config_key(path), nullptr) << path;
      EXPECT_EQ(value_problem(*find_config_key(path), value), std::nullopt) << preset.name << " " << path;
    }
  }
  EXPECT_EQ(shaped, preset_key.choices);
}

TEST(ConfigLoad, EmptyFileCommentsOnlyAndEmptySectionsMeanDefaults) {
  EXPECT_EQ(parse(""), default_config());
  EXPECT_EQ(parse("# nothing but a comment\n\n"), default_config());
  EXPECT_EQ(parse("model:\noptimizer:  # all keys commented out\n#  lr: 0.1\n"), default_config());
}

TEST(ConfigLoad, ReadsEveryValueType) {
  Config config = parse(R"(
model:
  type: mlp
  mlp_hidden: 512
data:
  train_files: "shards/train_*.bin"
  val_files:
train:
  device: cuda:1
  gradient_clipping: 0
optimizer:
  lr: 1.0e-3
  betas: [0.8, 0.99]
  no_decay_embeddings: True
precision:
  dtype: bf16
zero_optimization:
  stage: 3
  overlap_comm: false
  reduce_bucket_size: 5e8
  stage3_prefetch_bucket_size: +2.5e7
  communication_data_type: compute
checkpoint:
  resume: runs/x/checkpoints/step_000100
logging:
  level: debug
comm:
  backend: nccl
  timeout_s: 12.5
)");
  EXPECT_EQ(config.model.type, ModelType::mlp);
  EXPECT_EQ(config.model.mlp_hidden, 512);
  EXPECT_EQ(config.data.train_files, "shards/train_*.bin");
  EXPECT_EQ(config.data.val_files, "");
  EXPECT_EQ(config.train.device, "cuda:1");
  EXPECT_DOUBLE_EQ(config.train.gradient_clipping, 0.0);
  EXPECT_DOUBLE_EQ(config.optimizer.lr, 1e-3);
  EXPECT_EQ(config.optimizer.betas, (std::array<double, 2>{0.8, 0.99}));
  EXPECT_TRUE(config.optimizer.no_decay_embeddings);
  EXPECT_EQ(config.precision.dtype, DType::bf16);
  EXPECT_EQ(config.zero_optimization.stage, 3);
  EXPECT_FALSE(config.zero_optimization.overlap_comm);
  EXPECT_EQ(config.zero_optimization.reduce_bucket_size, 500'000'000);
  EXPECT_EQ(config.zero_optimization.stage3_prefetch_bucket_size, 25'000'000);
  EXPECT_EQ(config.zero_optimization.communication_data_type, CommDataType::compute);
  EXPECT_EQ(config.checkpoint.resume, "runs/x/checkpoints/step_000100");
  EXPECT_EQ(config.logging.level, log::Level::debug);
  EXPECT_EQ(config.comm.backend, CommBackend::nccl);
  EXPECT_DOUBLE_EQ(config.comm.timeout_s, 12.5);
}

TEST(ConfigLoad, IntegersAre64Bit) {
  Config config = parse("train:\n  seed: 9000000000000000000\n");
  EXPECT_EQ(config.train.seed, 9'000'000'000'000'000'000);
}

TEST(ConfigLoad, DefaultYamlIsTheTinyCpuStage2Run) {
  Config config = load_config(kSourceDir / "configs/default.yaml");
  EXPECT_EQ(config.model.type, ModelType::gpt2);
  EXPECT_EQ(config.model.n_layer, 2);
  EXPECT_EQ(config.model.n_head, 4);
  EXPECT_EQ(config.model.n_embd, 64);
  EXPECT_EQ(config.model.vocab_size, 256);
  EXPECT_EQ(config.model.block_size, 64);
  EXPECT_EQ(config.data.train_files, "data/fortunes/train_*.bin");
  EXPECT_EQ(config.data.val_files, "data/fortunes/val_*.bin");
  EXPECT_EQ(config.train.device, "cpu");
  EXPECT_EQ(config.train.train_micro_batch_size_per_gpu, 4);
  EXPECT_EQ(config.train.steps, 200);
  EXPECT_EQ(config.train.eval_interval, 50);
  EXPECT_EQ(config.zero_optimization.stage, 2);
  EXPECT_TRUE(config.zero_optimization.overlap_comm);
}

TEST(ConfigLoad, EveryCommittedConfigLoads) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSourceDir / "configs")) {
    if (entry.path().extension() != ".yaml") continue;
    EXPECT_NO_THROW(load_config(entry.path())) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 1);
}

// ---- Presets ----

TEST(ConfigPreset, FillsTheShape) {
  Config config = parse("model:\n  preset: gpt2-124m\n");
  EXPECT_EQ(config.model.n_layer, 12);
  EXPECT_EQ(config.model.n_head, 12);
  EXPECT_EQ(config.model.n_embd, 768);
  EXPECT_EQ(config.model.vocab_size, 50257);
  EXPECT_EQ(config.model.block_size, 1024);
  Config medium = parse("model:\n  preset: gpt2-350m\n");
  EXPECT_EQ(medium.model.n_layer, 24);
  EXPECT_EQ(medium.model.n_head, 16);
  EXPECT_EQ(medium.model.n_embd, 1024);
}

TEST(ConfigPreset, ExplicitKeysWinOverThePresetWhereverTheyAreGiven) {
  Config config = parse("model:\n  n_layer: 6\n  preset: gpt2-124m\n");
  EXPECT_EQ(config.model.n_layer, 6);
  EXPECT_EQ(config.model.n_embd, 768);
  Config by_set = parse("model:\n  preset: gpt2-124m\n", {"model.block_size=256"});
  EXPECT_EQ(by_set.model.block_size, 256);
  EXPECT_EQ(by_set.model.n_layer, 12);
  Config preset_by_set = parse("model:\n  n_head: 8\n", {"model.preset=gpt2-124m"});
  EXPECT_EQ(preset_by_set.model.n_head, 8);
  EXPECT_EQ(preset_by_set.model.n_layer, 12);
}

TEST(ConfigPreset, LlamaPresetsSetTheTypeAndTheWholeShape) {
  Config smollm = parse("model:\n  preset: smollm-135m\n");
  EXPECT_EQ(smollm.model.type, ModelType::llama);
  EXPECT_EQ(smollm.model.n_layer, 30);
  EXPECT_EQ(smollm.model.n_head, 9);
  EXPECT_EQ(smollm.model.n_kv_head, 3);
  EXPECT_EQ(smollm.model.n_embd, 576);
  EXPECT_EQ(smollm.model.intermediate_size, 1536);
  EXPECT_EQ(smollm.model.vocab_size, 49152);
  EXPECT_EQ(smollm.model.rope_scaling_factor, 0.0);
  EXPECT_TRUE(smollm.model.tie_embeddings);
  Config llama = parse("model:\n  preset: llama-3.2-1b\n", {"model.qk_norm=true"});
  EXPECT_EQ(llama.model.vocab_size, 128256);
  EXPECT_EQ(llama.model.rope_theta, 500000.0);
  EXPECT_EQ(llama.model.rope_scaling_factor, 32.0);
  EXPECT_EQ(llama.model.rope_original_max_position, 8192);
  EXPECT_TRUE(llama.model.qk_norm);
  // The resolved config reads back to itself (checkpoints store it).
  EXPECT_EQ(parse_config(config_to_yaml(llama), "resolved.yaml"), llama);
}

// The rows of a micro batch are bounded by what the family's kernels index: GPT-2's use `int`.
TEST(ConfigPreset, AMicroBatchBeyondTheFamilysRowIndexIsRefused) {
  const std::string shape = "model:\n  block_size: 2048\n  preset: ";
  EXPECT_EQ(parse_error("train:\n  train_micro_batch_size_per_gpu: 1048576\n" + shape + "gpt2-124m\n"),
            "test.yaml:2:3: train.train_micro_batch_size_per_gpu = 1048576 x sequence length 2048 = 2147483648 rows "
            "per micro-batch; at most 2147483647 are supported");
  EXPECT_EQ(parse("train:\n  train_micro_batch_size_per_gpu: 1048575\n" + shape + "gpt2-124m\n")
                .train.train_micro_batch_size_per_gpu,
            1048575);
  EXPECT_EQ(parse("train:\n  train_micro_batch_size_per_gpu: 1048576\n" + shape + "llama-tiny\n")
                .train.train_micro_batch_size_per_gpu,
            1048576);
}

TEST(ConfigPreset, LlamaShapeMistakesNameTheKey) {
  EXPECT_EQ(parse_error("model:\n  type: gpt2\n  preset: smollm-135m\n"),
            "test.yaml:2:3: model.preset = smollm-135m is a llama shape but model.type = gpt2 (leave type out or set "
            "llama)");
  EXPECT_EQ(parse_error("model:\n  preset: llama-tiny\n  n_kv_head: 3\n"),
            "test.yaml:3:3: model.n_kv_head = 3 does not divide model.n_head = 4 (each key/value head serves an "
            "equal group of query heads)");
  EXPECT_NE(parse_error("model:\n  preset: llama-tiny\n  rope_scaling_factor: 0.5\n").find("rope_scaling_factor"),
            std::string::npos);
}

TEST(ConfigPreset, NoneKeepsTheTableDefaults) {
  Config config = parse("model:\n  preset: none\n  n_embd: 96\n  n_head: 3\n");
  EXPECT_EQ(config.model.preset, ModelPreset::none);
  EXPECT_EQ(config.model.n_layer, 2);
  EXPECT_EQ(config.model.n_embd, 96);
  EXPECT_EQ(choice_name(config.model.preset), "none");
  EXPECT_EQ(choice_name(ModelPreset::gpt2_124m), "gpt2-124m");
  EXPECT_EQ(choice_name(CommBackend::auto_select), "auto");
}

// ---- Unknown keys ----

TEST(ConfigUnknownKey, InASectionNamesFileLineColumnAndTheNearestKey) {
  EXPECT_EQ(parse_error("zero_optimization:\n  stage: 2\n  overlap_com: true\n"),
            "test.yaml:3:3: unknown key 'zero_optimization.overlap_com'; did you mean "
            "'zero_optimization.overlap_comm'?");
}

TEST(ConfigUnknownKey, MisspelledSection) {
  EXPECT_EQ(parse_error("\nzero_optimisation:\n  stage: 1\n"),
            "test.yaml:2:1: unknown key 'zero_optimisation'; did you mean 'zero_optimization'?");
}

TEST(ConfigUnknownKey, KeyUnderTheWrongSectionSuggestsItsSection) {
  EXPECT_EQ(parse_error("train:\n  lr: 0.1\n"), "test.yaml:2:3: unknown key 'train.lr'; did you mean 'optimizer.lr'?");
  EXPECT_EQ(parse_error("lr: 0.1\n"), "test.yaml:1:1: unknown key 'lr'; did you mean 'optimizer.lr'?");
}

TEST(ConfigUnknownKey, WithoutACloseMatchListsTheValidNames) {
  expect_contains(parse_error("model:\n  colour: red\n"),
                  {"test.yaml:2:3: unknown key 'model.colour'", "the keys of 'model' are type, preset, n_layer"});
  expect_contains(parse_error("experiment: 1\n"),
                  {"test.yaml:1:1: unknown key 'experiment'", "the sections are model, data, train"});
}

TEST(ConfigUnknownKey, InAFileOnDiskNamesThatFile) {
  const std::filesystem::path file = kSourceDir / "tests/runtime/config/data/config_typo.yaml";
  EXPECT_EQ(error_from([&] { load_config(file); }),
            file.string() + ":6:3: unknown key 'zero_optimization.reduce_bucket_siz'; did you mean "
                            "'zero_optimization.reduce_bucket_size'?");
}

TEST(ConfigNearestName, CatchesTyposButNeverGuessesWildly) {
  EXPECT_EQ(edit_distance("trian", "train"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  std::vector<std::string> names = {"train", "config", "plan"};
  EXPECT_EQ(nearest_name("trian", names), "train");
  EXPECT_EQ(nearest_name("confg", names), "config");
  EXPECT_EQ(nearest_name("x", names), std::nullopt);
  EXPECT_EQ(nearest_name("export", names), std::nullopt);
  std::vector<std::string> keys = {"overlap_comm", "stage"};
  EXPECT_EQ(nearest_name("overlap", keys), "overlap_comm");  // a prefix of a longer key
}

// ---- Wrong types ----

TEST(ConfigWrongType, StringForAnInteger) {
  EXPECT_EQ(parse_error("model:\n  n_layer: four\n"),
            "test.yaml:2:12: bad value for 'model.n_layer': expected an integer in 1..1024, found 'four'");
}

TEST(ConfigWrongType, QuotedNumberIsAString) {
  expect_contains(parse_error("train:\n  steps: \"100\"\n"),
                  {"test.yaml:2:10:", "'train.steps'", "expected an integer in 1..1000000000000", "found \"100\" (a quoted string)"});
}

TEST(ConfigWrongType, FloatForAnInteger) {
  EXPECT_EQ(parse_error("train:\n  steps: 2.5\n"),
            "test.yaml:2:10: bad value for 'train.steps': expected an integer in 1..1000000000000, found 2.5 (not a whole number)");
}

TEST(ConfigWrongType, IntegerTooLargeFor64Bits) {
  expect_contains(parse_error("zero_optimization:\n  reduce_bucket_size: 1e19\n"),
                  {"test.yaml:2:23:", "'zero_optimization.reduce_bucket_size'", "found 1e19 (too large for a 64-bit integer)"});
  expect_contains(parse_error("train:\n  seed: 99999999999999999999\n"), {"too large for a 64-bit integer"});
}

TEST(ConfigWrongType, MapWhereAScalarGoes) {
  EXPECT_EQ(parse_error("model:\n  n_layer:\n    value: 4\n"),
            "test.yaml:3:5: bad value for 'model.n_layer': expected an integer in 1..1024, found a map");
}

TEST(ConfigWrongType, ListWhereAStringGoes) {
  EXPECT_EQ(parse_error("data:\n  train_files: [a.bin, b.bin]\n"),
            "test.yaml:2:16: bad value for 'data.train_files': expected a non-empty glob, found a list of 2 items");
}

TEST(ConfigWrongType, NonBooleanForABoolean) {
  EXPECT_EQ(parse_error("zero_optimization:\n  overlap_comm: yes\n"),
            "test.yaml:2:17: bad value for 'zero_optimization.overlap_comm': expected true or false, found 'yes'");
  expect_contains(parse_error("comm:\n  debug_check: 1\n"), {"'comm.debug_check'", "expected true or false, found 1"});
  expect_contains(parse_error("comm:\n  debug_check: \"true\"\n"), {"found \"true\" (a quoted string)"});
}

TEST(ConfigWrongType, EmptyValueIsNotANumber) {
  EXPECT_EQ(parse_error("model:\n  n_layer:\n  n_head: 4\n"),
            "test.yaml:2:3: bad value for 'model.n_layer': expected an integer in 1..1024, found nothing (an empty value)");
}

TEST(ConfigWrongType, ListOfTheWrongLength) {
  EXPECT_EQ(parse_error("optimizer:\n  betas: [0.9]\n"),
            "test.yaml:2:10: bad value for 'optimizer.betas': expected a list of 2 numbers in [0, 1), found a list "
            "of 1 item");
  expect_contains(parse_error("optimizer:\n  betas: [0.9, 0.95, 0.99]\n"), {"found a list of 3 items"});
  expect_contains(parse_error("optimizer:\n  betas: 0.9\n"), {"expected a list of 2 numbers in [0, 1), found 0.9"});
}

TEST(ConfigWrongType, ListItemOfTheWrongTypeOrRange) {
  EXPECT_EQ(parse_error("optimizer:\n  betas: [0.9, 1.5]\n"),
            "test.yaml:2:16: bad value for 'optimizer.betas[1]': expected a number in [0, 1), found 1.5");
  expect_contains(parse_error("optimizer:\n  betas: [high, 0.9]\n"),
                  {"test.yaml:2:11:", "'optimizer.betas[0]'", "found 'high'"});
}

TEST(ConfigWrongType, SectionThatIsNotAMap) {
  EXPECT_EQ(parse_error("model: 4\n"), "test.yaml:1:8: section 'model' must be a map of its keys, found 4");
  expect_contains(parse_error("optimizer:\n  - lr\n"), {"test.yaml:2:3:", "section 'optimizer'", "found a list of 1 item"});
}

// ---- Values out of range or not among the choices ----

TEST(ConfigRange, IntegerOutOfRange) {
  EXPECT_EQ(parse_error("zero_optimization:\n  stage: 4\n"),
            "test.yaml:2:10: bad value for 'zero_optimization.stage': expected an integer in 0..3, found 4");
  expect_contains(parse_error("train:\n  train_micro_batch_size_per_gpu: 0\n"),
                  {"'train.train_micro_batch_size_per_gpu'", "expected an integer in 1..1048576, found 0"});
  expect_contains(parse_error("model:\n  vocab_size: 20000000\n"),
                  {"expected an integer in 1..16777216, found 20000000"});
}

// Integers that the code would have truncated or overflowed: every integer key has an upper bound
// that its consumer can honour, and a value beyond it is refused with the key, the value and the range.
TEST(ConfigRange, EveryIntegerKeyHasAFiniteRangeTheCodeCanHonour) {
  for (const ConfigKey& key : config_keys()) {
    if (key.type != ValueType::integer) continue;
    if (key.path == "model.init_seed" || key.path == "train.seed") continue;  // any non-negative int64 is a seed
    EXPECT_TRUE(std::isfinite(key.range.max)) << key.path << " has no upper bound";
    EXPECT_LE(key.range.max, 1099511627776.0) << key.path;  // 2^40: products with element sizes stay far below 2^63
  }
}

TEST(ConfigRange, IntegersBeyondWhatTheCodeHonoursAreRefused) {
  EXPECT_EQ(parse_error("train:\n  train_micro_batch_size_per_gpu: 4294967297\n"),
            "test.yaml:2:35: bad value for 'train.train_micro_batch_size_per_gpu': expected an integer in "
            "1..1048576, found 4294967297");
  expect_contains(parse_error("", {"train.gradient_accumulation_steps=4294967297"}),
                  {"'train.gradient_accumulation_steps'", "expected an integer in 1..1048576, found 4294967297"});
  expect_contains(parse_error("train:\n  steps: 9223372036854775807\n"),
                  {"'train.steps'", "expected an integer in 1..1000000000000, found 9223372036854775807"});
  expect_contains(parse_error("precision:\n  hysteresis: 2147483648\n"),
                  {"'precision.hysteresis'", "in 1..2147483647, found 2147483648"});
  // Each factor is in range, their product (rows of one micro-batch, an `int` in the kernels) is not.
  expect_contains(parse_error("model:\n  block_size: 1048576\ntrain:\n  train_micro_batch_size_per_gpu: 4096\n"),
                  {"train.train_micro_batch_size_per_gpu = 4096 x sequence length 1048576 = 4294967296 rows",
                   "at most 2147483647"});
  const Config largest = parse("train:\n  train_micro_batch_size_per_gpu: 1048576\n  steps: 1000000000000\n");
  EXPECT_EQ(largest.train.train_micro_batch_size_per_gpu, 1048576);
  EXPECT_EQ(largest.train.steps, 1'000'000'000'000);
}

// reduce_bucket_size takes a number of elements or the word auto (stored as 0, written back as auto).
TEST(ConfigRange, BucketSizeTakesAuto) {
  const Config config = parse("zero_optimization:\n  reduce_bucket_size: auto\n");
  EXPECT_EQ(config.zero_optimization.reduce_bucket_size, 0);
  EXPECT_NE(config_to_yaml(config).find("reduce_bucket_size: auto"), std::string::npos);
  EXPECT_EQ(parse("", {"zero_optimization.reduce_bucket_size=auto"}).zero_optimization.reduce_bucket_size, 0);
  EXPECT_EQ(parse_error("zero_optimization:\n  reduce_bucket_size: automatic\n"),
            "test.yaml:2:23: bad value for 'zero_optimization.reduce_bucket_size': expected an integer in "
            "1..1099511627776 or auto, found 'automatic'");
  // 0 is not a size: only the word means auto.
  expect_contains(parse_error("zero_optimization:\n  reduce_bucket_size: 0\n"), {"or auto, found 0"});
  // Keys without auto refuse it.
  expect_contains(parse_error("zero_optimization:\n  first_reduce_bucket_size: auto\n"),
                  {"'zero_optimization.first_reduce_bucket_size'", "found 'auto'"});
}

TEST(ConfigRange, NumberOutOfRange) {
  EXPECT_EQ(parse_error("optimizer:\n  lr: -0.1\n"),
            "test.yaml:2:7: bad value for 'optimizer.lr': expected a number in [0, 1], found -0.1");
  expect_contains(parse_error("comm:\n  timeout_s: 0\n"),
                  {"'comm.timeout_s'", "expected a number in [0.001, 1000000000], found 0"});
  expect_contains(parse_error("comm:\n  timeout_s: .inf\n"), {"expected a number in [0.001, 1000000000], found '.inf'"});
  expect_contains(parse_error("train:\n  gradient_clipping: nan\n"), {"expected a number >= 0, found 'nan'"});
}

TEST(ConfigRange, NotAmongTheChoicesSuggestsTheNearest) {
  EXPECT_EQ(parse_error("scheduler:\n  type: warmup_cosin\n"),
            "test.yaml:2:9: bad value for 'scheduler.type': expected one of constant, warmup_cosine, warmup_linear, "
            "WarmupLR, WarmupDecayLR, WarmupCosineLR, "
            "found 'warmup_cosin'; did you mean 'warmup_cosine'?");
  EXPECT_EQ(parse_error("precision:\n  dtype: float64\n"),
            "test.yaml:2:10: bad value for 'precision.dtype': expected one of fp32, bf16, fp16, found 'float64'");
}

TEST(ConfigRange, StringFormats) {
  EXPECT_EQ(parse_error("train:\n  device: gpu\n"),
            "test.yaml:2:11: bad value for 'train.device': expected auto, cpu, cuda, cuda:N, found 'gpu' (not a device)");
  expect_contains(parse_error("train:\n  device: cuda:x\n"), {"found 'cuda:x' (the N of cuda:N must be a GPU index"});
  expect_contains(parse_error("logging:\n  run_dir: \"\"\n"),
                  {"test.yaml:2:12:", "'logging.run_dir'", "expected a non-empty path, found '' (must not be empty)"});
}

// ---- Files that are not configs ----

TEST(ConfigFile, MissingFile) {
  EXPECT_EQ(error_from([] { load_config("/nonexistent/run.yaml"); }),
            "cannot read config file '/nonexistent/run.yaml': No such file or directory");
}

TEST(ConfigFile, DirectoryInsteadOfAFile) {
  std::string message = error_from([] { load_config(testing::TempDir()); });
  expect_contains(message, {"cannot read config file", "it is a directory"});
}

TEST(ConfigFile, UnreadableFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files without read permission";
  std::filesystem::path file = write_temp_file("config_unreadable.yaml", "model:\n  n_layer: 2\n");
  std::filesystem::permissions(file, std::filesystem::perms::none);
  expect_contains(error_from([&] { load_config(file); }),
                  {"cannot read config file '" + file.string() + "': Permission denied"});
  std::filesystem::permissions(file, std::filesystem::perms::owner_all);
}

TEST(ConfigFile, BinaryGarbage) {
  std::string garbage("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe", 18);
  std::filesystem::path file = write_temp_file("config_garbage.yaml", garbage);
  EXPECT_EQ(error_from([&] { load_config(file); }),
            file.string() + ":1: not a YAML text file (byte 0x89 at offset 0 is not UTF-8 text)");
  expect_contains(parse_error(std::string("model:\n  n_layer: 2\0\n", 20)),
                  {"test.yaml:2: not a YAML text file (byte 0x00 at offset 19"});
  expect_contains(parse_error("model:\n  type: gpt\xe9\n"), {"test.yaml:2:", "byte 0xe9", "not UTF-8"});
}

TEST(ConfigFile, YamlSyntaxErrorHasTheParsersPosition) {
  EXPECT_EQ(parse_error("model:\n  n_layer: [1, 2\n"), "test.yaml:3:1: YAML syntax error: end of sequence flow not found");
  expect_contains(parse_error("model:\n  n_layer: 2\n n_head: 4\n"), {"test.yaml:3:", "YAML syntax error"});
  expect_contains(parse_error("data:\n  train_files: *.bin\n"), {"test.yaml:2:", "YAML syntax error"});
}

// yaml-cpp 0.7 on its own never returns from these (it parses empty documents forever).
TEST(ConfigFile, StrayCommaIsASyntaxErrorNotAHang) {
  EXPECT_EQ(parse_error(","), "test.yaml:1:1: YAML syntax error: unexpected ','");
  EXPECT_EQ(parse_error("\n  , model\n"), "test.yaml:2:3: YAML syntax error: unexpected ','");
  EXPECT_EQ(parse_error("model:\n  n_layer: 2\n---\n,\n"),
            "test.yaml:3:1: a config is one YAML document, found more (separated by '---')");
}

TEST(ConfigFile, TopLevelThatIsNotAMap) {
  EXPECT_EQ(parse_error("- model\n- data\n"),
            "test.yaml:1:1: the top level must be a map of sections (model, data, train, optimizer, scheduler, "
            "precision, zero_optimization, checkpoint, logging, comm, emulation), found a list of 2 items");
  expect_contains(parse_error("just some words\n"), {"test.yaml:1:1: the top level must be a map", "found 'just some words'"});
}

TEST(ConfigFile, DuplicateKeys) {
  EXPECT_EQ(parse_error("model:\n  n_layer: 2\n  n_head: 4\n  n_layer: 3\n"),
            "test.yaml:4:3: duplicate key 'model.n_layer' (first given at line 2, column 3)");
  EXPECT_EQ(parse_error("model:\n  n_layer: 2\ntrain:\n  steps: 5\nmodel:\n  n_head: 4\n"),
            "test.yaml:5:1: duplicate key 'model' (first given at line 1, column 1)");
}

TEST(ConfigFile, MoreThanOneDocument) {
  EXPECT_EQ(parse_error("model:\n  n_layer: 2\n---\nmodel:\n  n_layer: 3\n"),
            "test.yaml:3:1: a config is one YAML document, found more (separated by '---')");
}

TEST(ConfigFile, KeyThatIsNotAName) {
  expect_contains(parse_error("? [a, b]\n: 1\n"), {"test.yaml:1:3: a key must be a plain name, found a list of 2 items"});
}

// Random mixes of YAML punctuation, key names and stray bytes: every outcome is a config or a
// zt::UserError, never a crash or another kind of exception.
TEST(ConfigFile, RandomInputOnlyEverGivesAConfigOrAUserError) {
  const std::vector<std::string> pieces = {"model", "optimizer", "zero_optimization", "n_layer", "betas", "stage",
                                           ":", ": ", "\n", "\n  ", "  ", "- ", "[", "]", "{", "}", ",", "\"", "'",
                                           "&a ", "*a", "!!str ", "? ", "---\n", "#", "|\n", "2", "5e8", "-1", "1.5",
                                           "true", "~", "\t", "\xff", std::string(1, '\0'), "\xc3\xa9", "%YAML 1.2\n"};
  std::mt19937 random(20240520);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text;
    const int length = static_cast<int>(random() % 24);
    for (int i = 0; i < length; ++i) text += pieces[random() % pieces.size()];
    try {
      parse(text);
    } catch (const UserError&) {
    } catch (const std::exception& error) {
      ADD_FAILURE() << "input " << testing::PrintToString(text) << " threw a non-user error: " << error.what();
    }
  }
}

// ---- Checks across keys ----

TEST(ConfigConsistency, EmbeddingWidthDivisibleByHeads) {
  EXPECT_EQ(parse_error("model:\n  n_embd: 100\n  n_head: 3\n"),
            "test.yaml:2:3: model.n_embd = 100 is not a multiple of model.n_head = 3 (every head gets n_embd / n_head "
            "channels)");
  EXPECT_NO_THROW(parse("model:\n  type: mlp\n  n_embd: 100\n  n_head: 3\n"));  // an MLP has no heads
}

TEST(ConfigConsistency, BlamesTheKeyThatWasGiven) {
  EXPECT_EQ(parse_error("", {"model.n_head=5"}),
            "--set model.n_head=5: model.n_embd = 64 is not a multiple of model.n_head = 5 (every head gets n_embd / "
            "n_head channels)");
}

TEST(ConfigConsistency, SeqLenAtMostBlockSize) {
  EXPECT_EQ(parse_error("data:\n  seq_len: 128\n"),
            "test.yaml:2:3: data.seq_len = 128 exceeds model.block_size = 64 (the model has no positions beyond "
            "block_size)");
  EXPECT_EQ(effective_seq_len(parse("data:\n  seq_len: 32\n")), 32);
}

TEST(ConfigConsistency, OtherRules) {
  expect_contains(parse_error("scheduler:\n  min_lr: 0.01\n"),
                  {"test.yaml:2:3:", "scheduler.min_lr = 0.01 is larger than optimizer.lr = 0.0003"});
  expect_contains(parse_error("scheduler:\n  warmup_type: log\n"),
                  {"test.yaml:2:3:", "shape DeepSpeed's schedulers (WarmupLR, WarmupDecayLR, WarmupCosineLR), not "
                                     "scheduler.type warmup_cosine"});
  expect_contains(parse_error("scheduler:\n  type: WarmupLR\n  warmup_min_lr: 0.01\n"),
                  {"test.yaml:3:3:", "scheduler.warmup_min_lr = 0.01 is larger than optimizer.lr = 0.0003"});
  EXPECT_EQ(parse("scheduler:\n  type: WarmupDecayLR\n  warmup_type: log\n").scheduler.warmup_type, LrScheduleOptions::Warmup::log);
  expect_contains(parse_error("train:\n  eval_interval: 10\ndata:\n  val_files: \"\"\n"),
                  {"test.yaml:2:3:", "train.eval_interval = 10 asks for evaluation but data.val_files is empty"});
  expect_contains(parse_error("comm:\n  backend: nccl\ntrain:\n  device: cpu\n"),
                  {"test.yaml:2:3:", "comm.backend = nccl needs GPU buffers but train.device = cpu"});
  expect_contains(parse_error("emulation:\n  tflops: 989\ntrain:\n  device: cuda\n"),
                  {"test.yaml:2:3:", "emulation.tflops = 989 emulates a device on the CPU, but train.device = cuda"});
  expect_contains(parse_error("emulation:\n  tflops: 989\n  mfu: 1.5\ntrain:\n  device: cpu\n"),
                  {"emulation.mfu = 1.5 is above 1"});
  const Config emulated = parse("emulation:\n  tflops: 9.89\n  mfu: 0.5\ntrain:\n  device: cpu\n");
  EXPECT_TRUE(emulated.emulation.enabled());
  EXPECT_EQ(emulated.emulation.memory_gbps, 3350.0);
  EXPECT_FALSE(parse("").emulation.enabled());
}

// ---- --set overrides ----

TEST(ConfigOverride, SetsEveryValueTypeAfterTheFile) {
  Config config = parse("train:\n  steps: 10\n",
                        {"train.steps=20", "optimizer.betas=[0.8, 0.9]", "zero_optimization.overlap_comm=false",
                         "data.val_files=", "scheduler.type=constant", "optimizer.lr=1e-3",
                         "checkpoint.dir=run dir/with spaces:and:colons", "zero_optimization.reduce_bucket_size=2e6"});
  EXPECT_EQ(config.train.steps, 20);
  EXPECT_EQ(config.optimizer.betas, (std::array<double, 2>{0.8, 0.9}));
  EXPECT_FALSE(config.zero_optimization.overlap_comm);
  EXPECT_EQ(config.data.val_files, "");
  EXPECT_EQ(config.scheduler.type, SchedulerType::constant);
  EXPECT_DOUBLE_EQ(config.optimizer.lr, 1e-3);
  EXPECT_EQ(config.checkpoint.dir, "run dir/with spaces:and:colons");
  EXPECT_EQ(config.zero_optimization.reduce_bucket_size, 2'000'000);
}

TEST(ConfigOverride, ValuesFollowYamlRules) {
  // A value is YAML, so ": " makes a map; quoting keeps it a string.
  expect_contains(parse_error("", {"checkpoint.dir=a: b"}), {"'checkpoint.dir': expected a string, found a map"});
  EXPECT_EQ(parse("", {"checkpoint.dir='a: b'"}).checkpoint.dir, "a: b");
}

TEST(ConfigOverride, TheLastOneWins) {
  EXPECT_EQ(parse("", {"train.steps=5", "train.steps=7"}).train.steps, 7);
}

TEST(ConfigOverride, UnknownKeySuggestsTheNearest) {
  EXPECT_EQ(parse_error("", {"model.n_layr=4"}), "--set model.n_layr=4: unknown key 'model.n_layr'; did you mean 'model.n_layer'?");
  EXPECT_EQ(parse_error("", {"optimiser.lr=0.1"}),
            "--set optimiser.lr=0.1: unknown key 'optimiser.lr'; did you mean 'optimizer.lr'?");
}

TEST(ConfigOverride, BadValuesSayWhatWasExpected) {
  EXPECT_EQ(parse_error("", {"model.n_layer=x"}),
            "--set model.n_layer=x: bad value for 'model.n_layer': expected an integer in 1..1024, found 'x'");
  EXPECT_EQ(parse_error("", {"zero_optimization.stage=5"}),
            "--set zero_optimization.stage=5: bad value for 'zero_optimization.stage': expected an integer in 0..3, "
            "found 5");
  expect_contains(parse_error("", {"optimizer.betas=[0.9]"}), {"--set optimizer.betas=[0.9]:", "found a list of 1 item"});
  expect_contains(parse_error("", {"model.n_layer="}), {"found nothing (an empty value)"});
}

TEST(ConfigOverride, MalformedArguments) {
  EXPECT_EQ(parse_error("", {"model.n_layer"}), "--set model.n_layer: expected KEY=VALUE, e.g. --set model.n_layer=4");
  EXPECT_EQ(parse_error("", {"=4"}), "--set =4: no key before '='");
  EXPECT_EQ(parse_error("", {"model=4"}), "--set model=4: 'model' is a section; set one of its keys, e.g. 'model.type'");
  expect_contains(parse_error("", {"data.train_files=*.bin"}),
                  {"--set data.train_files=*.bin: YAML syntax error: ", " in the value; quote it, e.g. data.train_files='\"...\"'"});
  EXPECT_EQ(parse_error("", {"model.n_layer=,"}),
            "--set model.n_layer=,: YAML syntax error: unexpected ',' in the value; quote it, e.g. model.n_layer='\"...\"'");
  EXPECT_EQ(parse("", {"data.train_files=\"*.bin\""}).data.train_files, "*.bin");
}

TEST(ConfigOverride, FileErrorsComeFirst) {
  expect_contains(parse_error("model:\n  n_layr: 2\n", {"model.n_layer=3"}), {"test.yaml:2:3: unknown key 'model.n_layr'"});
}

// ---- Writing ----

TEST(ConfigYaml, ListsEveryKeyInSchemaOrder) {
  std::string yaml = config_to_yaml(default_config());
  std::size_t position = 0;
  for (const ConfigKey& key : config_keys()) {
    std::size_t found = yaml.find("\n  " + std::string(key.name()) + ": ", position);
    ASSERT_NE(found, std::string::npos) << key.path << " missing or out of order in:\n" << yaml;
    position = found;
  }
}

TEST(ConfigYaml, ReloadingTheResolvedConfigGivesTheSameConfig) {
  std::vector<Config> configs = {
      default_config(),
      load_config(kSourceDir / "configs/default.yaml"),
      parse("model: {preset: gpt2-350m, n_layer: 3}\n",
            {"checkpoint.dir='quotes \" and \\ backslash, unicode \xc3\xa9, # hash, : colon'",
             "optimizer.lr=0.30000000000000004", "optimizer.eps=1e-12", "comm.timeout_s=1e9",
             "optimizer.betas=[0, 0.999999999]", "train.seed=9223372036854775807", "logging.level=warn",
             "precision.dtype=fp16", "data.val_files=", "train.device=cuda:3"}),
  };
  for (const Config& config : configs) {
    std::string yaml = config_to_yaml(config);
    EXPECT_EQ(parse(yaml), config) << yaml;
    EXPECT_EQ(config_to_yaml(parse(yaml)), yaml);
  }
  EXPECT_EQ(configs[2].checkpoint.dir, "quotes \" and \\ backslash, unicode \xc3\xa9, # hash, : colon");
}

TEST(ConfigReference, CommittedDocsMatchTheSchema) {
  const std::filesystem::path docs = kSourceDir / "docs/config.md";
  EXPECT_EQ(read_text(docs), config_reference_markdown())
      << docs.string() << " is out of date; regenerate it with: zerotrain config --reference > docs/config.md";
}

TEST(ConfigReference, DescribesEveryKeyAndPreset) {
  std::string reference = config_reference_markdown();
  for (const ConfigSection& section : config_sections()) expect_contains(reference, {"## `" + section.name + "`"});
  for (const ConfigKey& key : config_keys()) expect_contains(reference, {"| `" + std::string(key.name()) + "` |"});
  for (const ModelPresetShape& preset : model_presets()) expect_contains(reference, {"| `" + preset.name + "` |"});
  expect_contains(reference, {"| `stage` | integer | `0` | 0..3 |", "| `betas` | list of 2 numbers | `[0.9, 0.95]` |"});
}

}  // namespace
}  // namespace zt

namespace zt {
namespace {

std::filesystem::path hf_dir_with_config(const std::string& name, const std::string& config_json) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << config_json;
  return dir;
}

// A Llama-family config.json gives the whole shape, as the published presets have it.
TEST(ConfigInitFrom, ALlamaFamilyShapeIsReadFromConfigJson) {
  const std::filesystem::path smollm = hf_dir_with_config("hf_smollm", R"({"model_type": "llama",
      "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3, "hidden_size": 576,
      "intermediate_size": 1536, "vocab_size": 49152, "max_position_embeddings": 2048, "rope_theta": 10000.0,
      "rms_norm_eps": 1e-05, "tie_word_embeddings": true, "rope_scaling": null, "hidden_act": "silu"})");
  Config from_json = parse("model:\n  init_from: " + smollm.string() + "\n");
  Config preset = parse("model:\n  preset: smollm-135m\n  rms_norm_eps: 1.0e-5\n");
  from_json.model.init_from.clear();
  from_json.model.preset = preset.model.preset;
  EXPECT_EQ(from_json.model, preset.model);

  const std::filesystem::path llama = hf_dir_with_config("hf_llama32", R"({"model_type": "llama",
      "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 2048,
      "intermediate_size": 8192, "vocab_size": 128256, "max_position_embeddings": 131072, "rope_theta": 500000.0,
      "tie_word_embeddings": true, "head_dim": 64, "rope_scaling": {"factor": 32.0, "low_freq_factor": 1.0,
      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}})");
  const Config scaled = parse("model:\n  init_from: " + llama.string() + "\n");
  EXPECT_EQ(scaled.model.type, ModelType::llama);
  EXPECT_EQ(scaled.model.rope_scaling_factor, 32.0);
  EXPECT_EQ(scaled.model.rope_original_max_position, 8192);
  EXPECT_EQ(scaled.model.block_size, 131072);
  EXPECT_FALSE(scaled.model.qk_norm);

  // Left out: LlamaConfig's defaults (kv heads = heads, untied, no scaling: "default" says none).
  const std::filesystem::path small = hf_dir_with_config("hf_llama_defaults", R"({"model_type": "llama",
      "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64, "intermediate_size": 128,
      "vocab_size": 256, "max_position_embeddings": 64, "rope_scaling": {"rope_type": "default"}})");
  const Config defaults = parse("model:\n  init_from: " + small.string() + "\n");
  EXPECT_EQ(defaults.model.n_kv_head, 4);
  EXPECT_FALSE(defaults.model.tie_embeddings);
  EXPECT_EQ(defaults.model.rope_scaling_factor, 0.0);
  // An explicit key wins over config.json's.
  EXPECT_EQ(parse("model:\n  init_from: " + small.string() + "\n  block_size: 32\n").model.block_size, 32);

  const std::filesystem::path qwen3 = hf_dir_with_config("hf_qwen3", R"({"model_type": "qwen3",
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "hidden_size": 64, "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 64})");
  const Config qk = parse("model:\n  init_from: " + qwen3.string() + "\n");
  EXPECT_TRUE(qk.model.qk_norm);
  EXPECT_EQ(qk.model.n_kv_head, 2);
}

TEST(ConfigInitFrom, WhatZerotrainsLlamaLacksIsNamed) {
  const std::string base = R"("num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64,
      "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 64)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"model_type": "llama", "num_attention_heads": 4})",
       "'num_hidden_layers' is missing or not an integer (it gives model.n_layer)"},
      {R"({"model_type": "llama", "head_dim": 128, )" + base + "}",
       "'head_dim' is 128; zerotrain's heads are hidden_size / num_attention_heads = 16 wide"},
      {R"({"model_type": "qwen3", "num_key_value_heads": 2, )" + base + "}",
       "'head_dim' is 128 (Qwen3's default); zerotrain's heads are hidden_size / num_attention_heads = 16 wide"},
      {R"({"model_type": "llama", "rope_scaling": {"rope_type": "llama3", "factor": 8.0}, )" + base + "}",
       "'rope_scaling' is llama3 without 'low_freq_factor'"},
      {R"({"model_type": ["llama"], )" + base + "}", "model_type '[\"llama\"]' cannot be loaded by zerotrain"},
      {R"({"model_type": "llama", "rope_scaling": {"rope_type": "yarn", "factor": 4.0}, )" + base + "}",
       "zerotrain implements RoPE scaling of rope_type llama3 only"},
      {R"({"model_type": "llama", "rms_norm_eps": "tiny", )" + base + "}",
       "'rms_norm_eps' is \"tiny\"; it gives model.rms_norm_eps, a number"},
      {R"({"model_type": "qwen2", )" + base + "}",
       "model_type 'qwen2' (Qwen2, Qwen2.5) cannot be loaded: its attention adds biases to the query, key and value"},
      {R"({"model_type": "mistral", )" + base + "}", "model_type 'mistral' cannot be loaded by zerotrain (loadable: "
                                                     "gpt2, llama, qwen3)"},
  };
  int i = 0;
  for (const auto& [config_json, message] : cases) {
    SCOPED_TRACE(message);
    const std::filesystem::path dir = hf_dir_with_config("hf_lacks_" + std::to_string(i++), config_json);
    expect_contains(parse_error("model:\n  init_from: " + dir.string() + "\n"), {message});
  }
}

TEST(ConfigInitFrom, ShapesFromConfigJsonGetTheSchemasRanges) {
  // n_head 0 once divided by zero in the loader's checks; 2^64 - 1 wrapped to -1.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("n_head": 0)", "'n_head' is 0; model.n_head takes an integer in 1..1024"},
      {R"("n_head": 18446744073709551615)", "'n_head' is 18446744073709551615; model.n_head takes an integer in 1..1024"},
      {R"("n_head": -4)", "'n_head' is -4; model.n_head takes an integer in 1..1024"},
  };
  int i = 0;
  for (const auto& [n_head, message] : cases) {
    const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / ("hf_shape_" + std::to_string(i++));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "vocab_size": 256, )"
                                       << R"("n_positions": 64, )" << n_head << "}";
    SCOPED_TRACE(message);
    const std::string error = parse_error("model:\n  init_from: " + dir.string() + "\n");
    expect_contains(error, {(dir / "config.json").string() + ": " + message});
  }
}

// Values that pass each key's range but not a check across keys are blamed on the config.json
// they came from, not on the YAML that never named them.
TEST(ConfigInitFrom, AChecksAcrossKeysBlamesTheConfigJsonTheValuesCameFrom) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "hf_shape_heads";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "vocab_size": 256, )"
                                     << R"("n_positions": 64, "n_head": 3})";
  const std::string error = parse_error("model:\n  init_from: " + dir.string() + "\n");
  expect_contains(error, {(dir / "config.json").string() + " (model.init_from): model.n_embd = 64 is not a multiple of "
                          "model.n_head = 3"});
}

}  // namespace
}  // namespace zt
