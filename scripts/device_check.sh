#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, over a bundle made by
# ../shared/tools/device-bundle (see docs/benchmarks.md): every CUDA test,
# compute-sanitizer (memcheck, racecheck) over the CUDA tests, the GNU Radio
# flowgraph tests on the CUDA backend, the benchmark, and the uncoded and coded
# simulations on CUDA, and the soak (10^9 problems with bad ones sprinkled in,
# through the detector flowgraph). SIM_ARGS and CODED_ARGS add options to the
# simulations, SOAK_ARGS replace the soak's. STEPS picks steps (default: all of
# "tests sanitize bench mmse simulate soak flowgraph"). MMSE_DEVICES: the --devices of the
# MMSE benchmark (default 0,0: one GPU listed twice). Step "ofdm" (not in the default
# list) measures the live receiver (samples -> ofdm_rx -> mimo_detector ->
# tb_stream_decoder) with mimo_gpu_flowgraph_bench --chain ofdm, and the earlier
# build's blocks where BEFORE names its bundle (a folder with the bench and lib/).
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
# Each step ends after STEP_TIMEOUT seconds (default 300): a hang costs one step, not the lease.
run() { timeout "${STEP_TIMEOUT:-300}" "$@"; local rc=$?; [ $rc -eq 0 ] || { echo "FAILED (rc=$rc): $*"; echo "rc=$rc: $*" >> "$failures"; }; return 0; }
steps=" ${STEPS:-tests sanitize bench mmse simulate soak flowgraph} "
want() { [[ "$steps" == *" $1 "* ]]; }

step device
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

if want tests; then
step "core tests (CPU reference and CUDA against CPU)"
run "$bundle/mimo_gpu_core_tests" --gtest_brief=1 --gtest_filter="${CORE_FILTER:-*}" 2>&1 | tee /tmp/core_tests.log | grep -E "compared|measured|memory|PASSED|FAILED|SKIPPED|tests ran"

for t in mimo_gpu_block_tests mimo_gpu_turbo_block_tests mimo_gpu_ofdm_block_tests; do
  if [ -x "$bundle/$t" ]; then
    step "GNU Radio flowgraph tests: $t (CPU and CUDA backends)"
    run "$bundle/$t" 2>&1 | tee "/tmp/$t.log" | grep -E "OK \]|PASSED|FAILED|SKIPPED|tests ran"
  fi
done
fi

if want sanitize; then
# Eager module loading under the sanitizers: with CUDA's lazy loading, a
# flowgraph whose GPU blocks make their first launches at once from several
# threads (transmit_side_blocks_cuda: ofdm_tx's cuFFT plans and kernels beside
# ofdm_channel_model's) stalled under memcheck in 6 of 6 runs, and passed with
# 0 errors in 2 of 2 with EAGER (and in 20 of 20 runs without the sanitizer).
export CUDA_MODULE_LOADING=EAGER
step "compute-sanitizer memcheck (CUDA tests)"
run timeout 400 compute-sanitizer --tool memcheck --error-exitcode 9 "$bundle/mimo_gpu_core_tests" \
  --gtest_filter="${MEMCHECK_FILTER:-cuda_backend.*:turbo_cuda.*:mtt_cuda.*:detector_cuda.*:erasures.cuda*:sphere_cuda.*:mmse_detector.cuda*:mmse_detector.bad*:detector_pipeline.*:sumis_cuda.*:sumis.channel_reuse*:ofdm_front_end_cuda.*:ofdm_stream_receiver_cuda.*:transport_block_device.*:cuda_transmit_side.*:*transmit_side.*/1}" --gtest_brief=1 2>&1 | tee "$out/memcheck.log" | grep -E "ERROR SUMMARY|PASSED|FAILED" | tail -3
step "compute-sanitizer racecheck (CUDA tests of the small-MIMO families)"
run timeout 450 compute-sanitizer --tool racecheck --error-exitcode 9 "$bundle/mimo_gpu_core_tests" \
  --gtest_filter="${RACECHECK_FILTER:-cuda_backend.*:turbo_cuda.state_parallel*:turbo_cuda.bad*:mtt_cuda.*:erasures.cuda*:sphere_cuda.*}" --gtest_brief=1 2>&1 | tee "$out/racecheck.log" | grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" | tail -3
step "compute-sanitizer memcheck (GPU blocks in flowgraphs: the transmit side, the loopback)"
run timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$bundle/mimo_gpu_ofdm_block_tests" \
  --gtest_filter="${MEMCHECK_BLOCKS_FILTER:-transmit_side_blocks_cuda.*:*transmit_side_blocks.*/1:*ofdm_flowgraph.frames_through*/2x2_cuda:*ofdm_flowgraph.a_stream_cut*/2x2_cuda}" --gtest_brief=1 2>&1 | tee "$out/memcheck_blocks.log" | grep -E "ERROR SUMMARY|PASSED|FAILED" | tail -3
step "compute-sanitizer racecheck (the MMSE and SUMIS kernels)"
# Not the stream receiver's window-fill test: 24 LTE 20 MHz frames under racecheck
# take minutes, and its kernels are the cut-stream test's (which runs here). The
# rest took 535 s on an H100 (session 7): its own, longer step limit.
STEP_TIMEOUT=${RACECHECK_LARGE_TIMEOUT:-700} run timeout 650 compute-sanitizer --tool racecheck --error-exitcode 9 "$bundle/mimo_gpu_core_tests" \
  --gtest_filter="${RACECHECK_LARGE_FILTER:-mmse_detector.bad*:sumis_cuda.bad*:sumis.channel_reuse*:detector_pipeline.bad_problems*:ofdm_front_end_cuda.*:ofdm_stream_receiver_cuda.*:transport_block_device.*-ofdm_stream_receiver_cuda.a_window_filled*}" --gtest_brief=1 2>&1 | tee "$out/racecheck_large.log" | grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" | tail -3
unset CUDA_MODULE_LOADING
fi

if want bench; then
step "benchmark"
run "$bundle/mimo_gpu_bench" ${BENCH_ARGS:-} --json "$out/bench_h100.json" 2>&1 | tail -${BENCH_TAIL:-60}
# The N-way tables of an earlier build, when the bundle holds one, for a before/after comparison.
if [ -x "$bundle/mimo_gpu_bench_before" ]; then
  step "benchmark of the earlier build (N-way tables only)"
  # Its own core library (same soname) comes first on the library path.
  run env LD_LIBRARY_PATH="$PWD/$bundle/before:$LD_LIBRARY_PATH" "$bundle/mimo_gpu_bench_before" --turbo-blocks 0 \
    --json "$out/bench_before_h100.json" 2>&1 | tail -20
fi
fi

if want mmse; then
step "massive-MIMO soft MMSE: paper Tables I-II, cuBLAS/cuSOLVER comparison, NR frames (MMSE_DEVICES: the multi-GPU rows)"
run "$bundle/mimo_gpu_bench" --mmse-paper --devices "${MMSE_DEVICES:-0,0}" ${MMSE_ARGS:-} --json "$out/bench_mmse.json" 2>&1 | tail -${MMSE_TAIL:-80}
fi

if want simulate && [ -x "$bundle/mimo_gpu_simulate" ]; then
  step "simulation on the CUDA backend (GNU Radio C++ flowgraph)"
  run "$bundle/mimo_gpu_simulate" --backend cuda ${SIM_ARGS:-} --json "$out/simulate_cuda.json" 2>&1 | tail -20
  step "coded link on the CUDA backend (transport blocks, turbo decoder)"
  run "$bundle/mimo_gpu_simulate" --backend cuda --coded ${CODED_ARGS:-} --json "$out/simulate_coded_cuda.json" 2>&1 | tail -30
fi
if want soak && [ -x "$bundle/mimo_gpu_flowgraph_bench" ]; then
  step "soak: problems with bad ones sprinkled in through the detector flowgraph (CUDA)"
  run "$bundle/mimo_gpu_flowgraph_bench" ${SOAK_ARGS:---backend cuda --detector nway:1 --nr 4 --nt 4 \
    --modulation 16qam --problems 1000000000 --distinct 16800 --source-buffer 16800 --bad-every 997} \
    2>&1 | grep -E "^soak" | tee "$out/soak.txt"
fi
if want flowgraph && [ -x "$bundle/mimo_gpu_flowgraph_bench" ]; then
  # Users' flowgraphs with GNU Radio's default buffers: vector sources -> head ->
  # mimo_detector -> null sink, beside GNU Radio's ceiling for the same streams and
  # the core's own figure, in the same run; the earlier build's block when the
  # bundle holds it (bundle/before/).
  fg="--nr 4 --nt 4 --modulation 16qam --problems ${FG_PROBLEMS:-8000000} --distinct 16800"
  step "flowgraph: CUDA, default buffers"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda $fg \
    --detectors "${FG_DETECTORS:-nway:1,nway:4,mtt,fsd,sfsd,kbest:16,mmse}" \
    --json "$out/flowgraph_cuda.json" 2>&1 | tail -12
  step "flowgraph: the device-resident chain (channel source -> detector -> error counter)"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda --chain device --nr 4 --nt 4 --modulation 16qam \
    --problems 40000000 --detectors nway:1 --json "$out/flowgraph_device.json" 2>&1 | tail -3
  # The coded chain: transport blocks of A = 6120 (K = 6144) -> channel -> detector
  # -> transport-block decoder -> block error counter, on device buffers.
  step "flowgraph: the coded chain on device buffers (K = 6144)"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda --chain coded --nr 4 --nt 4 --modulation 16qam \
    --problems ${CODED_PROBLEMS:-200000000} --detectors nway:1 ${CODED_FG_ARGS:---max-batch 98304 --max-blocks 256} \
    --json "$out/flowgraph_coded.json" 2>&1 | tail -3
  step "flowgraph: CPU backend on this machine's cores"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cpu --nr 4 --nt 4 --modulation 16qam \
    --problems 2000000 --distinct 16800 --detectors nway:1,mtt --json "$out/flowgraph_cpu.json" 2>&1 | tail -4
  if [ -x "$bundle/before/mimo_gpu_flowgraph_bench_before" ]; then
    step "flowgraph: the earlier build's detector block, CUDA, default buffers"
    for d in nway:1 nway:4; do
      run env LD_LIBRARY_PATH="$PWD/$bundle/before:$LD_LIBRARY_PATH" \
        "$bundle/before/mimo_gpu_flowgraph_bench_before" --backend cuda $fg --detector $d \
        --json "$out/flowgraph_before_${d/:/_}.json" 2>&1 | tail -2
    done
  fi
fi
if want ofdm && [ -x "$bundle/mimo_gpu_flowgraph_bench" ]; then
  # NR 100 MHz 4x4 (2 slots x (pilot + 13 data) = 1.035 ms of air), EPA 30 dB,
  # one transport block per frame, default block parameters; LTE 20 MHz 2x2.
  ofdm="--chain ofdm --frames ${OFDM_FRAMES:-4000}"
  nr100="--grid nr100 --nr 4 --nt 4 --slots 2 --data-symbols 13"
  lte20="--grid lte20 --nr 2 --nt 2 --slots 2 --data-symbols 6"
  if [ -n "${BEFORE:-}" ] && [ -x "$BEFORE/mimo_gpu_flowgraph_bench" ]; then
    step "live receiver, the earlier build (its decoder needs max_blocks <= 98 at nr100)"
    run env LD_LIBRARY_PATH="$PWD/$BEFORE/lib:$LD_LIBRARY_PATH" "$BEFORE/mimo_gpu_flowgraph_bench" --backend cuda \
      --chain ofdm --frames ${OFDM_BEFORE_FRAMES:-300} $nr100 --modulation 16qam --detectors nway:1,mmse,fsd,mtt \
      --decoder-max-blocks 64 --json "$out/ofdm_before_nr100.json" 2>&1 | grep -E "real time|error"
    run env LD_LIBRARY_PATH="$PWD/$BEFORE/lib:$LD_LIBRARY_PATH" "$BEFORE/mimo_gpu_flowgraph_bench" --backend cuda \
      --chain ofdm --frames ${OFDM_BEFORE_FRAMES:-300} $lte20 --modulation 16qam --detectors nway:1 \
      --json "$out/ofdm_before_lte20.json" 2>&1 | grep -E "real time|error"
  fi
  step "live receiver: nr100 4x4 16-QAM, CUDA (latency at real-time pacing)"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda $ofdm $nr100 --modulation 16qam \
    --detectors ${OFDM_DETECTORS:-nway:1,mmse,fsd,mtt} --paced-frames ${OFDM_PACED:-1000} \
    --json "$out/ofdm_nr100_16qam.json" 2>&1 | grep -E "ofdm chain|real time|once running|latency|work|buffers|error"
  step "live receiver: nr100 4x4 16-QAM, sources' buffers of 1M samples; the receiver's stages"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda $ofdm $nr100 --modulation 16qam --detectors nway:1,mmse,fsd,mtt \
    --source-buffer 1048576 --json "$out/ofdm_nr100_16qam_1m.json" 2>&1 | grep -E "real time|once running|error"
  for st in rx detector; do
    run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda $ofdm $nr100 --modulation 16qam --detectors nway:1 \
      --stage $st --json "$out/ofdm_nr100_stage_$st.json" 2>&1 | grep -E "real time|work|ofdm_rx per|error"
  done
  step "live receiver: nr100 4x4 64-QAM and 256-QAM"
  for m in 64qam 256qam; do
    run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda $ofdm $nr100 --modulation $m --detectors nway:1,mmse \
      --source-buffer 1048576 --json "$out/ofdm_nr100_$m.json" 2>&1 | grep -E "real time|once running|error"
  done
  step "live receiver: the other 4x4 families"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda --chain ofdm --frames ${OFDM_OTHER_FRAMES:-600} $nr100 \
    --modulation 16qam --detectors ${OFDM_OTHERS:-nway:2,nway:4,ot,sfsd,kbest:16,mmse_cg:iterations=4} --source-buffer 1048576 \
    --json "$out/ofdm_nr100_others.json" 2>&1 | grep -E "real time|error"
  step "live receiver: lte20 2x2 16-QAM"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda $ofdm $lte20 --modulation 16qam --detectors nway:1,mmse \
    --paced-frames 500 --json "$out/ofdm_lte20.json" 2>&1 | grep -E "real time|latency|error"
  step "transmit side on CUDA and the loopback (tb_source -> ofdm_tx -> ofdm_channel_model -> the receiver)"
  for st in tx tx-channel; do
    run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda --chain ofdm --frames 3000 $nr100 --modulation 16qam \
      --stage $st --json "$out/ofdm_nr100_$st.json" 2>&1 | grep -E "real time|error"
  done
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda $ofdm $nr100 --modulation 16qam \
    --detectors ${OFDM_DETECTORS:-nway:1,mmse,fsd,mtt} --stage loopback \
    --json "$out/ofdm_nr100_loopback.json" 2>&1 | grep -E "real time|once running|work|error"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cuda --chain ofdm --frames 6000 $lte20 --modulation 16qam \
    --detectors nway:1,mmse --stage loopback --json "$out/ofdm_lte20_loopback.json" 2>&1 | grep -E "real time|once running|error"
  step "transmit side (nr100 4x4, lte20 2x2), on this machine's cores"
  for st in tx tx-channel; do
    run "$bundle/mimo_gpu_flowgraph_bench" --backend cpu --chain ofdm --frames 200 $nr100 --modulation 16qam \
      --stage $st 2>&1 | grep -E "real time|error"
    run "$bundle/mimo_gpu_flowgraph_bench" --backend cpu --chain ofdm --frames 1000 $lte20 --modulation 16qam \
      --stage $st 2>&1 | grep -E "real time|error"
  done
  step "live receiver: CPU backend on this machine's cores (lte20 2x2, nr100 4x4)"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cpu --chain ofdm --frames 300 $lte20 --modulation 16qam \
    --detectors mmse,nway:1 --json "$out/ofdm_cpu_lte20.json" 2>&1 | grep -E "real time|work|error"
  run "$bundle/mimo_gpu_flowgraph_bench" --backend cpu --chain ofdm --frames 40 $nr100 --modulation 16qam \
    --detectors mmse --json "$out/ofdm_cpu_nr100.json" 2>&1 | grep -E "real time|error"
fi
echo
if [ -s "$failures" ]; then echo "device_check: SOME STEPS FAILED"; cat "$failures"; exit 1; fi
echo "device_check: ALL OK"
