// The receiver front end's CUDA engine: a batch of synchronised frames through
// CFO correction, a batched cuFFT, pilot LS estimation with the delay
// compensation and interpolation of the CPU path, the noise estimate, and the
// detector's H and y. Same arithmetic as ofdm_receiver.cc, other FFT and
// reduction order: results agree to rounding.
#pragma once

#include <mimo_gpu/ofdm_receiver.h>

#include <cuda_runtime_api.h>

#include <complex>
#include <memory>
#include <vector>

namespace mimo_gpu {
namespace detail {

class cuda_front_end
{
public:
    cuda_front_end(const ofdm_grid& grid, const ofdm_receiver_config& config);
    ~cuda_front_end();

    /// Host in, host out (front_end_frame vectors filled), synchronous.
    void run(const cfloat* rx, size_t samples, const sync_result* syncs, size_t frames, front_end_frame* out);

    /// Device in (d_rx: samples * nr), device out (device_H/y/n0), asynchronous on
    /// `stream`. frame_start / cfo: host arrays of `frames` values.
    void run_device(const cfloat* d_rx, size_t samples, const size_t* frame_start, const float* cfo,
                    size_t frames, cudaStream_t stream);
    /// Schmidl-Cox metric of positions [from, samples - N] of d_rx on the GPU;
    /// returns the offset (from `from`) of the first of the first `search`
    /// positions whose metric exceeds `threshold` (size_t(-1): none), with M and
    /// P of `keep` positions from it copied to the host. And the matched filter
    /// over [lo, hi] for the preamble q.
    size_t sync_metric(const cfloat* d_rx, size_t samples, size_t from, size_t search, float threshold, size_t keep,
                       std::vector<float>& M, std::vector<std::complex<double>>& P, cudaStream_t stream);
    std::vector<float> matched_filter(const cfloat* d_rx, size_t lo, size_t hi, const std::vector<cfloat>& q,
                                      cudaStream_t stream);

    const cfloat* device_H() const;
    const cfloat* device_y() const;
    const float* device_n0() const;
    size_t H_per_frame() const;  ///< channels * nr * nt
    size_t y_per_frame() const;  ///< data elements * nr

private:
    struct impl;
    std::unique_ptr<impl> m;
};

} // namespace detail
} // namespace mimo_gpu
