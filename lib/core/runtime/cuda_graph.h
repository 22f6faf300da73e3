// A launch sequence replayed as one CUDA graph. In a flowgraph the blocks'
// threads share one CUDA context, whose driver takes their calls one at a
// time: at LTE 20 MHz 2x2 the receiver, detector and decoder made ~65 calls a
// frame (launches, copies, memsets) at 3-8 us each on the H100 host, more
// than the GPU's kernels took. A sequence recorded once and launched as a
// graph is one call.
#pragma once

#include "cuda_check.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace mimo_gpu {
namespace detail {

/// One recorded launch sequence: replayed while its key (everything its
/// launches depend on: pointers, sizes, flags) stays the same; recorded again,
/// and the executable graph updated in place, when the key changes. A stream
/// that is already being captured (a caller recording a larger graph) gets the
/// launches themselves.
class replayed_launches
{
public:
    replayed_launches() = default;
    ~replayed_launches()
    {
        if (m_exec)
            cudaGraphExecDestroy(m_exec); // an in-flight launch completes first
    }
    replayed_launches(const replayed_launches&) = delete;
    replayed_launches& operator=(const replayed_launches&) = delete;

    /// Enqueues on s what enqueue() launches on s (it must launch on s alone,
    /// and make no call that a stream capture forbids: no allocation, no
    /// synchronisation).
    template <class Enqueue>
    void run(cudaStream_t s, const std::vector<uint64_t>& key, Enqueue&& enqueue)
    {
        cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        MIMO_CUDA_CHECK(cudaStreamIsCapturing(s, &capturing));
        if (capturing != cudaStreamCaptureStatusNone) {
            enqueue();
            return;
        }
        if (!m_exec || key != m_key) {
            m_key.clear(); // until the recording is complete
            record(s, enqueue);
            m_key = key;
        }
        MIMO_CUDA_CHECK(cudaGraphLaunch(m_exec, s));
    }

    /// Graphs recorded (instantiated or updated): a test's count of replays.
    uint64_t recordings() const { return m_recordings; }

private:
    template <class Enqueue>
    void record(cudaStream_t s, Enqueue& enqueue)
    {
        // Thread-local: the other blocks' threads go on calling the driver.
        MIMO_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        cudaGraph_t graph = nullptr;
        try {
            enqueue();
        } catch (...) {
            cudaStreamEndCapture(s, &graph); // the stream must leave capture mode
            if (graph)
                cudaGraphDestroy(graph);
            throw;
        }
        MIMO_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
        struct graph_guard {
            cudaGraph_t g;
            ~graph_guard() { cudaGraphDestroy(g); }
        } guard{ graph };
        ++m_recordings;
        if (m_exec) {
            cudaGraphExecUpdateResultInfo info{};
            if (cudaGraphExecUpdate(m_exec, graph, &info) == cudaSuccess)
                return;
            cudaGetLastError(); // the failed update's error is not the next launch's
            cudaGraphExecDestroy(m_exec);
            m_exec = nullptr;
        }
        MIMO_CUDA_CHECK(cudaGraphInstantiate(&m_exec, graph, 0));
    }

    cudaGraphExec_t m_exec = nullptr;
    std::vector<uint64_t> m_key;
    uint64_t m_recordings = 0;
};

/// A key entry from a pointer.
inline uint64_t key_of(const void* p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); }

} // namespace detail
} // namespace mimo_gpu
