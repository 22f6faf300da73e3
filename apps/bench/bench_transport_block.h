// mimo_gpu_bench --tb-device: transport blocks (A = 6120, one code block of
// K = 6144; rate 1/3 and ~1/2) decoded from device LLRs to device bits by
// transport_block_decoder::decode_device, float and int8 input, timed with CUDA
// events, beside decode() from pinned host LLRs to host bits. Mbit/s of
// information bits.
#pragma once

#include "json_writer.h"

#include <mimo_gpu/backend.h>

#include <string>
#include <vector>

namespace mimo_gpu_apps {

struct tb_device_options {
    mimo_gpu::backend backend = mimo_gpu::backend::cpu;
    int trials = 25;
    uint64_t seed = 1;
    size_t count = 256;        ///< transport blocks per call
    float int8_scale = 0.125f; ///< LLR = scale * value of the int8 input
    double h2d_bandwidth = 0;  ///< bytes/s, for the end-to-end floor
};

struct tb_device_row {
    std::string input; ///< "float" or "int8"
    std::string path;  ///< "device to device" or "host to host"
    std::string llrs; ///< "awgn" (Eb/N0 above the threshold) or "noise" (every iteration)
    int A = 0, G = 0, Qm = 0, C = 0, K = 0;
    double ebn0_db = 0;
    size_t count = 0;
    double ms = -1;             ///< per call, median
    double floor_ms = -1;       ///< bytes that must move over their path's bandwidth
    double mean_iterations = 0; ///< of the transport blocks' most iterations
    int crc_ok = 0;             ///< transport blocks of the timed input that passed
};

std::vector<tb_device_row> bench_transport_blocks(const tb_device_options& options);
void print_transport_block_table(const std::vector<tb_device_row>& rows,
                                 const std::string& device,
                                 const tb_device_options& options);
void write_transport_block_json(json_writer& j,
                                const std::vector<tb_device_row>& rows,
                                const tb_device_options& options);

} // namespace mimo_gpu_apps
