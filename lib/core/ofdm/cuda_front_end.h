// The receiver front end's CUDA engine: a batch of synchronised frames through
// CFO correction, a batched cuFFT, pilot LS estimation with the delay
// compensation and interpolation of the CPU path, the noise estimate, and the
// detector's H and y. Same arithmetic as ofdm_receiver.cc, other FFT and
// reduction order: results agree to rounding.
#pragma once

#include <mimo_gpu/ofdm_receiver.h>

#include <cuda_runtime_api.h>

#include <memory>

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
