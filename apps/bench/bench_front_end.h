// mimo_gpu_bench --front-end: the OFDM receiver front end (CFO correction, CP
// removal, FFT, pilot LS estimation, interpolation, noise estimate, H and y
// out) in resource elements per second, beside the NR 100 MHz 4x4 requirement
// (3276 subcarriers x 28 symbols per ms = 91.7 M RE/s), on the CPU and on CUDA
// (device to device, and host to host), with the byte floors.
#pragma once

#include "json_writer.h"

#include <mimo_gpu/backend.h>

#include <string>
#include <vector>

namespace mimo_gpu_apps {

struct front_end_row {
    std::string preset, backend,
        path; ///< path: "sync" (CPU), "host to host", "device to device"
    int nr = 0, nt = 0, frames = 0; ///< frames per call
    double frame_air_ms = 0;        ///< air time of one frame
    size_t elements_per_frame =
        0; ///< resource elements (used subcarriers x OFDM symbols)
    double ms_per_frame = -1;
    double floor_ms_per_frame = -1; ///< bytes over the path's bandwidth
};

std::vector<front_end_row>
bench_front_end(mimo_gpu::backend b, int trials, uint64_t seed, double h2d_bytes_per_s);
void print_front_end_table(const std::vector<front_end_row>& rows,
                           const std::string& device);
void write_front_end_json(json_writer& j, const std::vector<front_end_row>& rows);

} // namespace mimo_gpu_apps
