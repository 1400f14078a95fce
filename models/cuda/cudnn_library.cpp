// Loading cuDNN (models/cuda/cudnn_attention.h): needs no cuDNN headers, built with every CUDA
// backend.
#include <dlfcn.h>

#include <fmt/format.h>

#include "models/cuda/cudnn_attention.h"

namespace zt::models::cuda {

CudnnLibrary load_cudnn_library(const char* name) {
  dlerror();
  // Never closed: the frontend calls into it for the life of the process.
  void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    return {false, 0, fmt::format("{} could not be loaded ({})", name, error ? error : "no reason given")};
  }
  using GetVersion = std::size_t (*)();
  auto get_version = reinterpret_cast<GetVersion>(dlsym(library, "cudnnGetVersion"));
  if (get_version == nullptr) return {false, 0, fmt::format("{} has no cudnnGetVersion: not cuDNN", name)};
  const auto version = static_cast<long>(get_version());
  if (version / 10000 != 9) return {false, version, fmt::format("{} is cuDNN {}, not cuDNN 9", name, version)};
  return {true, version, ""};
}

}  // namespace zt::models::cuda
