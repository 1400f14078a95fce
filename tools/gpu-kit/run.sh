#!/usr/bin/env bash
# The GPU kit's entry point, on a GPU machine: every CUDA test, compute-sanitizer, GPT-2 124M
# speed and memory next to PyTorch, 2 ranks on one GPU with and without overlap, and two identical
# runs compared bitwise. Each part writes a Markdown table into OUT_DIR, row by row as it measures;
# a part that fails or runs out of time keeps its rows and does not stop the others. docs/gpu.md
# explains every table.
#
#   ./run.sh OUT_DIR [PART|GROUP...]   parts: tests stages repro sanitizer perf overlap
#                                      groups: first (tests stages repro), second (sanitizer perf
#                                      overlap); each group's limits add up to 8.5 minutes, so a
#                                      machine that takes commands of 10 minutes runs the kit in
#                                      two: run.sh OUT/first first; run.sh OUT/second second.
#                                      No argument: every part (17 minutes at most).
#
# OUT_DIR gets <part>.md for each part, summary.md (all of them, with the date, GPU and commit) and
# logs.tar.gz. Time limits per part (seconds) can be changed with ZT_KIT_TIMEOUT_<PART>. Exit
# status: the number of parts that failed.
set -uo pipefail
kit=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
all_parts=(tests stages repro sanitizer perf overlap)
declare -A group=([first]="tests stages repro" [second]="sanitizer perf overlap")
# Seconds per part. tests: about 20 binaries, 1 and 2 ranks, one of them making dozens of NCCL
# communicators; perf: three trainers, one of them a cold torch.compile; sanitizer: memcheck and
# racecheck slow a run by 10-100x.
declare -A default_timeout=([tests]=300 [stages]=120 [repro]=90 [sanitizer]=180 [perf]=240 [overlap]=90)
# The one GPU every part uses: 2 ranks share it (MPI with host staging), since `train.device: cuda`
# (a GPU per rank) refuses 2 ranks on a one-GPU machine. tests/runtime/train/kit_devices_test.cpp
# checks that every device setting here resolves for 1 and 2 ranks on one GPU.
kit_device=cuda:0

if [ "${1:-}" = --part ]; then part=$2; out=$3; mode=part; else mode=main; out=${1:?usage: run.sh OUT_DIR [PART...]}; shift; fi
[ "$mode" = part ] || bash "$kit/tools/gpu-kit/unpack.sh" || exit 1
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
logs=$out/logs
mkdir -p "$logs"
. "$kit/tools/gpu-kit/env.sh"
report() { python3 "$kit/tools/gpu-kit/report.py" "$@"; }
cd "$kit"

# train RUN_DIR STEPS [--set KEY=VALUE...]: sets TRAIN to zerotrain's arguments for a run of the
# default config on the kit's data, without evaluation or checkpoints, metrics in RUN_DIR.
train() {
  local run_dir=$1 steps=$2; shift 2
  TRAIN=(train --config "$kit/configs/default.yaml"
    --set "data.train_files=$kit/data/fortunes/train_*.bin" --set "data.val_files=$kit/data/fortunes/val_*.bin"
    --set train.steps="$steps" --set train.eval_interval=0 --set checkpoint.interval=0
    --set logging.log_interval=5 --set logging.run_dir="$run_dir" "$@")
}
mpi() { mpirun --bind-to none -np "$@"; }
kit_run=$kit/libexec/kit-run
cuda_filter=$(cat "$kit/tools/gpu-kit/cuda-test-filter")  # the cases the kit runs; build.sh packs their binaries

part_tests() {  # (1) every CUDA case of every test binary, multi-rank ones under the kit's mpirun
  local runs=$logs/tests.tsv bin name ranks counts n listed log status
  : > "$runs"
  for bin in "$kit"/tests/*; do
    name=${bin##*/}
    case "$name" in ranks.tsv | *.xz) continue ;; esac  # *.xz: the compressed copies unpack.sh keeps
    ranks=$(awk -F'\t' -v b="$name" '$1 == b {print $2}' "$kit/tests/ranks.tsv")
    log=$logs/test-$name-list.log
    if [ -n "$ranks" ]; then
      timeout -k 5 30 mpirun -np 1 "$bin" --gtest_list_tests --gtest_filter="$cuda_filter" --gtest_color=no > "$log" 2>&1
    else
      timeout -k 5 30 "$kit_run" "$bin" --gtest_list_tests --gtest_filter="$cuda_filter" --gtest_color=no > "$log" 2>&1
    fi
    status=$?
    # A binary that cannot even list its cases (a missing library, say) is a failed run.
    if [ $status -ne 0 ]; then printf '%s\t1\t%s\t%s\n' "$name --gtest_list_tests" "$status" "$log" >> "$runs"; continue; fi
    listed=$(grep -c '^  ' "$log")
    [ "$listed" -gt 0 ] || continue
    # Multi-rank binaries (ranks.tsv: CTest starts them under mpirun) run on 1 rank, where NCCL
    # has the one GPU to itself, and on 2 ranks, which share it through MPI staging; more ranks on
    # one GPU would test nothing more.
    counts=1
    [ -z "$ranks" ] || counts="1 2"
    for n in $counts; do
      log=$logs/test-$name-np$n.log
      if [ -n "$ranks" ]; then
        timeout -k 5 150 mpirun --bind-to none -np "$n" "$bin" --gtest_filter="$cuda_filter" --gtest_color=no > "$log" 2>&1
      else
        timeout -k 5 150 "$kit_run" "$bin" --gtest_filter="$cuda_filter" --gtest_color=no > "$log" 2>&1
      fi
      printf '%s\t%s\t%s\t%s\n' "$name" "$n" "$?" "$log" >> "$runs"
      report tests "$runs" "$out/tests.md" --gpu-visible > /dev/null
    done
  done
  report tests "$runs" "$out/tests.md" --gpu-visible
}

part_stages() {  # (1, cont.) the engine at every ZeRO stage: 2 GPU ranks (staged MPI) vs the same on CPUs
  local runs=$logs/stages.tsv stage status
  : > "$runs"
  for stage in 0 1 2 3; do
    train "$logs/stage$stage-cpu" 8 --set zero_optimization.stage=$stage
    mpi 2 zerotrain "${TRAIN[@]}" > "$logs/stage$stage-cpu.log" 2>&1
    train "$logs/stage$stage-gpu" 8 --set zero_optimization.stage=$stage --set train.device=$kit_device
    mpi 2 zerotrain "${TRAIN[@]}" > "$logs/stage$stage-gpu.log" 2>&1
    status=$?
    printf '%s\t2\t%s\t%s\t%s\n' "$stage" "$status" "$logs/stage$stage-cpu" "$logs/stage$stage-gpu" >> "$runs"
    report stages "$runs" "$out/stages.md" > /dev/null
  done
  report stages "$runs" "$out/stages.md"
}

part_sanitizer() {  # (2) memcheck on 2 ranks (staged MPI), racecheck on 1, bf16, a few steps
  local runs=$logs/sanitizer.tsv
  : > "$runs"
  if ! command -v compute-sanitizer >/dev/null; then
    printf '## compute-sanitizer\n\ncompute-sanitizer is not on this machine (PATH, /usr/local/cuda*/bin).\n' > "$out/sanitizer.md"
    return 1
  fi
  local common=(--set train.device=$kit_device --set precision.dtype=bf16 --set train.train_micro_batch_size_per_gpu=2)
  train "$logs/memcheck" 3 "${common[@]}"
  mpi 2 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 "$kit/libexec/zerotrain" "${TRAIN[@]}" \
    > "$logs/memcheck.log" 2>&1
  printf 'memcheck\t2\t%s\t%s\n' "$?" "$logs/memcheck.log" >> "$runs"
  report sanitizer "$runs" "$out/sanitizer.md" > /dev/null
  train "$logs/racecheck" 2 "${common[@]}"
  "$kit_run" compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 20 "$kit/libexec/zerotrain" "${TRAIN[@]}" \
    > "$logs/racecheck.log" 2>&1
  printf 'racecheck\t1\t%s\t%s\n' "$?" "$logs/racecheck.log" >> "$runs"
  report sanitizer "$runs" "$out/sanitizer.md"
}

part_perf() {  # (3) GPT-2 124M bf16 on 1 GPU: zerotrain vs PyTorch eager and torch.compile
  [ -n "$ZT_PYTHON" ] || echo "no Python with PyTorch and CUDA here: the torch rows are left out"
  local status=0 round choice attention epilogues
  # perf_gpu.py runs bin/zerotrain, which puts the kit's libraries first for itself alone; PyTorch
  # sees the machine's environment as it is.
  ZT_BIN=$kit/bin/zerotrain ZT_TORCH_PYTHON=$ZT_PYTHON "${ZT_PYTHON:-python3}" \
    "$kit/bench/perf_gpu.py" --batch "${ZT_KIT_PERF_BATCH:-16}" --steps 15 --warmup 5 --output "$out/perf.md" \
    > "$logs/perf_gpu.log" 2>&1 || { status=$?
      printf '## GPT-2 124M on one GPU\n\nbench/perf_gpu.py failed (exit %s):\n\n```\n%s\n```\n' \
        "$status" "$(tail -30 "$logs/perf_gpu.log")" > "$out/perf.md"; }
  # The models' forward + backward alone (no optimizer, no engine), to split the step's time.
  if [ -x "$kit/libexec/zt_bench_gpt2_step" ]; then
    # Each kernel choice against the default (cuDNN attention, cuBLASLt epilogues), two interleaved
    # rounds: the flash kernels instead of cuDNN, the separate bias/GELU kernels instead of epilogues.
    { echo; echo "Forward + backward of the model alone (\`zt_bench_gpt2_step\`, no optimizer or engine): the default"
      echo "kernels, attention on the flash kernels, and no epilogues, interleaved:"; echo; echo '```'
      for round in 1 2; do
        for choice in "cudnn on" "flash on" "cudnn off"; do
          read -r attention epilogues <<<"$choice"
          echo "--- round $round: --attention $attention --epilogues $epilogues"
          timeout 60 "$kit_run" "$kit/libexec/zt_bench_gpt2_step" --preset gpt2-124m --batch "${ZT_KIT_PERF_BATCH:-16}" \
            --seq 1024 --dtype bf16 --warmup 3 --steps 10 --attention "$attention" --epilogues "$epilogues" 2>&1 || status=$?
        done
      done
      echo '```'; } >> "$out/perf.md"
  fi
  return $status
}

part_overlap() {  # (4) 2 ranks on one GPU through MPI staging, overlap on vs off
  local model=(--set model.n_layer=12 --set model.n_head=12 --set model.n_embd=768 --set model.block_size=256
               --set train.device=$kit_device --set precision.dtype=bf16 --set train.train_micro_batch_size_per_gpu=8
               --set zero_optimization.reduce_bucket_size=25000000)
  for on in true false; do
    train "$logs/overlap-$on" 12 "${model[@]}" --set zero_optimization.overlap_comm=$on
    mpi 2 zerotrain "${TRAIN[@]}" > "$logs/overlap-$on.log" 2>&1 || { echo "overlap_comm=$on failed, see logs/overlap-$on.log"; tail -5 "$logs/overlap-$on.log"; }
    [ $on = false ] || report overlap 4 "$out/overlap.md" "overlap on=$logs/overlap-true" > /dev/null
  done
  report overlap 4 "$out/overlap.md" "overlap on=$logs/overlap-true" "overlap off=$logs/overlap-false"
}

part_repro() {  # (5) two identical runs, bitwise: 1 GPU, and 2 ranks at stage 2
  # 4 layers x 256, T = 128: enough blocks per kernel that an unordered reduction would show.
  local gpu=(--set train.device=$kit_device --set precision.dtype=bf16 --set model.n_layer=4 --set model.n_embd=256
             --set model.block_size=128)
  for run in a b; do
    train "$logs/repro-1rank-$run" 20 "${gpu[@]}"
    zerotrain "${TRAIN[@]}" > "$logs/repro-1rank-$run.log" 2>&1
    train "$logs/repro-2rank-$run" 20 "${gpu[@]}"
    mpi 2 zerotrain "${TRAIN[@]}" > "$logs/repro-2rank-$run.log" 2>&1
  done
  report repro "$out/repro.md" "$logs/repro-1rank-a" "$logs/repro-1rank-b" > /dev/null
  report repro "$out/repro.md" "$logs/repro-1rank-a" "$logs/repro-1rank-b" "$logs/repro-2rank-a" "$logs/repro-2rank-b"
}

if [ "$mode" = part ]; then
  [ ${#kit_env_problems[@]} -eq 0 ] || { printf 'gpu-kit: %s\n' "${kit_env_problems[@]}" >&2; exit 1; }
  "part_$part"
  exit
fi

# --- main: every part under its time limit, then the summary ------------------------------------
parts=()
for arg in "$@"; do
  if [ -n "${group[$arg]:-}" ]; then read -ra members <<< "${group[$arg]}"; parts+=("${members[@]}"); else parts+=("$arg"); fi
done
[ ${#parts[@]} -gt 0 ] || parts=("${all_parts[@]}")
gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed -n 1p)
status_rows=() failed=0
for part in "${parts[@]}"; do
  [ -n "${default_timeout[$part]:-}" ] || { echo "gpu-kit: unknown part $part (parts: ${all_parts[*]})" >&2; exit 2; }
  var=ZT_KIT_TIMEOUT_${part^^}
  limit=${!var:-${default_timeout[$part]}}
  echo "=== $part (at most $limit s)"
  start=$(date +%s)
  timeout -k 10 "$limit" bash "$kit/tools/gpu-kit/run.sh" --part "$part" "$out" > "$logs/part-$part.log" 2>&1
  status=$?
  seconds=$(( $(date +%s) - start ))
  case $status in 0) verdict=pass ;; 124|137) verdict="TIMEOUT after $limit s" ;; *) verdict="FAIL (exit $status)" ;; esac
  [ $status -eq 0 ] || failed=$((failed + 1))
  if [ ! -s "$out/$part.md" ]; then
    printf '## %s\n\nNo table: the part ended with %s. Last lines of logs/part-%s.log:\n\n```\n%s\n```\n' \
      "$part" "$verdict" "$part" "$(tail -20 "$logs/part-$part.log")" > "$out/$part.md"
  elif [ $status -eq 124 ] || [ $status -eq 137 ]; then
    printf '\nThe part ran out of time (%s s) after the rows above.\n' "$limit" >> "$out/$part.md"
  fi
  status_rows+=("| $part | $verdict | $seconds | [$part.md]($part.md) |")
  echo "    $verdict ($seconds s)"
done

{
  echo "# zerotrain GPU kit results"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- GPU: ${gpu:-none found (nvidia-smi)}"
  echo "- CUDA: the kit's ${cuda_kit:-?}, the driver's ${cuda_driver:-?}"
  echo "- commit: $(sed -n 's/^commit: //p' "$kit/KIT.txt"); kit $(sed -n 's/^built: //p' "$kit/KIT.txt")"
  echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), Linux $(uname -r), glibc $(getconf GNU_LIBC_VERSION | cut -d' ' -f2)"
  echo "- PyTorch: ${ZT_PYTHON:-none} $( [ -n "$ZT_PYTHON" ] && "$ZT_PYTHON" -c 'import torch; print(torch.__version__)')"
  echo "- libraries from the machine: ${ZT_KIT_LD_PATH#"$kit/lib"}"
  echo "- cuDNN (attention): ${ZT_KIT_CUDNN_DIR:-none found; attention runs on the flash kernels}"
  for p in "${kit_env_problems[@]}"; do echo "- PROBLEM: $p"; done
  echo
  echo "| part | result | seconds | table |"
  echo "| --- | --- | --- | --- |"
  printf '%s\n' "${status_rows[@]}"
  for part in "${parts[@]}"; do echo; sed 's/^## /### /' "$out/$part.md"; done
} > "$out/summary.md"
tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs"
sed -n 1,20p "$out/summary.md"
echo "gpu-kit: $failed of ${#parts[@]} parts failed; tables in $out"
exit "$failed"
