#!/usr/bin/env bash
# gr-mimo_gpu quick start on Debian 12 (or Ubuntu 24.04), from a fresh clone.
#
#   scripts/quickstart.sh run    install dependencies, build, run the main job:
#                                a BER-vs-SNR simulation (GNU Radio flowgraphs) and its plot,
#                                then the coded link (LTE turbo code): coded BER and BLER
#   scripts/quickstart.sh test   install dependencies, build, run every test (ctest), then
#                                install into a staging prefix and check the installed module
#
# Environment: BUILD_DIR (default ./build), CMAKE_ARGS (extra configure options, e.g.
# "-DENABLE_CUDA=OFF" or "-DCMAKE_CUDA_ARCHITECTURES=90"), SKIP_APT=1 (dependencies
# already installed), PROBLEMS (problems per SNR point for `run`, default 20000),
# BLOCKS (transport blocks per SNR point of the coded run, default 170).
# CUDA is used when /usr/local/cuda/bin/nvcc exists; without a GPU everything runs on the CPU.
set -euo pipefail

mode=${1:-}
if [[ "$mode" != run && "$mode" != test ]]; then
    echo "usage: $0 run|test" >&2
    exit 2
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=$(nproc)
python=/usr/bin/python3 # GNU Radio's Python; a python3 first on PATH (pyenv, venv) cannot import gnuradio

packages=(gnuradio-dev gnuradio libvolk2-dev libfftw3-dev pybind11-dev python3-numpy python3-matplotlib
          libgtest-dev cmake g++ make pkg-config)
# The style test (scripts/check_format.sh) formats with clang-format 14, Debian 12's.
if [[ "$mode" == test ]]; then
    packages+=(clang-format-14)
fi

step() { printf '\n==== %s\n' "$*"; }

install_dependencies() {
    if [[ "${SKIP_APT:-0}" == 1 ]]; then
        return
    fi
    if dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | grep -vq 'install ok installed' ||
        [[ $(dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | wc -l) -ne ${#packages[@]} ]]; then
        step "installing ${packages[*]}"
        local sudo=()
        if [[ $(id -u) -ne 0 ]]; then
            sudo=(sudo)
        fi
        "${sudo[@]}" apt-get update
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"
    else
        step "dependencies already installed"
    fi
}

configure_and_build() {
    step "configuring $build"
    # shellcheck disable=SC2086 # CMAKE_ARGS is a list of options
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPYTHON_EXECUTABLE=$python ${CMAKE_ARGS:-}
    step "building with $jobs jobs"
    cmake --build "$build" -j"$jobs"
}

run_main_job() {
    local out=$build/results
    mkdir -p "$out"
    step "simulating 4x4 16-QAM: N-way N = 1..4, MTT, OT, FSD, SFSD, K-best 16 and ML (results in $out)"
    "$build/apps/mimo_gpu_simulate" --nr 4 --nt 4 --modulation 16qam --snr 0:24:2 \
        --problems "${PROBLEMS:-20000}" --json "$out/ber_4x4_16qam.json"
    "$python" "$build/apps/mimo_gpu_plot.py" "$out/ber_4x4_16qam.json" -o "$out/ber_4x4_16qam.png"
    step "coded link: 4x4 16-QAM, LTE turbo code A = 1000 bits at rate 1/2, N-way N = 1..4, MTT, OT, FSD, SFSD, K-best 16 and ML (results in $out)"
    # 0.5 dB steps where the BLER curves fall (4..10 dB; all reach 0.1 by 9 dB), 170 blocks
    # per point: the run time of 1 dB steps over 4..14 dB with 200 blocks.
    "$build/apps/mimo_gpu_simulate" --nr 4 --nt 4 --modulation 16qam --snr 4:10:0.5 --coded \
        --tb-size 1000 --code-rate 0.5 --blocks "${BLOCKS:-170}" --json "$out/coded_4x4_16qam.json"
    "$python" "$build/apps/mimo_gpu_plot.py" "$out/coded_4x4_16qam.json" -o "$out/coded_4x4_16qam.png"
}

# ctest shows a skipped test as "***Skipped" alone: the reasons, one line each
# with its count (e.g. every CUDA test on a machine without a GPU).
print_skip_reasons() {
    local log=$build/Testing/Temporary/LastTest.log
    [[ -f "$log" ]] || return 0
    awk '/^[0-9]+\/[0-9]+ Test: /{name=$3}
         /: Skipped$/{getline reason; sub(/^ +/, "", reason); n[reason]++; if (!(reason in eg)) eg[reason]=name}
         END{for (r in n) printf "  %d test(s) skipped: %s (e.g. %s)\n", n[r], r, eg[r]}' "$log"
}

run_tests() {
    step "ctest"
    local rc=0
    ctest --test-dir "$build" --output-on-failure -j"$jobs" || rc=$?
    print_skip_reasons
    [[ $rc -eq 0 ]] || exit $rc

    local stage=$build/stage
    step "installing into the staging prefix $stage"
    rm -rf "$stage"
    cmake --install "$build" --prefix "$stage"

    step "checking the installed module"
    local pydir libdirs
    pydir=$(dirname "$(dirname "$(dirname "$(find "$stage" -path '*/gnuradio/mimo_gpu/__init__.py' | head -n1)")")")
    libdirs=$(find "$stage" -name 'lib*mimo_gpu*.so*' -printf '%h\n' | sort -u | paste -sd:)
    if [[ -z "$pydir" || "$pydir" == . ]]; then
        echo "no gnuradio/mimo_gpu Python package under $stage" >&2
        exit 1
    fi
    echo "Python package under $pydir; libraries in $libdirs"
    (
        cd /
        PYTHONPATH=$pydir LD_LIBRARY_PATH=$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$python" -c "
import os, sys
from gnuradio import mimo_gpu
assert os.path.realpath(mimo_gpu.__file__).startswith(os.path.realpath('$stage')), mimo_gpu.__file__
for name in ('mimo_channel', 'qr_decomposition', 'nway_detector', 'mimo_detector', 'ber_counter'):
    assert hasattr(mimo_gpu, name), name
for family in ('nway', 'ml', 'mtt', 'ot'):
    assert family in mimo_gpu.mimo_detector.algorithms(), family
print('from gnuradio import mimo_gpu: OK,', mimo_gpu.__file__)
"
    )
    local grc=$stage/share/gnuradio/grc/blocks
    local n
    n=$(find "$grc" -name 'mimo_gpu_*.block.yml' 2>/dev/null | wc -l)
    if [[ "$n" -lt 9 || ! -f "$grc/mimo_gpu_mimo_detector.block.yml" ]]; then
        echo "expected the GRC block files in $grc, found $n" >&2
        exit 1
    fi
    echo "GRC: $n block files in $grc"
    local flowgraph=$build/stage-check
    rm -rf "$flowgraph"
    mkdir -p "$flowgraph"
    GRC_BLOCKS_PATH=$grc grcc -o "$flowgraph" "$root/examples/mimo_gpu_loopback.grc"
    PYTHONPATH=$pydir LD_LIBRARY_PATH=$libdirs "$python" "$flowgraph/mimo_gpu_loopback.py" \
        --snr-db 40 --problems 500 | tee "$flowgraph/output.txt"
    grep -q "0 errors in 8000 bits" "$flowgraph/output.txt"
    echo "examples/mimo_gpu_loopback.grc: compiled with the installed GRC files, ran with the installed module"
    for program in mimo_gpu_simulate mimo_gpu_detect_file mimo_gpu_plot.py mimo_gpu_plot_front_end.py; do
        if [[ ! -x "$stage/bin/$program" ]]; then
            echo "$program was not installed to $stage/bin" >&2
            exit 1
        fi
    done
    for script in mimo_gpu_plot.py mimo_gpu_plot_front_end.py; do # GNU Radio's Python, not PATH's
        if head -1 "$stage/bin/$script" | grep -q "env python3"; then
            echo "$script runs whichever python3 comes first on PATH" >&2
            exit 1
        fi
    done
    LD_LIBRARY_PATH=$libdirs "$stage/bin/mimo_gpu_detect_file" --help >/dev/null
    echo "programs installed in $stage/bin"
    step "all tests passed"
}

install_dependencies
configure_and_build
if [[ "$mode" == run ]]; then
    run_main_job
else
    run_tests
fi
