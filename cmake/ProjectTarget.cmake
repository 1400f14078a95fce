# Build options of project code:
# ZT_WERROR: warnings are errors (CI builds with it ON; OFF for users, whose compilers may warn
#   about things ours do not).
# ZT_SANITIZE: a comma-separated list of sanitizers (e.g. "address,undefined") every project
#   target is compiled and linked with; CI runs the loaders' fuzzers and the multi-rank engine
#   tests in such a build. `undefined` includes float-cast-overflow, which GCC leaves out of it.
option(ZT_WERROR "Treat compiler warnings in project code as errors" OFF)
set(ZT_SANITIZE "" CACHE STRING "Sanitizers for project code, e.g. address,undefined (empty: none)")
if(ZT_SANITIZE)
  set(zt_sanitizers "${ZT_SANITIZE}")
  if(zt_sanitizers MATCHES "(^|,)undefined(,|$)")
    string(APPEND zt_sanitizers ",float-cast-overflow")
  endif()
  set(ZT_SANITIZE_FLAGS -fsanitize=${zt_sanitizers} -fno-sanitize-recover=all -fno-omit-frame-pointer)
endif()

# zt_project_target(TARGET): the warnings, sanitizers and include paths every project target gets.
# Third-party headers come in as SYSTEM, so warnings are about project code only.
function(zt_project_target target)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  set(werror_cxx "")
  set(werror_cuda "")
  if(ZT_WERROR)
    set(werror_cxx -Werror)
    set(werror_cuda -Werror=all-warnings)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra ${werror_cxx}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra ${werror_cuda} --expt-relaxed-constexpr>)
  # GCC 12 and later at -O3 report a false -Wrestrict inside libstdc++'s char_traits::copy when
  # std::string's operator+ is inlined ("'" + s + "'"; GCC bug 105329). It stays a warning, only
  # that one, only where it occurs (Release's -O3); it is no longer an error there.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
    target_compile_options(${target} PRIVATE
      $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-Wno-error=restrict>)
  endif()
  if(ZT_SANITIZE_FLAGS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${ZT_SANITIZE_FLAGS}>)
    target_link_options(${target} PUBLIC ${ZT_SANITIZE_FLAGS})
  endif()
  if(ZT_HAVE_CUDA)
    target_compile_definitions(${target} PUBLIC ZT_HAVE_CUDA=1)
  endif()
endfunction()

# zt_add_test(NAME SOURCES... LIBS ...): a GoogleTest binary run by CTest, one test per case.
function(zt_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  zt_project_target(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 120)
endfunction()

# zt_add_mpi_test(NAME RANKS n... SOURCES... LIBS ...): a GoogleTest binary run by real ranks
# under mpirun, once per world size in RANKS. The binary links tests/mpi_main.cpp, which
# initialises MPI and makes every rank's failure fail the test.
function(zt_add_mpi_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "RANKS;SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 180)
  endif()
  add_executable(${name} ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/tests/mpi_main.cpp)
  zt_project_target(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} MPI::MPI_CXX GTest::gtest)
  foreach(n IN LISTS ARG_RANKS)
    add_test(NAME ${name}.np${n}
      COMMAND ${MPIEXEC_EXECUTABLE} ${ZT_MPIEXEC_FLAGS} -np ${n} $<TARGET_FILE:${name}>)
    set_tests_properties(${name}.np${n} PROPERTIES TIMEOUT ${ARG_TIMEOUT} PROCESSORS ${n})
  endforeach()
endfunction()

# Flags that let mpirun start several ranks on this 2-core machine, as root, without hunting for
# network interfaces that do not matter for a single host.
set(ZT_MPIEXEC_FLAGS --oversubscribe --allow-run-as-root --bind-to none --mca btl self,vader
    CACHE STRING "Flags mpirun gets in the multi-rank tests")

# zt_device_sources(TARGET CUDA sources... NO_CUDA sources...): the one place where a build
# with the CUDA backend and one without differ. Each layer with device code keeps it in its
# cuda/ folder (CUDA) and names the file that refuses CUDA devices in a CPU-only build (NO_CUDA).
function(zt_device_sources target)
  cmake_parse_arguments(ARG "" "" "CUDA;NO_CUDA" ${ARGN})
  if(ZT_HAVE_CUDA)
    target_sources(${target} PRIVATE ${ARG_CUDA})
  else()
    target_sources(${target} PRIVATE ${ARG_NO_CUDA})
  endif()
endfunction()
