#include <mimo_gpu/channel_generator.h>
#include <mimo_gpu/detector.h> // check_noise_variance

#include "../runtime/engine_choice.h"
#include "../runtime/parallel_for.h"
#include "channel_generator_engine.h"

#include <atomic>
#include <limits>
#include <string>

namespace mimo_gpu {
namespace detail {

namespace {

generator_params make_generator_params(const mimo_shape& shape,
                                       const constellation& c,
                                       int symbols_per_channel,
                                       uint64_t seed)
{
    generator_params g{};
    g.nr = shape.nr;
    g.nt = shape.nt;
    g.bits_per_symbol = c.bits_per_symbol();
    g.symbols_per_channel = symbols_per_channel;
    g.key0 = uint32_t(seed);
    g.key1 = uint32_t(seed >> 32);
    g.h_sigma = std::sqrt(0.5f);
    for (int label = 0; label < c.pam_levels(); ++label)
        g.amplitude[label] = c.pam_amplitude(c.pam_level_of_label(uint32_t(label)));
    return g;
}

/// Draws channel by channel, spread over the cores: a channel's H, then its S
/// problems, each reading that H.
class cpu_channel_generator_engine final : public channel_generator_engine
{
public:
    using channel_generator_engine::channel_generator_engine;
    backend kind() const override { return backend::cpu; }
    void generate(uint64_t first_channel,
                  size_t channels,
                  float n0,
                  uint8_t* bits,
                  cfloat* H,
                  cfloat* y,
                  const uint8_t* given) override
    {
        const generator_params g = params(n0);
        const size_t S = size_t(g.symbols_per_channel),
                     bpp = size_t(g.bits_per_problem());
        const size_t entries = size_t(g.channel_entries());
        // About 200 ns per 4x4 problem: a few hundred problems per thread amortise the
        // hand-off.
        parallel_for(
            channels, std::max<size_t>(1, 256 / S), [&](size_t begin, size_t end) {
                for (size_t c = begin; c < end; ++c) {
                    float* h = reinterpret_cast<float*>(H + c * entries);
                    for (int d = 0; 2 * d < g.channel_entries(); ++d) {
                        float v[4];
                        channel_draw(g, first_channel + c, d, v);
                        const int n = 2 * d + 1 < g.channel_entries() ? 4 : 2;
                        for (int k = 0; k < n; ++k)
                            h[4 * d + k] = v[k];
                    }
                    for (size_t s = 0; s < S; ++s) {
                        const size_t q = c * S + s;
                        draw_problem(g,
                                     (first_channel + c) * S + s,
                                     h,
                                     given ? given + q * bpp : nullptr,
                                     bits ? bits + q * bpp : nullptr,
                                     reinterpret_cast<float*>(y + q * size_t(g.nr)));
                    }
                }
            });
    }
};

} // namespace

std::unique_ptr<channel_generator_engine>
make_cpu_channel_generator_engine(const generator_params& params)
{
    return std::make_unique<cpu_channel_generator_engine>(params);
}

} // namespace detail

channel_generator::channel_generator(mimo_shape shape,
                                     modulation mod,
                                     uint64_t seed,
                                     int symbols_per_channel,
                                     backend requested)
    : m_shape(shape),
      m_bits_per_symbol(constellation(mod).bits_per_symbol()),
      m_symbols_per_channel(symbols_per_channel)
{
    m_shape.validate();
    if (symbols_per_channel < 1)
        throw std::invalid_argument(
            "mimo_gpu::channel_generator: symbols per channel must be >= 1, got " +
            std::to_string(symbols_per_channel));
    const detail::generator_params params = detail::make_generator_params(
        shape, constellation(mod), symbols_per_channel, seed);
    m_engine = detail::choose_engine(
        requested,
        [&] { return detail::make_cpu_channel_generator_engine(params); },
        [&] { return detail::make_cuda_channel_generator_engine(params); });
}

channel_generator::~channel_generator() = default;
channel_generator::channel_generator(channel_generator&&) noexcept = default;
channel_generator& channel_generator::operator=(channel_generator&&) noexcept = default;

backend channel_generator::active_backend() const { return m_engine->kind(); }

void channel_generator::check(uint64_t first_channel,
                              size_t channels,
                              float n0,
                              const void* bits,
                              const void* H,
                              const void* y,
                              const char* call) const
{
    check_noise_variance(n0);
    if (channels == 0)
        return;
    if (!bits || !H || !y)
        throw std::invalid_argument(std::string("mimo_gpu::channel_generator::") + call +
                                    ": null buffer");
    // Problem indices are 64-bit counters: the range must end within them.
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    const uint64_t S = uint64_t(m_symbols_per_channel);
    if (uint64_t(channels) > max - first_channel || first_channel + channels > max / S)
        throw std::invalid_argument(std::string("mimo_gpu::channel_generator::") + call +
                                    ": channels " + std::to_string(first_channel) +
                                    " + " + std::to_string(channels) +
                                    " run past the end of the stream (2^64 problems)");
}

void channel_generator::generate(uint64_t first_channel,
                                 size_t channels,
                                 float n0,
                                 uint8_t* bits,
                                 cfloat* H,
                                 cfloat* y,
                                 const uint8_t* given_bits)
{
    check(first_channel, channels, n0, bits ? bits : given_bits, H, y, "generate");
    if (channels > 0)
        m_engine->generate(first_channel, channels, n0, bits, H, y, given_bits);
}

void channel_generator::generate_device(uint64_t first_channel,
                                        size_t channels,
                                        float n0,
                                        uint8_t* d_bits,
                                        cfloat* d_H,
                                        cfloat* d_y,
                                        cuda_stream_t stream,
                                        const uint8_t* d_given_bits)
{
    if (m_engine->kind() != backend::cuda)
        throw std::logic_error("mimo_gpu::channel_generator::generate_device needs the "
                               "CUDA backend (this generator runs on the CPU)");
    check(first_channel,
          channels,
          n0,
          d_bits ? d_bits : d_given_bits,
          d_H,
          d_y,
          "generate_device");
    if (channels > 0)
        m_engine->generate_device(
            first_channel, channels, n0, d_bits, d_H, d_y, stream, d_given_bits);
}

uint64_t count_bit_errors(const float* llr, const uint8_t* bits, size_t n)
{
    if (n > 0 && (!llr || !bits))
        throw std::invalid_argument("mimo_gpu::count_bit_errors: null buffer");
    std::atomic<uint64_t> errors{ 0 };
    detail::parallel_for(n, size_t(1) << 16, [&](size_t begin, size_t end) {
        uint64_t local = 0;
        for (size_t i = begin; i < end; ++i)
            local += detail::bit_error(llr[i], bits[i]);
        errors += local;
    });
    return errors.load();
}

namespace {
template <typename Decision>
error_counts count_item_errors(const Decision* decided,
                               const uint8_t* bits,
                               size_t items,
                               size_t bits_per_item,
                               const char* call)
{
    if (items > 0 && (!decided || !bits))
        throw std::invalid_argument(std::string("mimo_gpu::") + call + ": null buffer");
    std::atomic<uint64_t> bit_errors{ 0 }, item_errors{ 0 };
    const size_t grain =
        std::max<size_t>(1, (size_t(1) << 16) / std::max<size_t>(1, bits_per_item));
    detail::parallel_for(items, grain, [&](size_t begin, size_t end) {
        uint64_t local_bits = 0, local_items = 0;
        for (size_t i = begin; i < end; ++i) {
            uint64_t errors = 0;
            for (size_t k = i * bits_per_item; k < (i + 1) * bits_per_item; ++k)
                errors += detail::bit_error(decided[k], bits[k]);
            local_bits += errors;
            local_items += errors > 0;
        }
        bit_errors += local_bits;
        item_errors += local_items;
    });
    return { bit_errors.load(), item_errors.load() };
}
} // namespace

error_counts
count_errors(const float* llr, const uint8_t* bits, size_t items, size_t bits_per_item)
{
    return count_item_errors(llr, bits, items, bits_per_item, "count_errors");
}

error_counts count_errors(const uint8_t* decided,
                          const uint8_t* bits,
                          size_t items,
                          size_t bits_per_item)
{
    return count_item_errors(decided, bits, items, bits_per_item, "count_errors");
}

#ifndef MIMO_GPU_HAVE_CUDA
void count_errors_device(
    const float*, const uint8_t*, size_t, size_t, unsigned long long*, cuda_stream_t)
{
    throw std::logic_error(
        "mimo_gpu::count_errors_device: this build of mimo_gpu has no CUDA");
}

void count_errors_device(
    const uint8_t*, const uint8_t*, size_t, size_t, unsigned long long*, cuda_stream_t)
{
    throw std::logic_error(
        "mimo_gpu::count_errors_device: this build of mimo_gpu has no CUDA");
}

void count_bit_errors_device(
    const float*, const uint8_t*, size_t, unsigned long long*, cuda_stream_t)
{
    throw std::logic_error(
        "mimo_gpu::count_bit_errors_device: this build of mimo_gpu has no CUDA");
}
#endif

} // namespace mimo_gpu
