#!/bin/bash
# Packs the models' GPU checks for a lent GPU machine (which lacks OpenBLAS, fmt and the build),
# and runs them there.
#
#   here:        cmake -S . -B build-models-cuda && cmake --build build-models-cuda -j2 \
#                  --target zt_models_test zt_bench_gpt2_step
#                tools/models_gpu_bundle.sh pack build-models-cuda build-models-gpu-bundle
#   device tool: run(command="tools/models_gpu_bundle.sh run build-models-gpu-bundle",
#                    carry=["build-models-gpu-bundle"])
#
# `run` executes the CUDA-vs-CPU kernel tests and the GPT-2 124M step benchmark (bf16, micro
# batches 8 and 16, sequence 1024) and writes their output under $OUT (or ./gpu-results).
# cuBLAS is too big to carry (the carry limit is 64 MiB): `run` takes libcublas/libcudart from
# the device machine's CUDA install or its PyTorch wheels.
set -euo pipefail
mode=${1:?usage: $0 pack BUILD_DIR BUNDLE | run BUNDLE}
case "$mode" in
  pack)
    build=${2:?build dir}; bundle=${3:?bundle dir}
    rm -rf "$bundle"; mkdir -p "$bundle/lib"
    cp "$build/tests/models/zt_models_test" "$build/models/zt_bench_gpt2_step" "$bundle/"
    # Every shared library outside libc/libstdc++/CUDA that the binaries need.
    ldd "$bundle/zt_models_test" "$bundle/zt_bench_gpt2_step" | awk '/=> \//{print $3}' | sort -u |
      grep -Ev '/(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+)\.so|/libcu|/libnccl' |
      while read -r lib; do cp -L "$lib" "$bundle/lib/"; done
    du -sh "$bundle"
    ;;
  run)
    bundle=$(cd "${2:?bundle dir}" && pwd)
    out=${OUT:-$PWD/gpu-results}; mkdir -p "$out"
    cuda_dirs=$(find /usr/local/cuda*/lib* /opt /usr/lib -name 'libcublas.so.13*' -printf '%h\n' 2>/dev/null | sort -u | tr '\n' ':')
    cudart_dirs=$(find /usr/local/cuda*/lib* /opt /usr/lib -name 'libcudart.so.13*' -printf '%h\n' 2>/dev/null | sort -u | tr '\n' ':')
    export LD_LIBRARY_PATH="$bundle/lib:${cuda_dirs}${cudart_dirs}${LD_LIBRARY_PATH:-}"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt" || true
    # The fixtures directory compiled into the test is this checkout's.
    "$bundle/zt_models_test" --gtest_filter='Storage/CudaVsCpu*' 2>&1 | tee "$out/cuda_vs_cpu.txt"
    for B in 8 16; do
      "$bundle/zt_bench_gpt2_step" --preset gpt2-124m --batch $B --seq 1024 --dtype bf16 --warmup 3 --steps 20 2>&1 |
        tee "$out/gpt2_124m_bf16_B$B.txt"
    done
    ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
