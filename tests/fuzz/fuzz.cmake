# Included from tests/CMakeLists.txt: builds tests/fuzz with clang-14 as an
# external project and runs each target over its seed corpus for a bounded
# time (MR_FUZZ_SECONDS each) as a ctest entry. A crash, a leak or a failed
# FUZZ_CHECK fails the entry; the input is left in <build>/fuzz/artifacts.
set(MR_FUZZ_TARGETS write_bodies ops_api router read_requests timestamps auth_check
                    idempotency_record secret_box json_text webhook_bodies standard_webhooks)
option(MR_FUZZ "build the libFuzzer targets (clang-14) and run them under ctest" ON)
set(MR_FUZZ_SECONDS 4 CACHE STRING "seconds each fuzz target runs under ctest")
if(NOT MR_FUZZ)
  return()
endif()

# Refuse to configure rather than skip silently: CI expects these tests.
find_program(MR_FUZZ_CXX clang++-14)
find_program(MR_FUZZ_CC clang-14)
if(MR_FUZZ_CXX AND MR_FUZZ_CC AND NOT MR_FUZZ_CXX_WORKS)
  set(probe ${CMAKE_BINARY_DIR}/fuzz-probe)
  file(WRITE ${probe}.cpp "#include <cstdint>\n#include <cstddef>\nextern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
  execute_process(COMMAND ${MR_FUZZ_CXX} -fsanitize=fuzzer,address,undefined ${probe}.cpp -o ${probe}
                  RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
  if(probe_rc EQUAL 0)
    set(MR_FUZZ_CXX_WORKS TRUE CACHE INTERNAL "clang++-14 links -fsanitize=fuzzer")
  endif()
endif()
if(NOT MR_FUZZ_CXX_WORKS)
  message(FATAL_ERROR "MR_FUZZ is ON but clang++-14 cannot link -fsanitize=fuzzer,address,undefined: "
                      "run tools/deps.sh (clang-14 libclang-rt-14-dev libfuzzer-14-dev) or configure "
                      "with -DMR_FUZZ=OFF")
endif()

include(ExternalProject)
set(MR_FUZZ_BUILD_DIR ${CMAKE_BINARY_DIR}/fuzz)
string(REPLACE ";" "|" fuzz_target_list "${MR_FUZZ_TARGETS}")
ExternalProject_Add(mr_fuzz_targets
  SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}
  BINARY_DIR ${MR_FUZZ_BUILD_DIR}
  LIST_SEPARATOR |
  CMAKE_ARGS -DCMAKE_CXX_COMPILER=${MR_FUZZ_CXX} -DCMAKE_C_COMPILER=${MR_FUZZ_CC}
             -DCMAKE_BUILD_TYPE=Release -DMR_REPO=${PROJECT_SOURCE_DIR}
             -DMR_FUZZ_TARGETS=${fuzz_target_list}
             # The migrations as the main build embedded them (its configure
             # wrote the file): the ops routes read the newest one's number.
             -DMR_MIGRATIONS_EMBEDDED=${PROJECT_BINARY_DIR}/ledger/sql/migrations_embedded.cpp
             -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
  BUILD_ALWAYS ON  # its sources live outside its tree: let make decide what changed
  INSTALL_COMMAND "")

# Any UBSan report (but the suppressed ones) is a crash; ASan's are anyway.
set(MR_FUZZ_ENV
  "UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1:suppressions=${PROJECT_SOURCE_DIR}/tools/ubsan.supp")
foreach(t ${MR_FUZZ_TARGETS})
  set(corpus ${CMAKE_CURRENT_LIST_DIR}/corpus/${t})
  if(NOT IS_DIRECTORY ${corpus})
    message(FATAL_ERROR "fuzz target ${t} has no seed corpus ${corpus}")
  endif()
  # New inputs go to the build tree; the seeds in the tree stay as they are.
  file(MAKE_DIRECTORY ${MR_FUZZ_BUILD_DIR}/found/${t} ${MR_FUZZ_BUILD_DIR}/artifacts)
  add_test(NAME fuzz_${t}
    COMMAND ${MR_FUZZ_BUILD_DIR}/${t} -max_total_time=${MR_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048
            -print_final_stats=1 -artifact_prefix=${MR_FUZZ_BUILD_DIR}/artifacts/${t}-
            ${MR_FUZZ_BUILD_DIR}/found/${t} ${corpus})
  set_tests_properties(fuzz_${t} PROPERTIES LABELS fuzz TIMEOUT 120 ENVIRONMENT "${MR_FUZZ_ENV}")
endforeach()
