// Frames through a detector with copies and kernels of consecutive frames
// overlapped, on one or more GPUs (docs/detectors.md, "Pipelined frames").
//
// A frame is C channels with S symbols each (the detector interface's batch).
// Each GPU gets a worker thread and `slots_per_device` in-flight slots (a
// stream, a detector, device buffers, pinned staging): frame f goes to device
// f mod (number of devices), on that device to the next slot in turn, and its
// copy in, detection and copy out run while other slots' frames run theirs.
// Results are collected in submission order. Any detector family with a
// device path (capabilities().device_path) is pipelined on CUDA; a family
// without one (SUMIS) and the CPU backend run frames one after another through
// the detector's host path on one worker thread, so a caller (the GNU Radio
// detector block) can use one pipeline for every family.
#pragma once

#include <mimo_gpu/detector.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mimo_gpu {

struct pipeline_config {
    std::string detector; ///< registered family name ("mmse", "mmse_cg", ...)
    detector_config config;
    /// CUDA device ordinals, one worker each; a device may be listed more than
    /// once (two workers sharing it). Empty: device 0.
    std::vector<int> devices;
    int slots_per_device = 4; ///< frames in flight per worker (1..64)
    size_t max_channels = 0;  ///< largest C of a frame (> 0)
    int symbols_per_channel = 1;
    /// cpu: one worker detects frames one after another on the CPU (the same
    /// interface, for machines without a GPU); automatic: CUDA if usable.
    backend requested = backend::automatic;
};

struct frame_result {
    uint64_t frame = 0;      ///< submission number, from 0
    int device = -1;         ///< CUDA ordinal that detected it (-1: CPU)
    double latency_ms = 0;   ///< submit() to its LLRs in the caller's memory
    detection_report report; ///< bad problems (erased: LLRs 0)
};

class detector_pipeline
{
public:
    /// Throws std::invalid_argument for an unknown device ordinal, a bad
    /// detector configuration or slot count, std::runtime_error when CUDA is
    /// demanded and unusable.
    explicit detector_pipeline(const pipeline_config& config);
    ~detector_pipeline(); // waits for every frame submitted
    detector_pipeline(const detector_pipeline&) = delete;
    detector_pipeline& operator=(const detector_pipeline&) = delete;

    /// Queues a frame of `channels` channels (1..max_channels), S symbols each,
    /// and returns its number. H, y and llr are host memory that must stay
    /// valid (and llr unread) until the frame is collected. Page-locked memory
    /// (cudaMallocHost, cudaHostRegister) is copied by DMA in place; other
    /// memory goes through the slot's pinned staging buffers (a host copy).
    uint64_t
    submit(const cfloat* H, const cfloat* y, size_t channels, float n0, float* llr);

    /// Waits for the oldest frame not yet collected (std::logic_error if none)
    /// and returns its result; rethrows an error the frame's worker met.
    frame_result collect();

    size_t pending() const; ///< submitted and not yet collected
    size_t slots() const;   ///< frames in flight at most (workers x slots)
    backend active_backend() const;
    const pipeline_config& config() const;

private:
    struct impl;
    std::unique_ptr<impl> m_impl;
};

} // namespace mimo_gpu
