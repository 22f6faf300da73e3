// The device side of the fault flags (fault_flags.h): per-problem flag words,
// the summary the kernels append to, and its collection. One object per
// engine; its batches run on one stream at a time (the detector's rule).
#pragma once

#include "cuda_buffers.h"
#include "fault_flags.h"

#include <cuda_runtime_api.h>

namespace mimo_gpu {
namespace detail {

class device_faults
{
public:
    device_faults();

    /// The sink a batch of `batch` problems reports into, on `stream`: the
    /// flags of a new generation (no clearing needed, see fault_flags.h).
    fault_sink sink(size_t batch, cudaStream_t stream);

    /// Overwrites, on the device, the `per_problem` outputs of every flagged
    /// problem of the last sink's batch with `fill` (a kernel that returns at
    /// once when nothing was flagged since the last collection).
    void erase(float* d_out, size_t per_problem, float fill, cudaStream_t stream);

    /// After a call that threw between sink() and its end: the cycle's reports
    /// are dropped (waits for `stream`, ignoring its errors), so the next call's
    /// report counts only its own problems. For a host call, whose cycle is its own.
    void abandon(cudaStream_t stream);
    /// The same for a device call that threw: only its own batch is forgotten
    /// (the cycle's earlier calls are still reported).
    void forget_last_batch();

    /// Waits for `stream` and returns the report of everything since the last
    /// collection (problem indices counted across those batches, every erased
    /// problem listed), clearing it. `flags_out`, if given, receives the flags of
    /// those problems when more were erased than the summary holds.
    detection_report collect(cudaStream_t stream,
                             std::vector<fault_word>* flags_out = nullptr);

private:
    device_array<fault_word> m_flags; // the cycle's batches one after the other
    device_array<fault_summary> m_summary;
    pinned_buffer<fault_summary> m_host;
    fault_word m_generation =
        0;                // of this collection cycle; words of older ones are clean
    size_t m_pending = 0; // problems since the last collection
    fault_word* m_last_flags = nullptr; // the last sink's words
    size_t m_last_batch = 0;            // problems of the last sink
};

} // namespace detail
} // namespace mimo_gpu
