// mimo_gpu_bench's detector tables: any registered detector family timed by name
// through the detector interface (make_detector, detect, detect_device), for a
// list of workloads (shape, modulation, problem count); by default the MTT
// thesis' Tables 4.1 and 4.2 workloads with its C1060 figures beside ours.
#pragma once

#include "json_writer.h"

#include <mimo_gpu/backend.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mimo_gpu_apps {

/// One shape and modulation, and how many problems (one H each) a batch has.
struct detector_workload {
    mimo_gpu::mimo_shape shape;
    mimo_gpu::modulation mod = mimo_gpu::modulation::qpsk;
    size_t problems = 0;
};

/// The thesis' Tables 4.1 and 4.2 (8 streams of 16384 symbols for 2x2, of 8192 for
/// 4x4; QPSK, 16-QAM, 64-QAM). problems > 0 replaces the thesis' counts.
std::vector<detector_workload> thesis_workloads(size_t problems = 0);

/// "2x2:qpsk:131072,4x4:64qam:65536"; the count may be left out ("4x4:16qam": the
/// thesis' count for 2x2 and 4x4, else 65536; or `problems` when > 0), and so may
/// the modulation ("2x2": QPSK, 16-QAM and 64-QAM). Throws usage_error.
std::vector<detector_workload> parse_workloads(const std::string& text,
                                               size_t problems = 0);

/// parse_detector_list, and each given parameter value checked against its
/// family's range (limits that depend on the shape are checked per workload,
/// where a refusal skips that row). Throws std::invalid_argument.
std::vector<mimo_gpu::detector_spec> parse_bench_detectors(const std::string& text);

struct detector_bench_options {
    mimo_gpu::backend backend = mimo_gpu::backend::cpu;
    int trials = 25;   ///< timed trials per measurement (median)
    int max_reps = 50; ///< kernel launches per timed trial, at most
    uint64_t seed = 1;
    double h2d_bandwidth = 0, d2h_bandwidth = 0; ///< pinned, bytes/s (CUDA only)
    /// Families whose LLRs are exact max-log (an exhaustive search) are skipped when M^nt
    /// exceeds this.
    double max_exhaustive = 65536;
};

/// A published figure for a (family, shape, modulation) workload.
struct reference_figure {
    const char* family;
    int nr, nt;
    mimo_gpu::modulation mod;
    size_t problems;
    double kernel_ms, kernel_mbps, async_ms, async_mbps;
    const char* source = "MTT thesis, Tables 4.1-4.2";
    const char* device = "Nvidia Tesla C1060";
    bool exact_problems = false; ///< applies only to a workload of exactly `problems`
};

/// The FSD paper's Tables 1 and 2 workloads: 4x4, QPSK, 16-QAM and 64-QAM, Nc =
/// 150, 300, 600, 900, 1200 subcarriers of a 7-symbol LTE slot (Nc * 7 problems).
std::vector<detector_workload> fsd_paper_workloads();

/// One detector on one workload. Times in ms, -1 where not measured.
struct detector_row {
    mimo_gpu::detector_spec spec;
    std::string label;
    detector_workload w;
    size_t bits = 0; ///< problems * nt * log2(M)
    double bytes_in = 0, bytes_out = 0;
    double kernel_ms = -1; ///< detect_device, device memory to device memory
    bool kernel_graph =
        false; ///< timed as replays of a CUDA graph (else plain stream launches)
    int kernel_reps = 0;
    double end_to_end_pinned_ms = -1, end_to_end_pageable_ms = -1;
    double floor_overlapped_ms = -1,
           floor_serial_ms = -1; ///< max(in, out) and in + out over the pinned bandwidths
    const reference_figure* thesis =
        nullptr;         ///< the thesis' figure for this workload, if any
    std::string skipped; ///< why the row was not measured ("" when it was)
    std::string note;    ///< e.g. "no device path"
    double scratch_per_problem =
        -1; ///< peak scratch bytes per problem (detector::scratch_bytes)
    size_t scratch_bytes = 0; ///< peak scratch of a call of all the problems
};

/// Times each spec on each workload (spec-major order). Refusals and skips become rows
/// with `skipped` set.
std::vector<detector_row>
bench_detectors(const std::vector<mimo_gpu::detector_spec>& specs,
                const std::vector<detector_workload>& workloads,
                const detector_bench_options& options);

/// The table, its notes and the thesis goals (when any row has a thesis figure).
void print_detector_table(const std::string& title,
                          const std::vector<detector_row>& rows,
                          const detector_bench_options& options);

/// Appends the "detectors" array (one object per row, `table` naming the table).
void write_detector_json(json_writer& j,
                         const std::string& table,
                         const std::vector<detector_row>& rows);

} // namespace mimo_gpu_apps
