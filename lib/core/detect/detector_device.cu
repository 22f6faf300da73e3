#include "../runtime/cuda_buffers.h"
#include "../runtime/cuda_check.h"
#include "detector_device.h"
#include "llr_quantize.h"

namespace mimo_gpu {
namespace detail {

class device_scratch
{
public:
    device_array<cfloat> H;
    device_array<float> llr;
};

std::shared_ptr<device_scratch> make_device_scratch()
{
    return std::make_shared<device_scratch>();
}

namespace {

__global__ void repeat_channels_kernel(const cfloat* __restrict__ H,
                                       size_t channels,
                                       int S,
                                       size_t per_channel,
                                       cfloat* __restrict__ out)
{
    const size_t total = channels * size_t(S) * per_channel;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
         i += size_t(gridDim.x) * blockDim.x) {
        const size_t problem = i / per_channel, element = i % per_channel;
        out[i] = H[(problem / size_t(S)) * per_channel + element];
    }
}

__global__ void int8_kernel(const float* __restrict__ llr,
                            size_t count,
                            float scale,
                            int8_t* __restrict__ out)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
         i += size_t(gridDim.x) * blockDim.x)
        out[i] = quantize_llr(llr[i], scale);
}

unsigned grid_for(size_t n)
{
    const size_t blocks = (n + 255) / 256;
    return unsigned(blocks < 65535 ? (blocks ? blocks : 1) : 65535);
}

} // namespace

const cfloat* repeat_channels_device(device_scratch& scratch,
                                     const cfloat* d_H,
                                     size_t channels,
                                     int S,
                                     size_t per_channel,
                                     cuda_stream_t stream)
{
    const size_t total = channels * size_t(S) * per_channel;
    cfloat* out = scratch.H.reserve(total);
    repeat_channels_kernel<<<grid_for(total), 256, 0, stream>>>(
        d_H, channels, S, per_channel, out);
    MIMO_CUDA_CHECK_LAUNCH("repeat_channels_kernel");
    return out;
}

float* float_llrs_device(device_scratch& scratch, size_t count)
{
    return scratch.llr.reserve(count);
}

void llrs_to_int8_device(
    const float* d_llr, size_t count, float scale, int8_t* d_out, cuda_stream_t stream)
{
    int8_kernel<<<grid_for(count), 256, 0, stream>>>(d_llr, count, scale, d_out);
    MIMO_CUDA_CHECK_LAUNCH("int8_kernel");
}

} // namespace detail
} // namespace mimo_gpu
