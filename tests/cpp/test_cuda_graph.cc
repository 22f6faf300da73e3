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
    void set(const std::vector<int>& v)
    {
        MIMO_CUDA_CHECK(cudaMemcpy(
            from.data(), v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice));
    }
    std::vector<int> read(size_t n) const
    {
        std::vector<int> v(n);
        MIMO_CUDA_CHECK(
            cudaMemcpy(v.data(), to.data(), n * sizeof(int), cudaMemcpyDeviceToHost));
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
    const std::vector<uint64_t> key{ 1, key_of(seq.from.data()) };
    for (int call = 0; call < 5; ++call) {
        seq.set(values(n, 100 * call + 7));
        graphs.run(stream.get(), key, [&] { seq.enqueue(n, stream.get()); });
        stream.synchronize();
        EXPECT_EQ(seq.read(n), values(n, 100 * call + 7)) << "call " << call;
        // the first call ran directly, the second was recorded and launched
        EXPECT_EQ(graphs.replays(), uint64_t(call)) << "call " << call;
    }
    // Another key (a shape of its own): directly first, then its own graph.
    const size_t m = 10;
    const std::vector<uint64_t> other{ 2, key_of(seq.from.data()) };
    for (int call = 0; call < 3; ++call) {
        seq.set(values(m, -50 * call));
        graphs.run(stream.get(), other, [&] { seq.enqueue(m, stream.get()); });
        stream.synchronize();
        EXPECT_EQ(seq.read(m), values(m, -50 * call)) << "other key, call " << call;
    }
    EXPECT_EQ(graphs.replays(), uint64_t(4 + 2));
    // The first key's graph is still there.
    seq.set(values(n, 3));
    graphs.run(stream.get(), key, [&] { seq.enqueue(n, stream.get()); });
    stream.synchronize();
    EXPECT_EQ(seq.read(n), values(n, 3));
    EXPECT_EQ(graphs.replays(), uint64_t(7));
}

TEST(cuda_graph, refused_captures_and_the_legacy_stream_run_the_launches_directly)
{
    MIMO_GPU_REQUIRE_CUDA();
    const size_t n = 256;
    copy_sequence seq(n);
    cuda_stream stream;
    replayed_launches graphs;
    // A synchronisation inside the sequence: the driver refuses to capture it.
    std::vector<int> host(n);
    for (int call = 0; call < 4; ++call) {
        seq.set(values(n, call));
        graphs.run(stream.get(), { 9 }, [&] {
            MIMO_CUDA_CHECK(cudaMemcpyAsync(host.data(),
                                            seq.from.data(),
                                            n * sizeof(int),
                                            cudaMemcpyDeviceToHost,
                                            stream.get()));
            MIMO_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        });
        stream.synchronize();
        EXPECT_EQ(host, values(n, call)) << "call " << call;
        EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the refused capture's error";
    }
    EXPECT_EQ(graphs.replays(), 0u);
    // The legacy default stream cannot be captured.
    for (int call = 0; call < 3; ++call) {
        seq.set(values(n, 40 + call));
        graphs.run(cudaStreamLegacy, { 1 }, [&] { seq.enqueue(n, cudaStreamLegacy); });
        MIMO_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
        EXPECT_EQ(seq.read(n), values(n, 40 + call)) << "legacy stream, call " << call;
    }
    EXPECT_EQ(graphs.replays(), 0u);
}

#endif // MIMO_GPU_HAVE_CUDA
