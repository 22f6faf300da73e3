// replayed_launches (lib/core/runtime/cuda_graph.h): a key's first call runs
// its launches directly, its second records them, later calls replay the graph;
// every call gives what the launches give, with the memory they read as it is
// at that call. A capture the driver refuses (a synchronisation in the
// sequence) and the legacy stream run directly, with the same results. CUDA only (skips
// without a GPU); the receiver's and the turbo decoder's graphs are checked
// by their CUDA-against-CPU tests, which run streams of many calls.
#include "backend_test.h"

#ifdef MIMO_GPU_HAVE_CUDA

#include "../../lib/core/runtime/cuda_buffers.h"
#include "../../lib/core/runtime/cuda_graph.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace mimo_gpu::detail;

namespace {

/// Two device arrays: the sequence copies `from` to `to` and then zeroes
/// from's first value (two operations, so a graph is a sequence).
struct copy_sequence {
    device_array<int> from, to;
    explicit copy_sequence(size_t n)
    {
        from.reserve(n);
        to.reserve(n);
    }
    /// from = v, on s (ordered before the sequence), complete on return.
    void set(const std::vector<int>& v, cudaStream_t s)
    {
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            from.data(), v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice, s));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    std::vector<int> read(const device_array<int>& a, size_t n, cudaStream_t s) const
    {
        std::vector<int> v(n);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            v.data(), a.data(), n * sizeof(int), cudaMemcpyDeviceToHost, s));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(s));
        return v;
    }
    void enqueue(size_t n, cudaStream_t s)
    {
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            to.data(), from.data(), n * sizeof(int), cudaMemcpyDeviceToDevice, s));
        MIMO_CUDA_CHECK(cudaMemsetAsync(from.data(), 0, sizeof(int), s));
    }
};

std::vector<int> values(size_t n, int first)
{
    std::vector<int> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = first + int(i);
    return v;
}

} // namespace

TEST(cuda_graph, a_keys_calls_run_then_record_then_replay_with_the_memory_of_the_call)
{
    MIMO_GPU_REQUIRE_CUDA();
    cuda_stream stream;
    if (!graphs_on(stream.get()))
        GTEST_SKIP() << "MIMO_GPU_CUDA_GRAPHS=0";
    const size_t n = 1000;
    copy_sequence seq(n);
    replayed_launches graphs;
    const cudaStream_t s = stream.get();
    int enqueued = 0; // calls of the lambda: a replay makes none
    const auto check = [&](size_t count, int first, const std::string& what) {
        EXPECT_EQ(seq.read(seq.to, count, s), values(count, first)) << what;
        std::vector<int> zeroed = values(count, first);
        zeroed[0] = 0;
        EXPECT_EQ(seq.read(seq.from, count, s), zeroed) << what << ": the memset";
    };
    const std::vector<uint64_t> key{ 1, key_of(seq.from.data()) };
    for (int call = 0; call < 5; ++call) {
        seq.set(values(n, 100 * call + 7), s);
        graphs.run(s, key, [&] {
            ++enqueued;
            seq.enqueue(n, s);
        });
        stream.synchronize();
        check(n, 100 * call + 7, "call " + std::to_string(call));
        // the first call ran directly, the second was recorded and launched
        EXPECT_EQ(graphs.replays(), uint64_t(call)) << "call " << call;
        EXPECT_EQ(enqueued, std::min(call + 1, 2)) << "call " << call;
    }
    // Another key (a shape of its own): directly first, then its own graph.
    const size_t m = 10;
    const std::vector<uint64_t> other{ 2, key_of(seq.from.data()) };
    for (int call = 0; call < 3; ++call) {
        seq.set(values(m, -50 * call + 1), s);
        graphs.run(s, other, [&] {
            ++enqueued;
            seq.enqueue(m, s);
        });
        stream.synchronize();
        check(m, -50 * call + 1, "other key, call " + std::to_string(call));
    }
    EXPECT_EQ(graphs.replays(), uint64_t(4 + 2));
    EXPECT_EQ(enqueued, 2 + 2);
    // The first key's graph is still there.
    seq.set(values(n, 3), s);
    graphs.run(s, key, [&] { seq.enqueue(n, s); });
    stream.synchronize();
    check(n, 3, "the first key again");
    EXPECT_EQ(graphs.replays(), uint64_t(7));
}

TEST(cuda_graph, refused_captures_and_the_legacy_stream_run_the_launches_directly)
{
    MIMO_GPU_REQUIRE_CUDA();
    const size_t n = 256;
    copy_sequence seq(n);
    cuda_stream stream;
    const cudaStream_t s = stream.get();
    if (!graphs_on(s))
        GTEST_SKIP() << "MIMO_GPU_CUDA_GRAPHS=0";
    replayed_launches graphs;
    // A synchronisation inside the sequence: the driver refuses to capture it,
    // so the second call runs the lambda twice (the refused capture, then
    // directly), and every later call once, directly.
    std::vector<int> host(n);
    int enqueued = 0;
    for (int call = 0; call < 4; ++call) {
        seq.set(values(n, call), s);
        graphs.run(s, { 9 }, [&] {
            ++enqueued;
            MIMO_CUDA_CHECK(cudaMemcpyAsync(host.data(),
                                            seq.from.data(),
                                            n * sizeof(int),
                                            cudaMemcpyDeviceToHost,
                                            s));
            MIMO_CUDA_CHECK(cudaStreamSynchronize(s));
        });
        stream.synchronize();
        EXPECT_EQ(host, values(n, call)) << "call " << call;
        EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the refused capture's error";
        EXPECT_EQ(enqueued, call == 0 ? 1 : call + 2) << "call " << call;
    }
    EXPECT_EQ(graphs.replays(), 0u);
    // Streams that are not captured: the legacy default stream, and a blocking
    // stream (its capture would fail other threads' use of the legacy stream).
    EXPECT_FALSE(graphs_on(cudaStreamLegacy));
    cudaStream_t blocking = nullptr;
    MIMO_CUDA_CHECK(cudaStreamCreate(&blocking));
    EXPECT_FALSE(graphs_on(blocking));
    for (const cudaStream_t other : { cudaStreamLegacy, blocking }) {
        enqueued = 0;
        for (int call = 0; call < 3; ++call) {
            seq.set(values(n, 40 + call), other);
            graphs.run(other, { 1 }, [&] {
                ++enqueued;
                seq.enqueue(n, other);
            });
            MIMO_CUDA_CHECK(cudaStreamSynchronize(other));
            EXPECT_EQ(seq.read(seq.to, n, other), values(n, 40 + call))
                << "call " << call;
        }
        EXPECT_EQ(enqueued, 3);
    }
    MIMO_CUDA_CHECK(cudaStreamDestroy(blocking));
    EXPECT_EQ(graphs.replays(), 0u);
}

#endif // MIMO_GPU_HAVE_CUDA
