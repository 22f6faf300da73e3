// Timing helpers of mimo_gpu_bench, shared by its N-way, detector and turbo
// sections: medians on the host clock, CUDA-event kernel timing (optionally of a
// captured CUDA graph), pinned copy bandwidth, and the table formatting.
#pragma once

#ifdef MIMO_GPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <mimo_gpu/channel_simulator.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimo_gpu_apps {

inline double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// Median over `trials` of the host-clock time of call(1..trials), after a warm-up
/// call(0) (buffers are allocated on first use).
template <typename F>
double host_median_ms(int trials, F&& call)
{
    call(0);
    std::vector<double> ms;
    for (int t = 0; t < trials; ++t) {
        const auto start = std::chrono::steady_clock::now();
        call(t + 1);
        ms.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count());
    }
    return median(ms);
}


/// Simulated (H, y) input sets at 15 dB, rotated between calls so that caches
/// do not flatter the numbers (detectors' work does not depend on the values,
/// but realistic inputs keep any data-dependent path honest).
struct input_sets {
    std::vector<std::vector<mimo_gpu::cfloat>> H, y;
    input_sets(mimo_gpu::mimo_shape shape,
               mimo_gpu::modulation mod,
               size_t problems,
               int count,
               uint64_t seed)
    {
        mimo_gpu::channel_simulator sim(shape, mod, seed);
        std::vector<uint8_t> bits(problems * size_t(sim.bits_per_problem()));
        for (int k = 0; k < count; ++k) {
            sim.random_bits(bits.data(), bits.size());
            H.emplace_back(problems * size_t(shape.nr * shape.nt));
            y.emplace_back(problems * size_t(shape.nr));
            sim.run(bits.data(),
                    problems,
                    mimo_gpu::noise_variance_from_snr_db(15.0),
                    H.back().data(),
                    y.back().data());
        }
    }
};

/// Mbit/s (10^6 bits per second); -1 when there is no time.
inline double mbps(size_t bits, double ms)
{
    return ms > 0 ? bits / (ms * 1e-3) / 1e6 : -1.0;
}

/// A table cell: "-" for a negative (not measured) value.
inline std::string fmt(double v, const char* f = "%.4f")
{
    if (v < 0)
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

#ifdef MIMO_GPU_HAVE_CUDA

#define BENCH_CHECK(call)                                        \
    do {                                                         \
        const cudaError_t e_ = (call);                           \
        if (e_ != cudaSuccess)                                   \
            throw std::runtime_error(std::string(#call) + ": " + \
                                     cudaGetErrorString(e_));    \
    } while (0)

template <typename T>
struct cuda_array { // plain owner for the benchmark's own device and pinned arrays
    T* p = nullptr;
    bool pinned = false;
    cuda_array(size_t n, bool host_pinned) : pinned(host_pinned)
    {
        if (pinned)
            BENCH_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p), n * sizeof(T)));
        else
            BENCH_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T)));
    }
    ~cuda_array() { pinned ? cudaFreeHost(p) : cudaFree(p); }
    cuda_array(const cuda_array&) = delete;
    cuda_array& operator=(const cuda_array&) = delete;
};

/// input_sets copied to device memory (kernel timing) and to pinned host memory
/// (end-to-end timing from memory the CUDA engines use in place).
struct staged_sets {
    std::vector<std::unique_ptr<cuda_array<mimo_gpu::cfloat>>> dH, dy, hH, hy;
    explicit staged_sets(const input_sets& in)
    {
        for (size_t k = 0; k < in.H.size(); ++k) {
            const size_t nH = in.H[k].size(), ny = in.y[k].size();
            dH.emplace_back(new cuda_array<mimo_gpu::cfloat>(nH, false));
            dy.emplace_back(new cuda_array<mimo_gpu::cfloat>(ny, false));
            hH.emplace_back(new cuda_array<mimo_gpu::cfloat>(nH, true));
            hy.emplace_back(new cuda_array<mimo_gpu::cfloat>(ny, true));
            std::copy(in.H[k].begin(), in.H[k].end(), hH[k]->p);
            std::copy(in.y[k].begin(), in.y[k].end(), hy[k]->p);
            BENCH_CHECK(cudaMemcpy(dH[k]->p,
                                   hH[k]->p,
                                   nH * sizeof(mimo_gpu::cfloat),
                                   cudaMemcpyHostToDevice));
            BENCH_CHECK(cudaMemcpy(dy[k]->p,
                                   hy[k]->p,
                                   ny * sizeof(mimo_gpu::cfloat),
                                   cudaMemcpyHostToDevice));
        }
    }
};

/// Pinned copy bandwidth in bytes/s for `kind` (cudaMemcpyHostToDevice or
/// cudaMemcpyDeviceToHost): 64 MiB copies, median of 11, after 20 untimed ones
/// (an idle GPU's PCIe link needs a moment of traffic to reach full speed: a
/// run without them once measured 31 GB/s instead of 54).
inline double measure_pinned_bandwidth(cudaMemcpyKind kind)
{
    const size_t bytes = size_t(64) << 20;
    cuda_array<char> host(bytes, true), dev(bytes, false);
    const bool to_device = kind == cudaMemcpyHostToDevice;
    std::vector<double> ms;
    cudaEvent_t a, b;
    BENCH_CHECK(cudaEventCreate(&a));
    BENCH_CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 20; ++i)
        BENCH_CHECK(cudaMemcpyAsync(
            to_device ? dev.p : host.p, to_device ? host.p : dev.p, bytes, kind));
    BENCH_CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 11; ++i) {
        BENCH_CHECK(cudaEventRecord(a));
        BENCH_CHECK(cudaMemcpyAsync(
            to_device ? dev.p : host.p, to_device ? host.p : dev.p, bytes, kind));
        BENCH_CHECK(cudaEventRecord(b));
        BENCH_CHECK(cudaEventSynchronize(b));
        float t = 0;
        BENCH_CHECK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return bytes / (median(ms) * 1e-3);
}

/// Pinned host-to-device copy bandwidth in bytes/s (the ceiling for end to end).
inline double measure_h2d_bandwidth()
{
    return measure_pinned_bandwidth(cudaMemcpyHostToDevice);
}

/// Median over trials of the mean time of `reps` back-to-back launches, by CUDA
/// events. With `as_graph` the launches are captured once into a CUDA graph and
/// the graph is replayed, which removes most of the per-launch gap (METHOD:
/// "for many small launches, capture a graph and time its replays").
/// between() runs after the sizing launches and after every trial,
/// outside the timed region: a detector's check_device_status, which collects
/// the fault reports of the launches since the last check (their flags need
/// room for every batch of a collection cycle, so a graph of `reps` launches
/// must find that room allocated, and timed launches must not grow it).
template <typename F, typename Between>
double kernel_median_ms(
    cudaStream_t s, int trials, int reps, bool as_graph, F&& launch, Between&& between)
{
    cudaEvent_t a, b;
    BENCH_CHECK(cudaEventCreate(&a));
    BENCH_CHECK(cudaEventCreate(&b));
    // First use allocates the core's buffers, which a graph capture may not do:
    // `reps` launches size them for a graph of `reps`.
    for (int i = 0; i < reps; ++i)
        launch(i);
    BENCH_CHECK(cudaStreamSynchronize(s));
    between();
    cudaGraphExec_t exec = nullptr;
    if (as_graph) {
        cudaGraph_t graph;
        BENCH_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < reps; ++i)
            launch(i);
        BENCH_CHECK(cudaStreamEndCapture(s, &graph));
        BENCH_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        BENCH_CHECK(cudaGraphDestroy(graph));
    }
    auto run_all = [&] {
        if (exec)
            BENCH_CHECK(cudaGraphLaunch(exec, s));
        else
            for (int i = 0; i < reps; ++i)
                launch(i);
    };
    run_all(); // warm-up
    BENCH_CHECK(cudaStreamSynchronize(s));
    between();
    std::vector<double> ms;
    for (int t = 0; t < trials; ++t) {
        BENCH_CHECK(cudaEventRecord(a, s));
        run_all();
        BENCH_CHECK(cudaEventRecord(b, s));
        BENCH_CHECK(cudaEventSynchronize(b));
        float total = 0;
        BENCH_CHECK(cudaEventElapsedTime(&total, a, b));
        ms.push_back(total / reps);
        between();
    }
    if (exec)
        cudaGraphExecDestroy(exec);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return median(ms);
}

template <typename F>
double kernel_median_ms(cudaStream_t s, int trials, int reps, bool as_graph, F&& launch)
{
    return kernel_median_ms(s, trials, reps, as_graph, launch, [] {});
}

#endif // MIMO_GPU_HAVE_CUDA

} // namespace mimo_gpu_apps
