# Runs a command that must fail: asserts a non-zero exit (unless REQUIRE_FAILURE is OFF), an output
# matching EXPECT, and that it ended by itself within MAX_SECONDS (a hang is what we guard against).
#   cmake -DCOMMAND=<args joined by ^^> -DEXPECT=<regex> -DMAX_SECONDS=<n> [-DREQUIRE_FAILURE=OFF]
#         -P expect_failure.cmake
string(REPLACE "^^" ";" command "${COMMAND}")
if(NOT DEFINED REQUIRE_FAILURE)
  set(REQUIRE_FAILURE ON)
endif()
string(TIMESTAMP started "%s")
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output
                TIMEOUT ${MAX_SECONDS})
string(TIMESTAMP ended "%s")
math(EXPR seconds "${ended} - ${started}")
message("---- output (exit status '${status}', ${seconds} s) ----\n${output}\n----")
if(NOT status MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the command did not end by itself within ${MAX_SECONDS} s: ${status}")
endif()
if(REQUIRE_FAILURE AND status EQUAL 0)
  message(FATAL_ERROR "the command exited 0, but it must fail")
endif()
if(NOT output MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}'")
endif()
message("expected failure seen: exit status ${status} after ${seconds} s")
