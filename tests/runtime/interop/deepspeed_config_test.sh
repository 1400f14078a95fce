#!/usr/bin/env bash
# DeepSpeed configs through the real binary (`zerotrain config` and `zerotrain train`):
#   - every mapped key lands on its zerotrain key, the translation is printed as YAML, no-op keys
#     get a one-line note, "auto" leaves the value to the rest of the config;
#   - train_batch_size is checked against micro batch x accumulation x ranks, and derives the
#     missing one; unsupported features are all reported in one run with their alternatives;
#   - a .json given to --config reads the same; a training run on 2 ranks uses the mapping;
#   - a YAML config with several mistakes reports all of them at once.
# Usage: deepspeed_config_test.sh ZEROTRAIN MPIEXEC [MPIEXEC FLAGS...]
set -euo pipefail
zerotrain=$1
shift
mpirun=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect LOG TEXT...: LOG holds every TEXT
  local log=$1
  shift
  for text in "$@"; do grep -qF -- "$text" "$log" || { cat "$log"; fail "expected '$text' in $log"; }; done
}

cat > "$work/ds.json" <<'JSON'
{
  "train_batch_size": 16,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4,
  "steps_per_print": 5,
  "gradient_clipping": 0.5,
  "bf16": {"enabled": true},
  "optimizer": {"type": "AdamW", "params": {"lr": 0.002, "betas": [0.9, 0.99], "eps": 1e-7, "weight_decay": 0.05}},
  "scheduler": {"type": "WarmupCosineLR",
                "params": {"total_num_steps": 300, "warmup_num_steps": 30, "warmup_min_ratio": 0, "cos_min_ratio": 0.1}},
  "zero_optimization": {"stage": 3, "overlap_comm": true, "reduce_scatter": true, "allgather_partitions": true,
                        "contiguous_gradients": true, "reduce_bucket_size": "auto",
                        "stage3_prefetch_bucket_size": 50000, "offload_optimizer": {"device": "none"}},
  "wall_clock_breakdown": false
}
JSON
"$zerotrain" config --deepspeed "$work/ds.json" > "$work/map.log" 2>&1 || { cat "$work/map.log"; fail "the mapping failed"; }
expect "$work/map.log" "# $work/ds.json as zerotrain YAML:" \
  "note: zero_optimization.reduce_scatter: accepted, does nothing in zerotrain" \
  "note: zero_optimization.allgather_partitions: accepted, does nothing in zerotrain" \
  "note: zero_optimization.contiguous_gradients: accepted, does nothing in zerotrain" \
  "note: zero_optimization.reduce_bucket_size: \"auto\"" \
  'note: zero_optimization.offload_optimizer: {"device":"none"}, nothing to do'
# The resolved config (after the translation) holds the mapped values.
resolved() { sed -n '/^model:/,$p' "$work/map.log"; }
resolved > "$work/resolved.yaml"
expect "$work/resolved.yaml" "train_micro_batch_size_per_gpu: 4" "gradient_accumulation_steps: 4" "steps: 300" \
  "gradient_clipping: 0.5" "lr: 0.002" "betas: [0.9, 0.99]" "weight_decay: 0.05" "type: WarmupCosineLR" \
  "warmup_steps: 30" "warmup_type: log" "min_lr: 0.0002" "dtype: bf16" "stage: 3" "stage3_prefetch_bucket_size: 50000" \
  "log_interval: 5"

# train_batch_size against the ranks mpirun started (read from its environment).
OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$zerotrain" config --deepspeed "$work/ds.json" > "$work/tbs.log" 2>&1 &&
  fail "a wrong train_batch_size was accepted"
expect "$work/tbs.log" "train_batch_size 16 != train_micro_batch_size_per_gpu 4 x gradient_accumulation_steps 4 x 2 ranks (from OMPI_COMM_WORLD_SIZE) = 32"
sed 's/"gradient_accumulation_steps": 4/"gradient_accumulation_steps": "auto"/' "$work/ds.json" > "$work/auto.json"
OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$zerotrain" config --config "$work/auto.json" > "$work/auto.log" 2>&1 ||
  { cat "$work/auto.log"; fail "auto accumulation was not derived"; }
expect "$work/auto.log" "gradient_accumulation_steps: 2"

# Every unsupported feature in one run, each with what to use instead.
cat > "$work/bad.json" <<'JSON'
{
  "train_micro_batch_size_per_gpu": 2,
  "optimizer": {"type": "Lamb", "params": {"lr": 0.001, "max_coeff": 0.3}},
  "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "cpu_offload": true,
                        "zero_quantized_weights": true},
  "activation_checkpointing": {"partition_activations": true, "checkpoint_in_cpu": true},
  "scheduler": {"type": "OneCycle", "params": {}},
  "fp16": {"enabled": true}, "bf16": {"enabled": true},
  "hybrid_engine": {"enabled": true},
  "trian_batch_size": 8
}
JSON
"$zerotrain" config --deepspeed "$work/bad.json" > "$work/bad.log" 2>&1 && fail "the unsupported config was accepted"
expect "$work/bad.log" "$work/bad.json: 9 problems in the DeepSpeed config:" \
  "optimizer.type 'Lamb', LAMB (layer-wise adaptive rates), is not available; zerotrain has AdamW" \
  "'zero_optimization.offload_optimizer' is not supported: optimizer state stays on the device" \
  "'zero_optimization.cpu_offload' is not supported: optimizer state stays on the device" \
  "'zero_optimization.zero_quantized_weights' is not supported: no quantized communication (ZeRO++)" \
  "'hybrid_engine' is not supported: no hybrid engine" \
  "unknown DeepSpeed key 'activation_checkpointing.checkpoint_in_cpu'" \
  "scheduler.type 'OneCycle' is not available" "both fp16.enabled and bf16.enabled are true" \
  "unknown DeepSpeed key 'trian_batch_size'"
grep -q "max_coeff" "$work/bad.log" && fail "a refused optimizer's own parameters were reported too"

# Real DeepSpeed keys whose value is what zerotrain does anyway are accepted with a note: stage-3
# keys below stage 3, memory_efficient_linear, bias_correction true, a switched-off hybrid engine,
# monitor or feature, the legacy cpu_offload false and 16-bit save keys.
cat > "$work/real.json" <<'JSON'
{
  "train_micro_batch_size_per_gpu": 2,
  "optimizer": {"type": "Adam", "params": {"lr": 0.001, "bias_correction": true, "amsgrad": false}},
  "zero_optimization": {"stage": 2, "stage3_max_live_parameters": 1e9, "stage3_max_reuse_distance": 1e9,
                        "memory_efficient_linear": false, "cpu_offload": false, "sub_group_size": 1e9,
                        "gather_16bit_weights_on_model_save": true, "zero_hpz_partition_size": 1,
                        "zero_quantized_gradients": false},
  "hybrid_engine": {"enabled": false, "max_out_tokens": 512},
  "tensorboard": {"enabled": false}, "tensor_parallel": {"autotp_size": 1},
  "steps_per_print": 10, "wall_clock_breakdown": false
}
JSON
"$zerotrain" config --deepspeed "$work/real.json" > "$work/real.log" 2>&1 ||
  { cat "$work/real.log"; fail "real DeepSpeed keys were refused"; }
expect "$work/real.log" "zero_optimization.stage3_max_live_parameters: accepted, a stage-3 setting at stage 2" \
  "zero_optimization.memory_efficient_linear: accepted, does nothing" \
  "optimizer.params.bias_correction: accepted, does nothing in zerotrain (zerotrain's AdamW corrects both" \
  'hybrid_engine: {"enabled":false,"max_out_tokens":512}, nothing to do' "zero_optimization.cpu_offload: false, nothing to do" \
  'tensor_parallel: {"autotp_size":1}, nothing to do'
grep -q "unknown" "$work/real.log" && { cat "$work/real.log"; fail "a real DeepSpeed key was called unknown"; }

# What a file leaves out takes DeepSpeed's defaults, not zerotrain's: a constant rate, no weight
# decay, DeepSpeed's clipping, fp32, stage 0; a --config YAML overrides only what it states, and
# what then differs from DeepSpeed is said.
printf '{"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "Adam", "params": {"lr": 0.0002}}}\n' >"$work/gan.json"
"$zerotrain" config --deepspeed "$work/gan.json" > "$work/gan.log" 2>&1 || { cat "$work/gan.log"; fail "gan.json"; }
expect "$work/gan.log" "# DeepSpeed's defaults for what it leaves out" "type: constant" "weight_decay: 0.0" \
  "gradient_clipping: 1.0" "betas: [0.9, 0.999]" "dtype: fp32" "communication_data_type: compute"
printf 'optimizer:\n  weight_decay: 0.1\nmodel:\n  n_layer: 2\n' >"$work/model.yaml"
"$zerotrain" config --deepspeed "$work/gan.json" --config "$work/model.yaml" > "$work/layers.log" 2>&1 ||
  { cat "$work/layers.log"; fail "gan.json over model.yaml"; }
expect "$work/layers.log" "n_layer: 2" "type: constant" \
  "# note: optimizer.weight_decay is 0.1 (from --config or --set); DeepSpeed runs this file with 0.0"
grep -q "note: scheduler.type" "$work/layers.log" && fail "a key the YAML does not state was reported as different"

# The Hugging Face Trainer's "auto": the rest of the config decides, and precision's is said.
printf '{"train_micro_batch_size_per_gpu": "auto", "fp16": {"enabled": "auto"}, %s}\n' \
  '"optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}}, "gradient_clipping": "auto"' \
  >"$work/auto_hf.json"
"$zerotrain" config --deepspeed "$work/auto_hf.json" --set optimizer.lr=0.0004 > "$work/auto_hf.log" 2>&1 ||
  { cat "$work/auto_hf.log"; fail "auto_hf.json"; }
expect "$work/auto_hf.log" "fp16.enabled: \"auto\" (the Hugging Face Trainer's --fp16): precision.dtype comes from" \
  "lr: 0.0004" "weight_decay: 0.1" "gradient_clipping: 1.0"

# A real run on 2 ranks: batch 8 = 2 x 2 x 2 ranks, WarmupDecayLR over 4 steps (the MLP needs no data).
cat > "$work/run.json" <<'JSON'
{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2, "steps_per_print": 1, "gradient_clipping": 1.0,
 "optimizer": {"type": "Adam", "params": {"lr": 0.01, "weight_decay": 0.0}},
 "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": 4, "warmup_num_steps": 1}},
 "zero_optimization": {"stage": 2},
 "activation_checkpointing": {"partition_activations": true, "contiguous_memory_optimization": false}}
JSON
"${mpirun[@]}" -np 2 "$zerotrain" train --deepspeed "$work/run.json" --set model.type=mlp --set train.device=cpu \
  --set train.eval_interval=0 --set logging.run_dir="$work/run" > "$work/run.log" 2>&1 ||
  { cat "$work/run.log"; fail "the DeepSpeed-configured run failed"; }
expect "$work/run.log" "gradient_accumulation_steps: 2" "step 4/4" "ZeRO stage 2" "activation_checkpointing: 1" \
  "activation_checkpointing: each block's forward runs again before its backward" \
  "activation_checkpointing.partition_activations: no model parallelism"
[ "$(grep -c "as zerotrain YAML" "$work/run.log")" -eq 1 ] || fail "the translation was not printed exactly once"

# The usual template, every activation_checkpointing option off, turns nothing on.
printf '{"train_micro_batch_size_per_gpu": 2, "activation_checkpointing": {"partition_activations": false, %s}}\n' \
  '"contiguous_memory_optimization": false, "cpu_checkpointing": false' >"$work/ac_off.json"
"$zerotrain" config --deepspeed "$work/ac_off.json" > "$work/ac_off.log" 2>&1 ||
  { cat "$work/ac_off.log"; fail "the all-off activation_checkpointing section was refused"; }
expect "$work/ac_off.log" "activation_checkpointing: every option is off, so it stays off" "activation_checkpointing: 0"

# A section that is not an object is named as such; the legacy "zero_optimization": true is stage 1.
printf '{"train_micro_batch_size_per_gpu": 2, "zero_optimization": "abc", "fp16": 1}\n' >"$work/not_object.json"
"$zerotrain" config --deepspeed "$work/not_object.json" > "$work/not_object.log" 2>&1 && fail "a section of the wrong type was accepted"
expect "$work/not_object.log" "'zero_optimization' must be a JSON object of its keys, found \"abc\"" \
  "'fp16' must be a JSON object of its keys, found 1"
printf '{"train_micro_batch_size_per_gpu": 2, "zero_optimization": true}\n' >"$work/legacy.json"
"$zerotrain" config --deepspeed "$work/legacy.json" > "$work/legacy.log" 2>&1 ||
  { cat "$work/legacy.log"; fail "the legacy zero_optimization: true was refused"; }
expect "$work/legacy.log" "zero_optimization: true is DeepSpeed's legacy form of stage 1" "stage: 1"

# DeepSpeed's reading of less common forms: train_batch_size alone means no accumulation (whatever
# a YAML says), a scheduler section without a type is no scheduler, "auto" precision keeps the
# file's loss scaling, WarmupCosineLR's default ratios sit below a YAML, and the communication
# dtype is read in any case.
printf 'train:\n  gradient_accumulation_steps: 4\nscheduler:\n  min_lr: 0.00001\nprecision:\n  dtype: fp16\n' \
  >"$work/forms.yaml"
cat > "$work/forms.json" <<'JSON'
{"train_batch_size": 16, "fp16": {"enabled": "auto", "initial_scale_power": 12}, "communication_data_type": "BF16",
 "optimizer": {"type": "AdamW", "params": {"lr": 0.001}},
 "scheduler": {"type": "WarmupCosineLR", "params": {"total_num_steps": 20, "warmup_num_steps": 2}}}
JSON
OMPI_COMM_WORLD_SIZE=2 "$zerotrain" config --deepspeed "$work/forms.json" --config "$work/forms.yaml" \
  > "$work/forms.log" 2>&1 || { cat "$work/forms.log"; fail "forms.json"; }
resolved_of() { sed -n '/^# zerotrain config, fully resolved/,$p' "$1"; }
resolved_of "$work/forms.log" > "$work/forms.resolved"
expect "$work/forms.resolved" "train_micro_batch_size_per_gpu: 8" "gradient_accumulation_steps: 1" \
  "initial_scale_power: 12" "communication_data_type: bf16" "min_lr: 1e-05" "warmup_min_lr: 0.0"
expect "$work/forms.log" "# note: scheduler.min_lr is 1e-05 (from --config or --set); DeepSpeed runs this file with 0.0001 x optimizer.lr = 1e-07"
printf '{"train_micro_batch_size_per_gpu": 2, "scheduler": {"params": {"warmup_num_steps": 5}}}' >"$work/typeless.json"
"$zerotrain" config --deepspeed "$work/typeless.json" > "$work/typeless.log" 2>&1 || { cat "$work/typeless.log"; fail "typeless"; }
resolved_of "$work/typeless.log" | grep -qF "type: constant" || { cat "$work/typeless.log"; fail "a typeless scheduler is not constant"; }

# YAML: every mistake of a file in one report.
cat > "$work/bad.yaml" <<'YAML'
model:
  n_layers: 4
train:
  steps: -3
  seed: 1
optimizer:
  lr: fast
zero_optimisation:
  stage: 2
YAML
"$zerotrain" config --config "$work/bad.yaml" > "$work/yaml.log" 2>&1 && fail "the bad YAML was accepted"
expect "$work/yaml.log" "$work/bad.yaml: 4 problems in the config:" "$work/bad.yaml:2:3: unknown key 'model.n_layers'" \
  "$work/bad.yaml:4:" "$work/bad.yaml:7:" "$work/bad.yaml:8:1: unknown key 'zero_optimisation'"

# Hostile DeepSpeed JSON: one clear error each, never a crash (each of these once ended in SIGFPE,
# SIGSEGV or an internal error) and never a silent false. 4 ranks declared through the launcher's
# variables, so that no MPI is needed.
hostile() {  # hostile NAME JSON TEXT...: `zerotrain config --deepspeed` exits 1 naming every TEXT
  local name=$1 text=$2
  shift 2
  printf '%s' "$text" > "$work/$name.json"
  local status=0
  OMPI_COMM_WORLD_SIZE=4 "$zerotrain" config --deepspeed "$work/$name.json" > "$work/$name.log" 2>&1 || status=$?
  [ "$status" = 1 ] || { cat "$work/$name.log"; fail "$name: exit status $status, expected 1"; }
  expect "$work/$name.log" "$@"
}
hostile accumulation '{"train_batch_size": 16, "gradient_accumulation_steps": 4611686018427387904}' \
  "'gradient_accumulation_steps' must be an integer in 1..1048576, found 4611686018427387904"
hostile deep "$(python3 -c 'print("{\"a\": " * 200000 + "1" + "}" * 200000)')" "nested more than 64 levels deep"
hostile type '{"optimizer": {"type": 7}}' "problem"
hostile enabled_word '{"fp16": {"enabled": "maybe"}}' "'fp16.enabled' must be true or false, found \"maybe\""
# DeepSpeed (pydantic) reads "true" and 1 as true: so does zerotrain.
for value in '"true"' 1 '"On"'; do
  printf '{"fp16": {"enabled": %s}}' "$value" > "$work/enabled.json"
  OMPI_COMM_WORLD_SIZE=4 "$zerotrain" config --deepspeed "$work/enabled.json" > "$work/enabled.log" 2>&1 ||
    { cat "$work/enabled.log"; fail "fp16.enabled $value was refused"; }
  expect "$work/enabled.log" "dtype: fp16"
done
hostile wrong_params '{"scheduler": {"type": "WarmupCosineLR", "params": {"total_num_steps": 9, "warmup_max_lr": 0.1}}}' \
  "unknown key 'scheduler.params.warmup_max_lr' for WarmupCosineLR"
hostile hysteresis '{"fp16": {"enabled": true, "consecutive_hysteresis": true}}' \
  "fp16.consecutive_hysteresis true is not available"
hostile fused '{"optimizer": {"type": "FusedAdam"}}' "optimizer.type 'FusedAdam' is not available"
echo PASS
