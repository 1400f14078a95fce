# Sourced (bash) by run.sh with $kit set: checks that this machine can run the kit and sets up
# what the parts use. Exports:
#   ZT_KIT_LD_PATH  the kit's lib/ (+ lib/compat where the machine's libstdc++ is older), then the
#                   machine's folders of the CUDA libraries the kit does not carry (cuBLAS, NCCL,
#                   and cuDNN where there is one: ZT_KIT_CUDNN_DIR, empty where none)
#   PATH            the kit's bin/ first (zerotrain, mpirun), then compute-sanitizer's folder
#   ZT_PYTHON       a Python with PyTorch and CUDA (empty when there is none)
#   OMPI_ALLOW_RUN_AS_ROOT[_CONFIRM]  machines lent for an hour often run everything as root
# kit_env_problems holds the reasons the kit cannot run here (empty when it can).
kit_env_problems=()

# Read once into a variable: a reader that stops at its first match (awk's exit) would otherwise
# kill ldconfig with SIGPIPE mid-write, a failure under pipefail.
ld_cache=$({ command -v ldconfig >/dev/null && ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null || true)
ldcache() { printf '%s\n' "$ld_cache"; }
kit_field() { sed -n "s/^$1: //p" "$kit/KIT.txt"; }
version_lt() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | sed -n 1p)" = "$1" ]; }

# Every part needs a GPU; without one they would only report skips.
nvidia-smi -L >/dev/null 2>&1 || kit_env_problems+=("no NVIDIA GPU visible (nvidia-smi -L failed or is missing)")
# A driver older than the kit's CUDA major version makes every CUDA call fail (the tests would all
# skip); a newer minor version of the same major runs through CUDA's minor version compatibility.
cuda_kit=$(kit_field cuda | grep -o '[0-9]*\.[0-9]*' | sed -n 1p)
cuda_driver=$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: *[0-9.]*' | grep -o '[0-9][0-9.]*' | sed -n 1p)
if [ -n "$cuda_kit" ] && [ -n "$cuda_driver" ] && [ "${cuda_driver%%.*}" -lt "${cuda_kit%%.*}" ]; then
  kit_env_problems+=("the driver supports CUDA $cuda_driver and the kit was built with CUDA $cuda_kit: a driver for CUDA ${cuda_kit%%.*}.x is needed")
fi

# glibc cannot be carried (the loader and libc must match); the machine's must be at least ours.
glibc_needed=$(kit_field glibc_needed)
glibc_here=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -z "$glibc_here" ] || version_lt "$glibc_here" "$glibc_needed"; then
  kit_env_problems+=("this machine's glibc is ${glibc_here:-unknown}; the kit needs $glibc_needed or newer")
fi

# libstdc++: the machine's when it is at least as new as ours (PyTorch may need the newer one),
# else the kit's copy in lib/compat.
ld_path="$kit/lib"
system_libstdcxx=$(ldcache | awk '/libstdc\+\+\.so\.6 .*x86-64/{print $NF; exit}')
glibcxx_here=$( [ -n "$system_libstdcxx" ] && grep -ao 'GLIBCXX_3\.4\.[0-9]*' "$system_libstdcxx" | sort -uV | tail -1)
if [ -z "$glibcxx_here" ] || version_lt "${glibcxx_here#GLIBCXX_}" "$(kit_field glibcxx_ours)"; then
  ld_path="$ld_path:$kit/lib/compat"
fi

# cuBLAS and NCCL come from the machine: its CUDA toolkit, or the NVIDIA wheels next to PyTorch.
kit_python_site_dirs() {
  local py
  for py in python3 /opt/*/.venv/bin/python3 /opt/conda/bin/python3; do
    command -v "$py" >/dev/null 2>&1 &&
      "$py" -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null
  done
}
find_machine_lib() {  # NAME: prints the folder that holds it
  local name=$1 dir
  dir=$(ldcache | awk -v n="$name" '$1 == n && /x86-64/ {print $NF; exit}')
  if [ -n "$dir" ]; then dirname "$dir"; return; fi
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-*/lib64 \
             /usr/local/cuda-*/lib /usr/local/cuda-*/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu; do
    [ -e "$dir/$name" ] && { echo "$dir"; return; }
  done
  local site
  while read -r site; do
    [ -d "$site/nvidia" ] || continue
    dir=$(find "$site/nvidia" -maxdepth 3 -name "$name" -printf '%h\n' 2>/dev/null | sed -n 1p)
    [ -n "$dir" ] && { echo "$dir"; return; }
  done < <(kit_python_site_dirs | sort -u)
}
while read -r lib; do
  [ -n "$lib" ] || continue
  dir=$(find_machine_lib "$lib")
  if [ -z "$dir" ]; then
    kit_env_problems+=("$lib is not on this machine (looked in ldconfig, /usr/local/cuda*, Python's nvidia/ wheels)")
  else
    case ":$ld_path:" in *":$dir:"*) ;; *) ld_path="$ld_path:$dir" ;; esac
  fi
done < "$kit/lib/target-libs.txt"
# cuDNN is optional: attention runs on its fused kernels where libcudnn.so.9 is found (PyTorch's
# wheels bring one), on the kit's flash kernels otherwise (the log says which).
ZT_KIT_CUDNN_DIR=$(find_machine_lib libcudnn.so.9)
if [ -n "$ZT_KIT_CUDNN_DIR" ]; then
  case ":$ld_path:" in *":$ZT_KIT_CUDNN_DIR:"*) ;; *) ld_path="$ld_path:$ZT_KIT_CUDNN_DIR" ;; esac
fi
export ZT_KIT_LD_PATH=$ld_path

export PATH="$kit/bin:$PATH"
if ! command -v compute-sanitizer >/dev/null 2>&1; then
  for dir in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer /usr/local/cuda-*/bin /opt/nvidia/*/compute-sanitizer; do
    [ -x "$dir/compute-sanitizer" ] && { PATH="$PATH:$dir"; break; }
  done
fi
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

ZT_PYTHON=""
for py in python3 /opt/*/.venv/bin/python3 /opt/conda/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    ZT_PYTHON=$(command -v "$py"); break
  fi
done
export ZT_PYTHON
