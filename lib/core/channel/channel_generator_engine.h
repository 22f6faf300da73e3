// The interface behind mimo_gpu::channel_generator: one CPU and one CUDA engine,
// both drawing with channel_draws.h. Arguments are checked by the class.
#pragma once

#include <mimo_gpu/channel_generator.h>

#include "channel_draws.h"

#include <cmath>
#include <memory>
#include <stdexcept>

namespace mimo_gpu {

class channel_generator_engine
{
public:
    explicit channel_generator_engine(const detail::generator_params& params)
        : m_params(params)
    {
    }
    virtual ~channel_generator_engine() = default;
    virtual backend kind() const = 0;
    virtual void generate(uint64_t first_channel,
                          size_t channels,
                          float n0,
                          uint8_t* bits,
                          cfloat* H,
                          cfloat* y,
                          const uint8_t* given) = 0;
    virtual void generate_device(uint64_t,
                                 size_t,
                                 float,
                                 uint8_t*,
                                 cfloat*,
                                 cfloat*,
                                 cuda_stream_t,
                                 const uint8_t*)
    {
        throw std::logic_error(
            "mimo_gpu::channel_generator::generate_device needs the CUDA backend");
    }

protected:
    /// The draws' parameters for one call: the noise scale is computed here, on
    /// the host, so that both engines use the same float.
    detail::generator_params params(float n0) const
    {
        detail::generator_params g = m_params;
        g.n_sigma = std::sqrt(0.5f * n0);
        return g;
    }

private:
    detail::generator_params m_params;
};

namespace detail {
std::unique_ptr<channel_generator_engine>
make_cpu_channel_generator_engine(const generator_params& params);
// Defined in the .cu (CUDA builds only).
std::unique_ptr<channel_generator_engine>
make_cuda_channel_generator_engine(const generator_params& params);
} // namespace detail
} // namespace mimo_gpu
