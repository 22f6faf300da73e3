// The draws of channel_generator, written once for the CPU engine and the CUDA
// kernels, so that both run the same float operations: the bits agree exactly,
// H and y up to the rounding of logf, sinf and cosf (the only calls whose last
// bit differs between glibc and CUDA).
#pragma once

#include "../runtime/host_device.h"
#include "philox.h"

#include <math.h>

#include <cstdint>

namespace mimo_gpu {
namespace detail {

/// Counter layout: (index low word, index high word, stream id, draw). The index
/// is the problem (bits, noise) or the channel (H) in the whole stream, so that
/// a value never depends on the batch it is generated in.
enum generator_stream : uint32_t {
    k_bits_stream = 0,
    k_channel_stream = 1,
    k_noise_stream = 2
};

constexpr int k_max_dimension_labels = 32; // 1024-QAM: 5 bits per dimension

/// Everything a draw needs, passed by value to the kernels.
struct generator_params {
    int nr, nt;
    int bits_per_symbol;     // Q
    int symbols_per_channel; // S
    uint32_t key0, key1;     // the seed
    float h_sigma;           // sqrt(1/2): CN(0, 1) entries of H
    float n_sigma;           // sqrt(N0/2): CN(0, N0) noise
    /// PAM amplitude of a dimension label (Q/2 bits, the first on top), exactly
    /// constellation::point's values.
    float amplitude[k_max_dimension_labels];

    MIMO_HD int bits_per_problem() const { return nt * bits_per_symbol; }
    MIMO_HD int channel_entries() const { return nr * nt; }
    /// Philox blocks per channel: each gives two entries.
    MIMO_HD int channel_draws() const { return (nr * nt + 1) / 2; }
};

MIMO_HD philox_block generator_draw(const generator_params& g,
                                    uint64_t index,
                                    uint32_t stream,
                                    uint32_t draw)
{
    const philox_block counter = {
        { uint32_t(index), uint32_t(index >> 32), stream, draw }
    };
    return philox4x32_10(counter, g.key0, g.key1);
}

/// A uniform in (0, 1] from the top 24 bits of x: exact in float, never 0 (for log).
MIMO_HD float uniform_from_bits(uint32_t x)
{
    return float((x >> 8) + 1u) * (1.0f / 16777216.0f);
}

/// Box-Muller: two independent N(0, sigma^2) values from two words.
MIMO_HD void
gaussian_pair(uint32_t a, uint32_t b, float sigma, float& first, float& second)
{
    const float radius = sigma * sqrtf(-2.0f * logf(uniform_from_bits(a)));
    const float angle = 6.28318530717958647692f * uniform_from_bits(b);
    first = radius * cosf(angle);
    second = radius * sinf(angle);
}

/// Entries 2d and 2d + 1 of channel c's H (row-major, re/im interleaved) into
/// out[0..3]; the second is past the end when nr*nt is odd and d is the last draw.
MIMO_HD void channel_draw(const generator_params& g, uint64_t channel, int d, float* out)
{
    const philox_block x = generator_draw(g, channel, k_channel_stream, uint32_t(d));
    gaussian_pair(x.v[0], x.v[1], g.h_sigma, out[0], out[1]);
    gaussian_pair(x.v[2], x.v[3], g.h_sigma, out[2], out[3]);
}

/// Symbol of stream t from its Q bits (3GPP: even bits carry I, odd bits Q).
MIMO_HD void
map_symbol(const generator_params& g, const uint8_t* bits, float& re, float& im)
{
    uint32_t i_label = 0, q_label = 0;
    for (int k = 0; k < g.bits_per_symbol; k += 2) {
        i_label = (i_label << 1) | uint32_t(bits[k] != 0);
        q_label = (q_label << 1) | uint32_t(bits[k + 1] != 0);
    }
    re = g.amplitude[i_label];
    im = g.amplitude[q_label];
}

/// Problem p's bits (bit i is bit i % 32 of word (i / 32) % 4 of draw i / 128)
/// into `bits`, unless `given` holds the bits to send (bytes, any non-zero is
/// 1; then `bits`, if not null, gets them as 0/1); and y = H s + n, from its
/// channel's H (floats, as channel_draw wrote them). The noise does not depend
/// on the bits.
MIMO_HD void draw_problem(const generator_params& g,
                          uint64_t problem,
                          const float* H,
                          const uint8_t* given,
                          uint8_t* bits,
                          float* y)
{
    const int n_bits = g.bits_per_problem(), Q = g.bits_per_symbol, nr = g.nr, nt = g.nt;
    const uint8_t* sent = given ? given : bits; // mapped below (non-zero is 1)
    if (given) {
        if (bits)
            for (int i = 0; i < n_bits; ++i)
                bits[i] = uint8_t(given[i] != 0);
    } else {
        for (int first = 0; first < n_bits; first += 128) {
            const philox_block x =
                generator_draw(g, problem, k_bits_stream, uint32_t(first / 128));
            const int count = n_bits - first < 128 ? n_bits - first : 128;
            for (int i = 0; i < count; ++i)
                bits[first + i] = uint8_t((x.v[i >> 5] >> (i & 31)) & 1u);
        }
    }
    // Rows in pairs: one Philox block is the noise of two rows.
    for (int pair = 0; 2 * pair < nr; ++pair) {
        const philox_block x = generator_draw(g, problem, k_noise_stream, uint32_t(pair));
        for (int half = 0; half < 2 && 2 * pair + half < nr; ++half) {
            const int r = 2 * pair + half;
            float re = 0.0f, im = 0.0f; // sum over t in order, on both backends
            for (int t = 0; t < nt; ++t) {
                float sr, si;
                map_symbol(g, sent + t * Q, sr, si);
                const float hr = H[2 * (r * nt + t)], hi = H[2 * (r * nt + t) + 1];
                re += hr * sr - hi * si;
                im += hr * si + hi * sr;
            }
            float nre, nim;
            gaussian_pair(x.v[2 * half], x.v[2 * half + 1], g.n_sigma, nre, nim);
            y[2 * r] = re + nre;
            y[2 * r + 1] = im + nim;
        }
    }
}

/// 1 where the hard decision of `llr` (negative: bit 1) is not `bit` != 0.
MIMO_HD unsigned bit_error(float llr, uint8_t bit)
{
    return unsigned((llr < 0.0f) != (bit != 0));
}

/// 1 where a hard decision (non-zero: bit 1) is not `bit` != 0.
MIMO_HD unsigned bit_error(uint8_t decided, uint8_t bit)
{
    return unsigned((decided != 0) != (bit != 0));
}

} // namespace detail
} // namespace mimo_gpu
