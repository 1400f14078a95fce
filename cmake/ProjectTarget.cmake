# zt_project_target(TARGET): the warnings and include paths every project target gets.
# Warnings are errors on project code only; third-party headers come in as SYSTEM.
function(zt_project_target target)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -Werror=all-warnings --expt-relaxed-constexpr>)
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
