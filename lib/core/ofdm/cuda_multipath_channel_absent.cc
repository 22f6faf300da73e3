// cuda_multipath_channel in a build without CUDA: it cannot be made.
#ifndef MIMO_GPU_HAVE_CUDA

#include <mimo_gpu/cuda_multipath_channel.h>

#include <stdexcept>

namespace mimo_gpu {

struct cuda_multipath_channel::engine {
};

cuda_multipath_channel::cuda_multipath_channel(const multipath_config& config)
{
    multipath_channel{ config }; // bad fields first: std::invalid_argument
    throw std::runtime_error("mimo_gpu: cuda_multipath_channel: built without CUDA");
}

cuda_multipath_channel::~cuda_multipath_channel() = default;

multipath_channel& cuda_multipath_channel::model()
{
    throw std::logic_error("mimo_gpu: cuda_multipath_channel: built without CUDA");
}

const multipath_channel& cuda_multipath_channel::model() const
{
    throw std::logic_error("mimo_gpu: cuda_multipath_channel: built without CUDA");
}

void cuda_multipath_channel::run_frames(const cfloat* const*,
                                        size_t,
                                        size_t,
                                        cfloat* const*)
{
    throw std::logic_error("mimo_gpu: cuda_multipath_channel: built without CUDA");
}

} // namespace mimo_gpu

#endif
