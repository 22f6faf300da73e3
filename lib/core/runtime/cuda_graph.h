// Launch sequences replayed as CUDA graphs. In a flowgraph the blocks'
// threads share one CUDA context and call its driver one after another: at
// LTE 20 MHz 2x2 the receiver, detector and decoder made ~65 calls a frame
// (launches, copies, memsets; 3-8 us each under the CUPTI recorder on the
// H100 host), more host time than the GPU's kernels took. On that host 15
// small launches and a synchronisation took 63 us, the same sequence replayed
// as a graph 24 us, and recaptured every call (cudaGraphExecUpdate) 51 us.
#pragma once

#include "cuda_check.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace mimo_gpu {
namespace detail {

/// Whether launch sequences on s may run as graphs: only on non-blocking
/// streams (no capture may use the legacy default stream, and while a
/// blocking stream is captured every thread's use of the legacy stream fails),
/// and not where MIMO_GPU_CUDA_GRAPHS=0 asks for plain launches (a
/// comparison, or a driver whose graphs misbehave).
inline bool graphs_on(cudaStream_t s)
{
    static const bool enabled = [] {
        const char* v = std::getenv("MIMO_GPU_CUDA_GRAPHS");
        return !(v && std::string(v) == "0");
    }();
    if (!enabled || s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread)
        return false;
    unsigned int flags = 0;
    if (cudaStreamGetFlags(s, &flags) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return (flags & cudaStreamNonBlocking) != 0;
}

/// Starts capturing s; false (the error cleared) where the driver refuses.
inline bool begin_capture(cudaStream_t s)
{
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess)
        return true;
    cudaGetLastError();
    return false;
}

/// What enqueue() launches on s, captured as a graph; null (nothing launched,
/// the error cleared, s out of capture mode) where the driver refuses or
/// enqueue() throws.
template <class Enqueue>
cudaGraph_t capture(cudaStream_t s, Enqueue& enqueue)
{
    // Thread-local: the other blocks' threads go on calling the driver.
    if (!begin_capture(s))
        return nullptr;
    bool launched = true;
    try {
        enqueue();
    } catch (...) {
        launched = false;
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(s, &graph);
    if (launched && ended == cudaSuccess && graph)
        return graph;
    if (graph)
        cudaGraphDestroy(graph);
    cudaGetLastError(); // the refused capture's error is not the next call's
    return nullptr;
}

/// Launch sequences recorded as CUDA graphs and replayed, one graph per key.
/// The key must hold everything the sequence's launches take as arguments
/// that can change between calls (pointers, sizes, flags), and must change
/// whenever a buffer the sequence names is reallocated (allocation_epoch(), or
/// the buffers' pointers), so that a replay is exactly the launches. The first
/// call of a key runs the launches directly (buffers they grow are allocated
/// then: a capture may not allocate); the second records them, and later ones
/// replay the graph. enqueue() must launch on s alone and may run twice in one
/// call (a capture the driver refuses, such as one with a synchronisation, is
/// run again directly, and its key then always is): what it does on the host
/// must be repeatable. A stream being captured by a caller, a blocking or
/// default stream, and MIMO_GPU_CUDA_GRAPHS=0 get the launches themselves.
class replayed_launches
{
public:
    replayed_launches() = default;
    ~replayed_launches()
    {
        for (auto& e : m_entries)
            if (e.exec)
                cudaGraphExecDestroy(e.exec); // an in-flight launch completes first
    }
    replayed_launches(const replayed_launches&) = delete;
    replayed_launches& operator=(const replayed_launches&) = delete;

    template <class Enqueue>
    void run(cudaStream_t s, const std::vector<uint64_t>& key, Enqueue&& enqueue)
    {
        cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        bool can = graphs_on(s);
        if (can && cudaStreamIsCapturing(s, &capturing) != cudaSuccess) {
            cudaGetLastError();
            can = false;
        }
        can = can && capturing == cudaStreamCaptureStatusNone;
        entry* e = can ? find(key) : nullptr;
        if (!e || e->direct) {
            enqueue();
            return;
        }
        if (!e->exec) {
            const cudaGraph_t graph = capture(s, enqueue);
            if (!graph) {
                e->direct = true;
                enqueue();
                return;
            }
            const cudaError_t made = cudaGraphInstantiate(&e->exec, graph, 0);
            cudaGraphDestroy(graph);
            if (made != cudaSuccess) {
                cudaGetLastError();
                e->exec = nullptr;
                e->direct = true;
                enqueue();
                return;
            }
        }
        ++m_replays;
        MIMO_CUDA_CHECK(cudaGraphLaunch(e->exec, s));
    }

    /// Calls launched as a graph so far.
    uint64_t replays() const { return m_replays; }

private:
    struct entry {
        std::vector<uint64_t> key;
        cudaGraphExec_t exec = nullptr; ///< null: seen once (ran directly)
        bool direct = false;            ///< its capture was refused
        uint64_t last_used = 0;
    };
    /// Keys kept (a stream's batches of 1..k frames, a few plans); the least
    /// recently used goes beyond.
    static constexpr size_t k_most_entries = 32;

    /// The key's entry, or null after making one (its first call runs directly).
    entry* find(const std::vector<uint64_t>& key)
    {
        ++m_uses;
        for (auto& e : m_entries)
            if (e.key == key) {
                e.last_used = m_uses;
                return &e;
            }
        if (m_entries.size() >= k_most_entries) {
            auto oldest = m_entries.begin();
            for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
                if (it->last_used < oldest->last_used)
                    oldest = it;
            if (oldest->exec)
                cudaGraphExecDestroy(oldest->exec);
            m_entries.erase(oldest);
        }
        entry fresh;
        fresh.key = key;
        fresh.last_used = m_uses;
        m_entries.push_back(std::move(fresh));
        return nullptr;
    }

    std::vector<entry> m_entries;
    uint64_t m_uses = 0, m_replays = 0;
};

/// A key entry from a pointer.
inline uint64_t key_of(const void* p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); }

} // namespace detail
} // namespace mimo_gpu
