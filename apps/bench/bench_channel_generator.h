// mimo_gpu_bench --channel-generator: the device-resident simulation source
// (channel_generator::generate_device) and the bit-error counter
// (count_bit_errors_device) in problems per second, beside the 100 M problems/s
// a GPU source -> detector -> counter chain needs, and their byte floors
// (bytes each must move over the measured device memory bandwidth).
#pragma once

#include "json_writer.h"

#include <mimo_gpu/backend.h>

#include <string>
#include <vector>

namespace mimo_gpu_apps {

struct channel_generator_row {
    std::string operation, backend; ///< e.g. "generate_device", "cuda"
    int nr = 0, nt = 0, symbols_per_channel = 1;
    std::string modulation;
    size_t problems = 0;          ///< per call
    double bytes_per_problem = 0; ///< what the call must move (written or read)
    double ms = -1;       ///< per call: stream launches (CUDA) or host clock (CPU)
    double graph_ms = -1; ///< per call, replayed from a CUDA graph
    double floor_ms = -1; ///< bytes over the device memory bandwidth
};

/// Device copy bandwidth (bytes read + written per second) is measured when
/// `b` is CUDA and becomes the floor's rate.
std::vector<channel_generator_row>
bench_channel_generator(mimo_gpu::backend b, int trials, int reps, uint64_t seed);
void print_channel_generator_table(const std::vector<channel_generator_row>& rows,
                                   const std::string& device);
void write_channel_generator_json(json_writer& j,
                                  const std::vector<channel_generator_row>& rows);

} // namespace mimo_gpu_apps
