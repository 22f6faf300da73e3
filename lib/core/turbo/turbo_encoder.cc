#include <mimo_gpu/lte_turbo_code.h>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

namespace {

/// One 8-state constituent encoder, G(D) = [1, g1(D)/g0(D)] with
/// g0 = 1 + D^2 + D^3 (feedback) and g1 = 1 + D + D^3 (parity), 5.1.3.2.1.
class constituent_encoder
{
public:
    /// Shifts in bit x, returns the parity bit z.
    uint8_t push(uint8_t x)
    {
        const uint8_t w = x ^ m_s2 ^ m_s3;
        const uint8_t z = w ^ m_s1 ^ m_s3;
        m_s3 = m_s2;
        m_s2 = m_s1;
        m_s1 = w;
        return z;
    }

    /// One termination step (5.1.3.2.2): the input is the feedback itself, so a
    /// zero enters the register; returns the tail bit x and sets its parity z.
    uint8_t push_tail(uint8_t& z)
    {
        const uint8_t x = m_s2 ^ m_s3;
        z = push(x);
        return x;
    }

private:
    uint8_t m_s1 = 0, m_s2 = 0, m_s3 = 0; // the register contents D^1, D^2, D^3
};

/// The 3 (x, z) tail pairs of one encoder, driving it back to state 0.
struct tail_bits {
    uint8_t x[3], z[3];
};

tail_bits terminate(constituent_encoder& enc)
{
    tail_bits t{};
    for (int i = 0; i < 3; ++i)
        t.x[i] = enc.push_tail(t.z[i]);
    return t;
}

/// Filler (<NULL>) bits enter the encoders as 0.
uint8_t encoder_input(uint8_t c) { return c == 1 ? 1 : 0; }

} // namespace

void turbo_encode(const uint8_t* c, int K, uint8_t* d0, uint8_t* d1, uint8_t* d2)
{
    const qpp_interleaver qpp(K); // throws on a K outside table 5.1.3-3
    for (int k = 0; k < K; ++k)
        if (c[k] > 1 && c[k] != k_null_bit)
            throw std::invalid_argument(
                "mimo_gpu::turbo_encode: bit " + std::to_string(k) + " is " +
                std::to_string(int(c[k])) + ", not 0, 1 or a filler (k_null_bit)");
    constituent_encoder first, second;
    for (int k = 0; k < K; ++k) {
        const bool filler = c[k] == k_null_bit;
        const uint8_t x = encoder_input(c[k]);
        const uint8_t z = first.push(x);
        d0[k] = filler ? k_null_bit : x;
        d1[k] = filler ? k_null_bit : z;
        d2[k] = second.push(encoder_input(c[qpp.pi(k)]));
    }
    // Tail bits of the first encoder (x, z) and the second (x', z'), 5.1.3.2.2.
    const tail_bits t1 = terminate(first);
    const tail_bits t2 = terminate(second);
    const uint8_t d0_tail[4] = { t1.x[0], t1.z[1], t2.x[0], t2.z[1] };
    const uint8_t d1_tail[4] = { t1.z[0], t1.x[2], t2.z[0], t2.x[2] };
    const uint8_t d2_tail[4] = { t1.x[1], t1.z[2], t2.x[1], t2.z[2] };
    for (int i = 0; i < 4; ++i) {
        d0[K + i] = d0_tail[i];
        d1[K + i] = d1_tail[i];
        d2[K + i] = d2_tail[i];
    }
}

} // namespace mimo_gpu
