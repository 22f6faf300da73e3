// mimo_gpu_bench --mmse-paper: the massive-MIMO soft MMSE detector on the
// paper's Tables I and II workloads (N_scr = 128 subcarriers, 16-QAM; 128x16
// with N_sym = 8..64, 256x32 with N_sym = 2..16), kernel alone (K) and with
// its copies (K+M) on one stream, then frames pipelined over in-flight slots
// on one or more GPUs, hand kernels beside cuBLAS/cuSOLVER, and NR-sized
// frames (3276 subcarriers x 14 symbols), each beside the PCIe floor.
#pragma once

#include "json_writer.h"

#include <mimo_gpu/backend.h>

#include <string>
#include <vector>

namespace mimo_gpu_apps {

struct mmse_bench_options {
    mimo_gpu::backend backend = mimo_gpu::backend::cpu;
    int trials = 25;
    uint64_t seed = 1;
    double h2d_bandwidth = 0, d2h_bandwidth = 0; ///< pinned, bytes/s
    std::vector<int> devices{ 0 }; ///< the pipeline's device list for the multi-GPU rows
    /// Pipeline run length per repeat, and repeats per row (the median is
    /// reported with the spread): 0.3 s once gave two GPUs 1.55-2.06x one GPU
    /// where 1 s runs gave 1.87-1.97x.
    double seconds_per_point = 1.0;
    int repeats = 3;
    bool nr_frames = true; ///< also the NR-sized frames
};

struct mmse_row {
    std::string table;          ///< "single_stream", "pipelined", "nr_frames"
    std::string mode;           ///< "chol" or "cg@I"
    std::string implementation; ///< "hand" or "cublas"
    int B = 0, U = 0, subcarriers = 0, symbols = 0;
    int slots = 0;   ///< in-flight slots per worker
    int workers = 1; ///< entries of the device list (a GPU listed twice: two workers)
    int gpus = 1;    ///< distinct GPUs
    double bits = 0, bytes_in = 0, bytes_out = 0;
    double kernel_ms = -1; ///< K: device memory to device memory, per frame
    double frame_ms =
        -1; ///< K+M (single stream) or 1 / throughput (pipelined), per frame
    double frame_spread =
        -1; ///< pipelined: (max - min) / median of frame_ms over the repeats
    double latency_ms = -1; ///< median submit-to-LLRs time of a frame (pipelined)
    double floor_ms = -1;   ///< max(in / h2d, out / d2h)
    double paper_k_mbps = -1, paper_km_mbps = -1, paper_latency_ms = -1; ///< GTX 980 Ti
};

std::vector<mmse_row> bench_mmse_paper(const mmse_bench_options& options);
void print_mmse_tables(const std::vector<mmse_row>& rows, const std::string& device);
void write_mmse_json(json_writer& j, const std::vector<mmse_row>& rows);

} // namespace mimo_gpu_apps
