// The device-side helpers of the detector base class (CUDA builds only):
// repeating each channel for its S symbols and quantising LLRs to int8.
#pragma once

#include <mimo_gpu/types.h>

#include <memory>

namespace mimo_gpu {
namespace detail {

/// Device buffers reused across calls: the repeated channels and the float LLRs of the
/// int8 path.
class device_scratch;
std::shared_ptr<device_scratch> make_device_scratch();

/// H of C channels repeated S times each (problem p = c*S + s gets H[c]), on `stream`.
const cfloat* repeat_channels_device(device_scratch& scratch,
                                     const cfloat* d_H,
                                     size_t channels,
                                     int S,
                                     size_t per_channel,
                                     cuda_stream_t stream);
/// A device float buffer of `count` LLRs for the int8 path.
float* float_llrs_device(device_scratch& scratch, size_t count);
/// As llrs_to_int8, on the device.
void llrs_to_int8_device(
    const float* d_llr, size_t count, float scale, int8_t* d_out, cuda_stream_t stream);

} // namespace detail
} // namespace mimo_gpu
