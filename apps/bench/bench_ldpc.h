// mimo_gpu_bench --ldpc: the layered LDPC decoder's throughput in Gbit/s of
// decoded information bits (K per code block) for 38.212's largest codes (BG1
// Zc = 384 at rates 1/3, 1/2 and 8/9, BG2 Zc = 384 at rate 1/5), 5 and 10
// layered iterations without early termination, batches of code blocks:
// kernel (device LLRs to device bits, float and int8, CUDA events), end to end
// (pinned host LLRs to host bits) beside its PCIe floor, and the CPU engine.
#pragma once

#include "json_writer.h"

#include <mimo_gpu/backend.h>

#include <string>
#include <vector>

namespace mimo_gpu_apps {

struct ldpc_bench_options {
    mimo_gpu::backend backend = mimo_gpu::backend::cpu;
    int trials = 7, reps = 5;
    uint64_t seed = 1;
    std::vector<size_t> batches{ 32, 128, 512, 1024 };
    std::vector<int> iterations{ 5, 10 };
    double h2d_bandwidth = 0; ///< bytes/s, for the end-to-end floor
};

struct ldpc_bench_row {
    int base_graph = 1, Zc = 384, K = 0, E = 0, layers = 0, iterations = 0;
    std::string rate;  ///< "1/2" ...
    std::string input; ///< "float" or "int8"
    std::string path;  ///< "kernel" (device to device), "end to end" (pinned host), "cpu"
    size_t count = 0;
    double ms = -1;       ///< per call, median
    double floor_ms = -1; ///< the input bytes over the PCIe bandwidth (end to end)
    double Gbps() const { return ms > 0 ? double(count) * K / (ms * 1e-3) / 1e9 : -1; }
};

std::vector<ldpc_bench_row> bench_ldpc(const ldpc_bench_options& options);
void print_ldpc_table(const std::vector<ldpc_bench_row>& rows, const std::string& device);
void write_ldpc_json(json_writer& j, const std::vector<ldpc_bench_row>& rows);

} // namespace mimo_gpu_apps
