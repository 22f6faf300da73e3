#!/usr/bin/env bash
# The core and block tests under AddressSanitizer and UndefinedBehaviorSanitizer
# (CPU backend: the CUDA side is checked by compute-sanitizer in
# scripts/device_check.sh). Any report fails the run.
#   scripts/sanitize.sh            builds build-asan/ and runs the tests
#   BUILD_DIR=... JOBS=... scripts/sanitize.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build-asan}
jobs=${JOBS:-$(nproc)}
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"

printf '\n==== configuring %s (ASan + UBSan, CPU backend)\n' "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DENABLE_CUDA=OFF \
    -DPYTHON_EXECUTABLE=/usr/bin/python3 \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
printf '\n==== building the core, block and program tests with %s jobs\n' "$jobs"
cmake --build "$build" -j"$jobs" --target mimo_gpu_core_tests mimo_gpu_block_tests \
    mimo_gpu_turbo_block_tests mimo_gpu_raw_item_file_tests mimo_gpu_detect_file mimo_gpu_channel_file

# GNU Radio's own singletons are not freed at exit: leaks are not checked.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
printf '\n==== running them\n'
ctest --test-dir "$build" -j"$jobs" --output-on-failure -L 'core|blocks' -E 'qa_'
ctest --test-dir "$build" -j"$jobs" --output-on-failure -R 'apps\.detect_file'
printf '\n==== ASan/UBSan: clean\n'
