#!/usr/bin/env bash
# The GPU kit is self-contained: what a bare GPU machine lacks, the kit carries. Checked on the
# kit's CPU-only parts, for the kit in ZT_GPU_KIT_DIR (tools/gpu-kit/build.sh; skipped, exit 77,
# when it is not set):
#   0. a copy of the kit elsewhere unpacks (tools/gpu-kit/unpack.sh);
#   1. every program and library in the kit finds each library it needs inside the kit, except
#      glibc, the NVIDIA driver and the CUDA libraries the machine provides (lib/target-libs.txt);
#   2. with the system's Open MPI, PMIx, OpenBLAS and every library the kit carries hidden (a mount
#      namespace with empty files and folders over them; root only, else step 2 is skipped with
#      the reason) and an environment of only PATH=<kit>/bin LD_LIBRARY_PATH=<kit>/lib:
#      every test binary starts and lists its cases, and the kit's mpirun starts 2 ranks of the
#      kit's zerotrain that train 6 steps of configs/default.yaml on the CPU, and that the kit's
#      zerotrain started without mpirun (Open MPI's singleton start) trains 3 steps on 1 rank.
set -euo pipefail
fail() { echo "FAIL (gpukit.self_contained): $*" >&2; exit 1; }
# A command that fails outside fail() is named, so that no failure is silent.
trap 'echo "FAIL (gpukit.self_contained): line $LINENO: $BASH_COMMAND exited with $?" >&2' ERR

kit=${ZT_GPU_KIT_DIR:-}
if [ -z "$kit" ]; then
  echo "SKIP: ZT_GPU_KIT_DIR is not set; scripts/gpu-kit-check.sh builds the kit and runs this test on it"
  exit 77
fi
[ -f "$kit/KIT.txt" ] || fail "$kit is not a GPU kit (no KIT.txt); build one with tools/gpu-kit/build.sh"
kit=$(cd "$kit" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-gpukit.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
# A copy in another place, as on the GPU machine: the kit must not depend on where it was built,
# and unpacking its compressed files (unpack.sh) must leave the built kit as it travels.
cp -a "$kit" "$tmp/kit"
bash "$tmp/kit/tools/gpu-kit/unpack.sh" || fail "unpack.sh failed"
kit=$tmp/kit

# --- 1. every library resolves inside the kit ----------------------------------------------------
allowed_outside='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libcuda|libnvidia-[a-z-]*|libstdc\+\+|libgcc_s)\.so'
target_libs=$(tr '\n' '|' < "$kit/lib/target-libs.txt"); target_libs=${target_libs%|}
checked=0 problems=()
while IFS= read -r -d '' f; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
  checked=$((checked + 1))
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ $path == "$kit"/* ]] && continue
    [[ $name =~ $allowed_outside ]] && continue
    [ -n "$target_libs" ] && [[ $name =~ ^($target_libs)$ ]] && continue
    problems+=("${f#"$kit"/} needs $name: $path")
  done < <(env -i LD_LIBRARY_PATH="$kit/lib" ldd "$f" 2>/dev/null)
done < <(find "$kit/libexec" "$kit/tests" "$kit/lib" -type f -print0)
[ ${#problems[@]} -eq 0 ] || fail "libraries found outside the kit:"$'\n'"$(printf '  %s\n' "${problems[@]}")"
[ "$checked" -ge 20 ] || fail "only $checked programs and libraries in $kit: the kit is incomplete"
echo "ok: the $checked programs and libraries of the kit find their libraries in the kit"

# --- 2. the CPU-only parts with the system's copies hidden ---------------------------------------
cat > "$tmp/inside.sh" <<'EOF'
# Runs inside the mount namespace: hides the system's copies, then runs the kit with env -i.
set -euo pipefail
kit=$1 tmp=$2
fail() { echo "FAIL (gpukit.self_contained): $*" >&2; exit 1; }
trap 'echo "FAIL (gpukit.self_contained): inside.sh line $LINENO: $BASH_COMMAND exited with $?" >&2' ERR
if [ "${3:-}" = hide ]; then
  for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /etc/openmpi /usr/share/openmpi \
           /usr/lib/x86_64-linux-gnu/openblas-*; do
    [ -d "$d" ] && mount -t tmpfs -o size=1m none "$d"
  done
  for lib in "$kit"/lib/*.so*; do
    for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/local/lib; do
      [ -e "$d/${lib##*/}" ] && mount --bind /dev/null "$(readlink -f "$d/${lib##*/}")"
    done
  done
  for b in mpirun mpiexec orterun orted; do
    p=$(command -v "$b" || true); [ -n "$p" ] && mount --bind /dev/null "$(readlink -f "$p")"
  done
  # The hiding itself is checked: the system's MPI library must now be empty.
  ld_cache=$(ldconfig -p)
  sys_mpi=$(awk '/libmpi\.so\.40 .*x86-64/{print $NF; exit}' <<<"$ld_cache")
  [ -z "$sys_mpi" ] || [ ! -s "$sys_mpi" ] || fail "could not hide $sys_mpi"
  echo "ok: the system's Open MPI, PMIx, OpenBLAS and the $(ls "$kit"/lib/*.so* | wc -l) libraries the kit carries are hidden"
fi
clean=(env -i PATH="$kit/bin" LD_LIBRARY_PATH="$kit/lib" HOME="$tmp")

# Every test binary loads and lists its cases (multi-rank ones through the kit's mpirun).
for t in "$kit"/tests/*; do
  name=${t##*/}
  case "$name" in ranks.tsv | *.xz) continue ;; esac  # *.xz: the compressed copies unpack.sh keeps
  if grep -q "^$name	" "$kit/tests/ranks.tsv"; then
    out=$("${clean[@]}" mpirun --allow-run-as-root -np 1 "$t" --gtest_list_tests 2>&1) || fail "$name under mpirun: $out"
  else
    out=$("${clean[@]}" "$t" --gtest_list_tests 2>&1) || fail "$name: $out"
  fi
  grep -q '^  ' <<<"$out" || fail "$name listed no test cases: $out"
done
echo "ok: every test binary in the kit starts and lists its cases"

# 2 ranks of the kit's zerotrain under the kit's mpirun train on the CPU.
cd "$tmp"
log=$("${clean[@]}" mpirun --allow-run-as-root -np 2 zerotrain train --config "$kit/configs/default.yaml" \
  --set "data.train_files=$kit/data/fortunes/train_*.bin" --set "data.val_files=$kit/data/fortunes/val_*.bin" \
  --set train.steps=6 --set train.eval_interval=0 --set checkpoint.interval=0 --set logging.log_interval=1 \
  --set logging.run_dir="$tmp/run" 2>&1) || fail "mpirun -np 2 zerotrain train failed:"$'\n'"$log"
steps=$(grep -c '"step_ms"' "$tmp/run/metrics.jsonl" || true)
[ "$steps" = 6 ] || fail "expected 6 steps in metrics.jsonl, found $steps:"$'\n'"$log"
grep -q 'loss' <<<"$log" || fail "no progress lines from rank 0:"$'\n'"$log"
if grep -Eq '"loss":(null|"?nan|"?inf)' "$tmp/run/metrics.jsonl"; then fail "non-finite loss:"$'\n'"$(cat "$tmp/run/metrics.jsonl")"; fi
grep -q ' on 2 rank(s)' <<<"$log" || fail "the job did not run on 2 ranks:"$'\n'"$log"
echo "ok: the kit's mpirun started 2 ranks of the kit's zerotrain, which trained 6 steps on the CPU"

# 1 rank started without mpirun (Open MPI's singleton start, which runs the kit's orted), as the
# kit's perf part and its 1-rank repro runs start it. As root the kit's env.sh allows it the same way.
root_ok=()
[ "$(id -u)" -ne 0 ] || root_ok=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
log=$("${clean[@]}" "${root_ok[@]}" zerotrain train --config "$kit/configs/default.yaml" \
  --set "data.train_files=$kit/data/fortunes/train_*.bin" --set "data.val_files=$kit/data/fortunes/val_*.bin" \
  --set train.steps=3 --set train.eval_interval=0 --set checkpoint.interval=0 --set logging.log_interval=1 \
  --set logging.run_dir="$tmp/run1" 2>&1 < /dev/null) || fail "zerotrain train without mpirun failed:"$'\n'"$log"
steps=$(grep -c '"step_ms"' "$tmp/run1/metrics.jsonl" || true)
[ "$steps" = 3 ] || fail "expected 3 steps in metrics.jsonl without mpirun, found $steps:"$'\n'"$log"
grep -q ' on 1 rank(s)' <<<"$log" || fail "the job without mpirun did not run on 1 rank:"$'\n'"$log"
echo "ok: the kit's zerotrain started without mpirun trained 3 steps on 1 rank"
EOF

if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
  unshare -m --propagation private bash "$tmp/inside.sh" "$kit" "$tmp" hide
else
  echo "note: no mount namespace here (needs root); the system's copies stay visible, the environment is still only the kit's"
  bash "$tmp/inside.sh" "$kit" "$tmp"
fi
