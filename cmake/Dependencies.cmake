# Finds every library zerotrain links. The Debian packages that provide them are installed by
# scripts/setup.sh.
find_package(Threads REQUIRED)
find_package(MPI REQUIRED COMPONENTS CXX)
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(OPENBLAS_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas openblas-pthread REQUIRED)
# oneDNN 2.x (Debian's 2.6; models/cpu/bf16_gemm.cpp uses its matmul::desc, gone in 3.x): bf16
# matrix products on CPUs with AVX512-BF16 or AMX. It runs on libgomp's threads (Debian's build).
find_package(dnnl 2 REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)  # oneDNN's threads; zerotrain sets their number
find_package(yaml-cpp REQUIRED)
find_package(fmt REQUIRED)
find_package(Boost REQUIRED COMPONENTS program_options)
find_package(nlohmann_json 3 REQUIRED)
find_package(ZLIB REQUIRED)  # CRC32 of checkpoint files
if(ZT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

set(ZT_HAVE_CUDA OFF)
set(ZT_HAVE_CUDNN OFF)
if(NOT ZT_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc's C++20 flag (nvcc 12+ has it): teach it, then ask for C++20.
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64 REQUIRED)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} REQUIRED)
    add_library(zt_nccl INTERFACE)
    target_link_libraries(zt_nccl INTERFACE ${NCCL_LIBRARY})
    target_include_directories(zt_nccl SYSTEM INTERFACE ${NCCL_INCLUDE_DIR})
    set(ZT_HAVE_CUDA ON)
    # cuDNN's fused attention, through NVIDIA's header-only frontend (fetched from PyPI by
    # scripts/fetch-cudnn-frontend.sh). libcudnn is never linked: the frontend's dynamic loading
    # lets zerotrain load it when a GPU run starts and fall back to its own kernels without it.
    set(ZT_CUDNN_FRONTEND_DIR "${PROJECT_SOURCE_DIR}/.deps/cudnn-frontend/include" CACHE PATH
        "cuDNN frontend headers (scripts/fetch-cudnn-frontend.sh)")
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(EXISTS "${ZT_CUDNN_FRONTEND_DIR}/cudnn_frontend.h" AND CUDNN_INCLUDE_DIR)
      add_library(zt_cudnn_frontend INTERFACE)
      target_include_directories(zt_cudnn_frontend SYSTEM INTERFACE ${ZT_CUDNN_FRONTEND_DIR} ${CUDNN_INCLUDE_DIR})
      target_compile_definitions(zt_cudnn_frontend INTERFACE NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING)
      target_link_libraries(zt_cudnn_frontend INTERFACE ${CMAKE_DL_LIBS})
      set(ZT_HAVE_CUDNN ON)
    else()
      message(STATUS "cuDNN attention: off (no cuDNN frontend headers in ${ZT_CUDNN_FRONTEND_DIR} or no cudnn.h;"
                     " scripts/fetch-cudnn-frontend.sh fetches them)")
    endif()
  elseif(ZT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ZT_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()

add_library(zt_openblas INTERFACE)
target_link_libraries(zt_openblas INTERFACE BLAS::BLAS)
target_include_directories(zt_openblas SYSTEM INTERFACE ${OPENBLAS_CBLAS_INCLUDE_DIR})
