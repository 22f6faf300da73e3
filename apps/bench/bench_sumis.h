// mimo_gpu_bench --sumis-paper: SUMIS (n_s = 3) on the parallel SUMIS paper's
// Tables 2-3 workloads (n_T = n_R = 8, 24, 48, 100, 200; 16- to 1024-QAM): time
// per received vector alone and in a batch of 1024 (16 channels x 64 vectors),
// beside the paper's Tesla K40 and 24-core OpenMP times.
#pragma once

#include "json_writer.h"

#include <mimo_gpu/backend.h>

#include <string>
#include <vector>

namespace mimo_gpu_apps {

struct sumis_row {
    int nt = 0, M = 0, ns = 3;
    double single_ms = -1; ///< one vector, detect() host to host
    double batch_ms = -1;  ///< a batch of `vectors`, host to host
    int vectors = 0;
    double paper_gpu_ms = -1, paper_openmp_ms = -1; ///< per vector
};

std::vector<sumis_row>
bench_sumis_paper(mimo_gpu::backend b, int trials, uint64_t seed, int max_nt);
void print_sumis_table(const std::vector<sumis_row>& rows, const std::string& device);
void write_sumis_json(json_writer& j, const std::vector<sumis_row>& rows);

} // namespace mimo_gpu_apps
