// cuda_multipath_channel: the model draws each run's taps on the host (as the
// CPU run() does); one kernel per run computes every output sample with the
// CPU's own per-sample code (channel_sample.h), a thread per sample.
#include <mimo_gpu/backend.h>
#include <mimo_gpu/cuda_multipath_channel.h>
#include <mimo_gpu/device_memory.h>

#include "../runtime/cuda_buffers.h"
#include "../runtime/cuda_check.h"
#include "channel_sample.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimo_gpu {

namespace {

constexpr int k_threads = 256;
constexpr int k_antennas = cuda_multipath_channel::max_antennas;

struct run_args {
    detail::channel_run c;
    const float* tx[k_antennas];
    float* rx[k_antennas];
    const float* taps;
};

__global__ void channel_kernel(run_args a)
{
    const uint64_t out = a.c.output_samples();
    for (uint64_t m = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; m < out;
         m += uint64_t(gridDim.x) * blockDim.x)
        detail::channel_output_sample(a.c, a.tx, 1, a.taps, m, a.rx, 1);
}

multipath_config checked(const multipath_config& c)
{
    if (c.nr > k_antennas || c.nt > k_antennas)
        throw std::invalid_argument("mimo_gpu: cuda_multipath_channel: at most " +
                                    std::to_string(k_antennas) +
                                    " antennas per side, got " + std::to_string(c.nr) +
                                    "x" + std::to_string(c.nt));
    return c;
}

} // namespace

struct cuda_multipath_channel::engine {
    explicit engine(const multipath_config& c) : model(checked(c)) {}
    multipath_channel model;
    detail::cuda_stream stream;
    detail::device_array<cfloat> in, out, taps;
    detail::pinned_buffer<cfloat> taps_staging;
    // A call's runs, their taps in order and where each run's start (kept: no
    // allocation a call once they have grown).
    std::vector<detail::channel_run> runs;
    std::vector<cfloat> run_taps;
    std::vector<size_t> offsets;
};

cuda_multipath_channel::cuda_multipath_channel(const multipath_config& config)
{
    multipath_channel{ checked(config) }; // bad fields first: std::invalid_argument
    if (!cuda_available())
        throw std::runtime_error("mimo_gpu: cuda_multipath_channel: " +
                                 cuda_unavailable_reason());
    m_engine = std::make_unique<engine>(config);
}

cuda_multipath_channel::~cuda_multipath_channel() = default;

multipath_channel& cuda_multipath_channel::model() { return m_engine->model; }
const multipath_channel& cuda_multipath_channel::model() const { return m_engine->model; }

void cuda_multipath_channel::run_frames(const cfloat* const* tx,
                                        size_t samples,
                                        size_t frames,
                                        cfloat* const* rx)
{
    engine& e = *m_engine;
    if (frames == 0)
        return;
    const cudaStream_t st = e.stream.get();
    const int nr = e.model.config().nr, nt = e.model.config().nt;
    const size_t out = e.model.output_samples(samples);
    // Each run's taps, drawn in order, into one upload (the previous call's
    // upload from the page-locked staging finished: it ended in a synchronisation).
    std::vector<detail::channel_run>& runs = e.runs;
    std::vector<size_t>& offsets = e.offsets;
    std::vector<cfloat>& taps = e.run_taps;
    runs.clear();
    offsets.clear();
    taps.clear();
    for (size_t f = 0; f < frames; ++f) {
        const multipath_run plan = e.model.prepare_run(samples);
        runs.push_back(detail::make_channel_run(e.model, plan));
        offsets.push_back(taps.size());
        taps.insert(taps.end(), plan.taps, plan.taps + plan.tap_values);
    }
    cfloat* staging = e.taps_staging.reserve(taps.size());
    std::copy(taps.begin(), taps.end(), staging);
    cfloat* device_taps = e.taps.reserve(taps.size());
    MIMO_CUDA_CHECK(cudaMemcpyAsync(
        device_taps, staging, taps.size() * sizeof(cfloat), cudaMemcpyHostToDevice, st));
    // Inputs and outputs in device memory are used in place; host ones go
    // through device buffers, one copy per antenna for the whole batch.
    const cfloat* in[k_antennas];
    cfloat* to[k_antennas];
    bool out_on_host[k_antennas];
    for (int t = 0; t < nt; ++t) {
        in[t] = tx[t];
        if (memory_kind_of(tx[t]) != memory_kind::device) {
            cfloat* d = e.in.reserve(size_t(nt) * frames * samples) +
                        size_t(t) * frames * samples;
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                d, tx[t], frames * samples * sizeof(cfloat), cudaMemcpyDefault, st));
            in[t] = d;
        }
    }
    for (int r = 0; r < nr; ++r) {
        out_on_host[r] = memory_kind_of(rx[r]) != memory_kind::device;
        to[r] = out_on_host[r]
                    ? e.out.reserve(size_t(nr) * frames * out) + size_t(r) * frames * out
                    : rx[r];
    }
    for (size_t f = 0; f < frames; ++f) {
        run_args a;
        a.c = runs[f];
        for (int t = 0; t < nt; ++t)
            a.tx[t] = reinterpret_cast<const float*>(in[t] + f * samples);
        for (int r = 0; r < nr; ++r)
            a.rx[r] = reinterpret_cast<float*>(to[r] + f * out);
        a.taps = reinterpret_cast<const float*>(device_taps + offsets[f]);
        const unsigned blocks =
            unsigned(std::min<size_t>((out + k_threads - 1) / k_threads, 8192));
        channel_kernel<<<blocks, k_threads, 0, st>>>(a);
        MIMO_CUDA_CHECK_LAUNCH("channel_kernel");
    }
    for (int r = 0; r < nr; ++r)
        if (out_on_host[r])
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                rx[r], to[r], frames * out * sizeof(cfloat), cudaMemcpyDefault, st));
    MIMO_CUDA_CHECK(cudaStreamSynchronize(st));
}

} // namespace mimo_gpu
