#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (C++ units and Python scenarios) with CTest.
#
#   scripts/test.sh [CTEST ARGS]             the release build in build/
#   scripts/test.sh --sanitize [CTEST ARGS]  the same suite on an ASan + UBSan (+ LSan) build in
#                                            build-asan/, then every sanitizer report is checked
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ "${1:-}" != "--sanitize" ]; then
  bash scripts/setup.sh --with-torch  # PyTorch 2.15 for the --real-torch tests (tests/python/test_real_torch.py)
  bash scripts/build.sh
  cd build
  exec ctest --output-on-failure -j2 "$@"
fi
shift

bash scripts/setup.sh
if [ ! -f build-asan/build.ninja ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDYN_SANITIZE=ON
fi
cmake --build build-asan

# Reports go to files, one per process (tests start dynrepl children too), so that no golden
# transcript sees them and none is lost with a child's stderr. abort_on_error: a memory error or
# undefined behaviour kills its process with SIGABRT, so the test that caused it fails. exitcode=0:
# the leak check at exit never fails a process by itself, because the embedded interpreter and numpy
# keep memory until exit by design; check_logs.py then fails the run for every leak with a frame of
# ours in its allocation stack.
logs=$(mktemp -d "${TMPDIR:-/tmp}/dynrepl-sanitize.XXXXXX")
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:exitcode=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:log_path=$logs/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$logs/ubsan"
export LSAN_OPTIONS="exitcode=0"
status=0
(cd build-asan && ctest --output-on-failure -j2 "$@") || status=$?
/usr/bin/python3 tests/sanitize/check_logs.py "$logs" "$root" || status=1
[ "$status" -ne 0 ] || rm -rf "$logs"
[ "$status" -eq 0 ] || echo "sanitizer logs kept in $logs"
exit "$status"
