#!/usr/bin/env bash
# Builds the GPU kit: zerotrain and every test binary with the CUDA backend (sm_80 and sm_90),
# packed with everything a bare GPU machine lacks (Open MPI's runtime, OpenBLAS, yaml-cpp, fmt,
# Boost, GoogleTest's binaries, the CUDA runtime, configs, a small dataset, the PyTorch peers) into
# one folder under 64 MiB, with run.sh as its entry point. Needs no GPU; nothing is downloaded when
# the kit runs. docs/gpu.md describes the kit and its results.
#
#   tools/gpu-kit/build.sh [--build-dir DIR] [OUT_DIR]
#
# OUT_DIR: the kit (default gpu-kit-out/; replaced). --build-dir: the CMake build to take the
# binaries from (default build-gpukit/, configured here: RelWithDebInfo, ZT_CUDA=ON, architectures
# 80;90).
# A build dir that is already configured (such as the test suite's build/) is built as it is
# configured, so that packing after the suite costs no second compile; it must have the CUDA backend.
# Environment: ZT_BUILD_JOBS (parallel compile jobs, default 2), ZT_KIT_MAX_MIB (size limit, 64).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

build=build-gpukit
out=gpu-kit-out
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=${2:?--build-dir needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "gpu-kit build: unknown option $1" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
max_mib=${ZT_KIT_MAX_MIB:-64}
started=$(date +%s)

say() { echo "gpu-kit build: $*"; }
die() { echo "gpu-kit build: $*" >&2; exit 1; }

# --- 1. build ------------------------------------------------------------------------------------
# Attention on cuDNN where the GPU machine has libcudnn.so.9; optional, so a failed fetch is a note.
bash scripts/fetch-cudnn-frontend.sh ||
  say "the cuDNN frontend's headers were not fetched: attention runs the flash kernels"
if [ ! -f "$build/CMakeCache.txt" ] || [ "$build" = build-gpukit ]; then
  # RelWithDebInfo, the project's usual build: GCC 12 at Release's -O3 reports a false -Wrestrict in
  # std::string that -Werror turns into an error. Device code is optimised by ptxas either way, and
  # the debug info is stripped when packing.
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="80;90" >/dev/null
fi
grep -q '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" ||
  die "$build is configured without the CUDA backend (no CMAKE_CUDA_COMPILER in its CMakeCache.txt); configure it with -DZT_CUDA=ON"
# What the kit packs, by name: zerotrain, the test binaries (area_name_test or test_name, whichever
# scheme) and the zt_bench_* programs; not the sanitizer-instrumented fuzzer or anything else.
mapfile -t targets < <(cmake --build "$build" --target help | sed -n 's/^\.\.\. //p' | cut -d' ' -f1 |
  grep -E '^(zerotrain|[A-Za-z0-9_]+_test|test_[A-Za-z0-9_]+|zt_bench_[A-Za-z0-9_]+)$')
say "building ${#targets[@]} targets in $build"
cmake --build "$build" -j "${ZT_BUILD_JOBS:-2}" --target "${targets[@]}"
built=$(date +%s)

# --- 2. the binaries -----------------------------------------------------------------------------
rm -rf "$out"
mkdir -p "$out"/{bin,libexec,tests,lib/compat,lib/openmpi3,lib/pmix,share,etc,configs,data,bench,tools/gpu-kit}
kit=$(cd "$out" && pwd)

is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

cp "$build/zerotrain" "$kit/libexec/zerotrain"
# The models' own GPT-2 step benchmark (bench/gpt2_step_gpu.cpp), built with the CUDA backend.
find "$build/" -path '*/CMakeFiles' -prune -o -type f -perm -u+x -name 'zt_bench_*' -exec cp {} "$kit/libexec/" \;
# Test binaries by name, whichever scheme they follow (area_name_test or test_name), not by a list;
# only those the build still defines, so that a binary left behind by a renamed test stays out.
declare -A is_target=()
for t in "${targets[@]}"; do is_target[$t]=1; done
while IFS= read -r -d '' f; do
  [ -n "${is_target[${f##*/}]:-}" ] && is_elf "$f" && cp "$f" "$kit/tests/"
done < <(find "$build/" -path '*/CMakeFiles' -prune -o -type f -perm -u+x \( -name '*_test' -o -name 'test_*' \) -print0)
[ -n "$(ls "$kit/tests")" ] || die "no test binaries (*_test, test_*) under $build"

# How many ranks CTest starts each multi-rank test binary with: "binary<TAB>n n ...".
ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, os, sys
ranks = {}
for test in json.load(sys.stdin)["tests"]:
    cmd = test.get("command") or []
    if "-np" in cmd and cmd.index("-np") + 2 < len(cmd):
        i = cmd.index("-np")
        ranks.setdefault(os.path.basename(cmd[i + 2]), set()).add(int(cmd[i + 1]))
for name, ns in sorted(ranks.items()):
    print(name, " ".join(map(str, sorted(ns))), sep="\t")
' > "$kit/tests/ranks.tsv"

# Only test binaries with CUDA cases travel: the tests part runs nothing else, and CPU-only test
# binaries (most of them, a few MiB each) would push the kit over its size limit.
cuda_filter=$(cat tools/gpu-kit/cuda-test-filter)
dropped=0
for bin in "$kit"/tests/*_test "$kit"/tests/test_*; do
  [ -f "$bin" ] || continue
  name=${bin##*/}
  if grep -q "^$name	" "$kit/tests/ranks.tsv"; then
    listed=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 1 "$bin" --gtest_list_tests \
      --gtest_filter="$cuda_filter" 2>&1) || die "$name cannot list its test cases: $listed"
  else
    listed=$("$bin" --gtest_list_tests --gtest_filter="$cuda_filter" 2>&1) || die "$name cannot list its test cases: $listed"
  fi
  grep -q '^  ' <<<"$listed" || { rm "$bin"; dropped=$((dropped + 1)); }
done
[ -n "$(ls "$kit"/tests/*_test "$kit"/tests/test_* 2>/dev/null)" ] || die "no test binary in $build has CUDA cases ($cuda_filter)"
say "test binaries without CUDA cases left out: $dropped"

# Open MPI's launcher (orterun is mpirun), its daemon, plugins, help files; PMIx's plugins and help.
ompi_pkglib=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
pmix_root=/usr/lib/x86_64-linux-gnu/pmix2
for f in /usr/bin/orterun /usr/bin/orted "$ompi_pkglib" "$pmix_root/lib/pmix" /usr/share/openmpi; do
  [ -e "$f" ] || die "$f is missing: install openmpi-bin and libopenmpi-dev (scripts/setup.sh)"
done
cp /usr/bin/orterun /usr/bin/orted "$kit/libexec/"
cp "$ompi_pkglib"/*.so "$kit/lib/openmpi3/"
cp "$pmix_root"/lib/pmix/*.so "$kit/lib/pmix/"
cp -r /usr/share/openmpi "$kit/share/openmpi"
cp -r "$pmix_root/share/pmix" "$kit/share/pmix"
# Plugins for interconnects a single GPU machine does not have (InfiniBand, UCX, libfabric, PSM)
# pull in large stacks; they are left out, as is anything whose libraries are not installed here.
interconnect='/lib(uc[mpst]|psm|infinipath|ibverbs|rdmacm|fabric|efa|nl-)[^/]*$'
for plugin in "$kit"/lib/openmpi3/*.so "$kit"/lib/pmix/*.so; do
  deps=$(LD_LIBRARY_PATH="$pmix_root/lib" ldd "$plugin" 2>&1 | awk '/=>/{print $3 == "not" ? "not-found:" $1 : $3}')
  if grep -Eq "$interconnect|^not-found" <<<"$deps"; then rm "$plugin"; fi
done
rm -f "$kit"/lib/openmpi3/*java* "$kit"/lib/openmpi3/ompi_monitoring_prof.so
# Single host, any user: the local launcher only (no ssh), shared memory between ranks.
cat > "$kit/etc/openmpi-mca-params.conf" <<'EOF'
# The GPU kit's Open MPI: one host, shared memory between ranks, no ssh.
plm = isolated
btl = self,vader
btl_vader_single_copy_mechanism = none
rmaps_base_oversubscribe = 1
hwloc_base_binding_policy = none
EOF
: > "$kit/etc/pmix-mca-params.conf"

# Launchers that find Open MPI and the libraries inside the kit wherever it lies (libexec/kit-env.sh).
# They use no command outside the kit, so they work under `env -i PATH=<kit>/bin`.
cp tools/gpu-kit/kit-env.sh tools/gpu-kit/kit-run "$kit/libexec/"
write_wrapper() {  # NAME PROGRAM
  cat > "$kit/bin/$1" <<EOF
#!/bin/sh
# The GPU kit's $1: libexec/$2 with the kit's libraries and Open MPI installation.
kit=\${0%/bin/*}
. "\$kit/libexec/kit-env.sh"
exec "\$kit/libexec/$2" "\$@"
EOF
  chmod +x "$kit/bin/$1"
}
write_wrapper zerotrain zerotrain
write_wrapper mpirun orterun
write_wrapper mpiexec orterun
write_wrapper orted orted

# Our own binaries: debug info and symbol tables stripped.
strip --strip-unneeded "$kit"/libexec/zerotrain "$kit"/libexec/zt_bench_* 2>/dev/null || true
for f in "$kit"/tests/*; do is_elf "$f" && strip --strip-unneeded "$f"; done

# --- 3. the shared libraries they need -----------------------------------------------------------
# Not carried: glibc (the loader must match it; env.sh checks the machine's is new enough), the
# NVIDIA driver, and cuBLAS/NCCL (hundreds of MB; every CUDA machine has them with the toolkit or
# PyTorch's wheels, and env.sh finds them). libstdc++/libgcc_s go to lib/compat, used only where the
# machine's own are older than ours.
glibc='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl)\.so'
driver='^(libcuda|libnvidia-[a-z-]*)\.so'
from_target='^(libcublas|libcublasLt|libnccl)\.so'
compat='^(libstdc\+\+|libgcc_s)\.so'
: > "$kit/lib/target-libs.txt"
missing=()
mapfile -t elves < <(find "$kit/libexec" "$kit/tests" "$kit/lib" -type f | while read -r f; do is_elf "$f" && echo "$f"; done)
for f in "${elves[@]}"; do LD_LIBRARY_PATH="$pmix_root/lib" ldd "$f" 2>/dev/null || true; done |
  awk '/=>/{print $1, $3}' | sort -u > "$kit/.deps"
while read -r name path; do
  if [[ $name =~ $glibc || $name =~ $driver ]]; then continue; fi
  if [[ $name =~ $from_target ]]; then echo "$name" >> "$kit/lib/target-libs.txt"; continue; fi
  [ "$path" = "not" ] && { missing+=("$name"); continue; }
  if [[ $name =~ $compat ]]; then cp -L "$path" "$kit/lib/compat/$name"; else cp -L "$path" "$kit/lib/$name"; fi
done < "$kit/.deps"
rm "$kit/.deps"
sort -u -o "$kit/lib/target-libs.txt" "$kit/lib/target-libs.txt"
[ ${#missing[@]} -eq 0 ] || die "libraries not found on this machine: ${missing[*]}"

# The newest glibc symbol version our binaries need, and our libstdc++'s newest GLIBCXX version.
glibc_needed=$(for f in "${elves[@]}"; do objdump -T "$f" 2>/dev/null; done | grep -o 'GLIBC_2\.[0-9]*' | sort -uV | tail -1)
glibcxx_ours=$(grep -ao 'GLIBCXX_3\.4\.[0-9]*' "$kit/lib/compat/libstdc++.so.6" | sort -uV | tail -1)

# --- 4. what the runs read -----------------------------------------------------------------------
cp configs/*.yaml "$kit/configs/"
ZEROTRAIN="$build/zerotrain" ZT_DATA_DIR="$kit/data/fortunes" bash scripts/prepare-default-data.sh >/dev/null
cp bench/perf_gpu.py bench/perf_common.py bench/perf_peer.py "$kit/bench/"
cp tools/torch_gpt2_gpu.py tools/torch_gpt2_peer.py "$kit/tools/"
cp tools/gpu-kit/run.sh tools/gpu-kit/env.sh tools/gpu-kit/unpack.sh tools/gpu-kit/cuda-test-filter tools/gpu-kit/*.py \
  "$kit/tools/gpu-kit/"
ln -s tools/gpu-kit/run.sh "$kit/run.sh"
commit=$(git rev-parse --short=12 HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit (+ uncommitted changes)"
echo "$commit" > "$kit/bin/SOURCE_COMMIT"  # bench/perf_common.py reads it next to ZT_BIN
# Attention on cuDNN where the build found the frontend's headers (cmake/Dependencies.cmake).
frontend=$(sed -n 's/^ZT_CUDNN_FRONTEND_DIR:PATH=//p' "$build/CMakeCache.txt")
if grep -q '^CUDNN_INCLUDE_DIR:.*/' "$build/CMakeCache.txt" && [ -f "$frontend/cudnn_frontend.h" ]; then
  cudnn_attention="built with the cuDNN frontend $(cat "$frontend/../VERSION" 2>/dev/null); libcudnn.so.9 from the machine"
else
  cudnn_attention="not built (no cuDNN frontend headers): attention runs the flash kernels"
fi
cat > "$kit/KIT.txt" <<EOF
commit: $commit
built: $(date -u +%Y-%m-%dT%H:%MZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(gcc --version | sed -n 1p)
cuda: $(nvcc --version | grep -o 'release [0-9.]*'), architectures $(grep '^CMAKE_CUDA_ARCHITECTURES:' "$build/CMakeCache.txt" | cut -d= -f2)
cudnn_attention: $cudnn_attention
glibc_needed: ${glibc_needed#GLIBC_}
glibcxx_ours: ${glibcxx_ours#GLIBCXX_}
from_the_machine: $(tr '\n' ' ' < "$kit/lib/target-libs.txt")
EOF

# --- 5. size ------------------------------------------------------------------------------------
# Files over 2 MiB (OpenBLAS, 36 MiB with kernels for every x86 CPU: 4 MiB as xz; the test binaries
# and zerotrain, 5-7 MiB each with the cuDNN frontend's graph code, about a quarter of that as xz)
# travel compressed; unpack.sh (run by run.sh) restores them. Compressing takes a minute, so the
# result is kept in the build dir by content.
unpacked_bytes=$(du -sb "$kit" | cut -f1)
while IFS= read -r -d '' f; do
  cached=$build/gpu-kit-xz/$(sha256sum "$f" | cut -c1-32).xz
  if [ ! -f "$cached" ]; then
    mkdir -p "${cached%/*}"
    xz -6 -T0 -c "$f" > "$cached.part" && mv "$cached.part" "$cached"
  fi
  cp "$cached" "$f.xz"
  chmod --reference="$f" "$f.xz"
  rm "$f"
done < <(find "$kit" -type f -size +2M -print0)
bytes=$(du -sb "$kit" | cut -f1)
mib=$(( (bytes + 1048575) / 1048576 ))
packed=$(date +%s)
say "$(ls "$kit/tests" | grep -vc ranks.tsv) test binaries, $(ls "$kit/lib" | grep -c '\.so') libraries, $(ls "$kit/lib/openmpi3" | wc -l) Open MPI plugins"
say "kit $out: $mib MiB (limit $max_mib MiB), $(( (unpacked_bytes + 1048575) / 1048576 )) MiB unpacked; build $((built - started)) s, pack $((packed - built)) s"
if [ "$bytes" -gt $((max_mib * 1048576)) ]; then
  du -sb "$kit"/* "$kit"/lib/* "$kit"/tests/* | sort -rn | sed -n 1,15p >&2
  die "the kit is $mib MiB, over the $max_mib MiB limit"
fi
