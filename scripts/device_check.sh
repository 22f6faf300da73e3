#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, over a bundle made by
# ../shared/tools/device-bundle (see docs/benchmarks.md): every CUDA test,
# compute-sanitizer (memcheck, racecheck) over the CUDA tests, the GNU Radio
# flowgraph test on the CUDA backend, the benchmark and a CUDA simulation.
# Usage: scripts/device_check.sh BUNDLE_DIR [OUT_DIR]
set -u
bundle=${1:?bundle dir}
out=${2:-${OUT:-/tmp/device_out}}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
failures=$out/failures.txt
: > "$failures"
step() { echo; echo "=== $* ==="; }
# Steps run inside pipelines (subshells), so failures are collected in a file.
run() { "$@"; local rc=$?; [ $rc -eq 0 ] || { echo "FAILED (rc=$rc): $*"; echo "rc=$rc: $*" >> "$failures"; }; return 0; }

step device
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

step "core tests (CPU reference and CUDA against CPU)"
run "$bundle/mimo_gpu_core_tests" --gtest_brief=1 2>&1 | tee "$out/core_tests.log" | grep -E "compared|measured|seed|PASSED|FAILED|SKIPPED|tests ran" 

if [ -x "$bundle/mimo_gpu_block_tests" ]; then
  step "GNU Radio flowgraph tests (CPU and CUDA backends)"
  run "$bundle/mimo_gpu_block_tests" 2>&1 | tee "$out/block_tests.log" | grep -E "OK|PASSED|FAILED|SKIPPED|tests ran|backend"
fi

step "compute-sanitizer memcheck (CUDA tests)"
run timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$bundle/mimo_gpu_core_tests" \
  --gtest_filter='cuda_backend.*' --gtest_brief=1 2>&1 | tee "$out/memcheck.log" | grep -E "ERROR SUMMARY|PASSED|FAILED" | tail -3
step "compute-sanitizer racecheck (CUDA tests)"
run timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 "$bundle/mimo_gpu_core_tests" \
  --gtest_filter='cuda_backend.*' --gtest_brief=1 2>&1 | tee "$out/racecheck.log" | grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" | tail -3

step "benchmark"
run "$bundle/mimo_gpu_bench" --json "$out/bench_h100.json" 2>&1 | tee "$out/bench.log"

if [ -x "$bundle/mimo_gpu_simulate" ]; then
  step "simulation on the CUDA backend (GNU Radio C++ flowgraph)"
  run "$bundle/mimo_gpu_simulate" --backend cuda ${SIM_ARGS:-} --json "$out/simulate_cuda.json" 2>&1 | tee "$out/simulate.log" | tail -25
fi
echo
if [ -s "$failures" ]; then echo "device_check: SOME STEPS FAILED"; cat "$failures"; exit 1; fi
echo "device_check: ALL OK"
