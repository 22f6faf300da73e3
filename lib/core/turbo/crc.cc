#include <mimo_gpu/lte_turbo_code.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

namespace {

struct crc_generator {
    int length;
    uint32_t polynomial; ///< g(D) without its D^L term, D^(L-1) in the top bit
};

// TS 36.212 5.1.1 generator polynomials.
crc_generator generator(crc_type t)
{
    switch (t) {
    case crc_type::none:
        return {0, 0};
    case crc_type::crc24a: // D^24+D^23+D^18+D^17+D^14+D^11+D^10+D^7+D^6+D^5+D^4+D^3+D+1
        return {24, 0x864CFBu};
    case crc_type::crc24b: // D^24+D^23+D^6+D^5+D+1
        return {24, 0x800063u};
    case crc_type::crc16: // D^16+D^12+D^5+1
        return {16, 0x1021u};
    case crc_type::crc8: // D^8+D^7+D^4+D^3+D+1
        return {8, 0x9Bu};
    }
    throw std::invalid_argument("mimo_gpu: unknown crc_type " + std::to_string(static_cast<int>(t)));
}

} // namespace

int crc_length(crc_type t) { return generator(t).length; }

uint32_t crc_parity(crc_type t, const uint8_t* bits, size_t count)
{
    const crc_generator g = generator(t);
    if (g.length == 0)
        return 0;
    const uint32_t top = 1u << (g.length - 1);
    const uint32_t mask = (top << 1) - 1;
    // Bit-serial division of a(D) D^L by g(D), register initialised to 0.
    // Only a 1 is a one: filler bits (k_null_bit) count as 0 (5.1.2).
    uint32_t reg = 0;
    for (size_t i = 0; i < count; ++i) {
        const bool feedback = ((reg & top) != 0) != (bits[i] == 1);
        reg = ((reg << 1) & mask) ^ (feedback ? g.polynomial : 0u);
    }
    return reg;
}

void crc_attach(crc_type t, const uint8_t* bits, size_t count, uint8_t* out)
{
    const uint32_t parity = crc_parity(t, bits, count);
    const int L = crc_length(t);
    if (out != bits)
        std::memmove(out, bits, count);
    for (int i = 0; i < L; ++i) // p0 (the top bit) first
        out[count + i] = static_cast<uint8_t>((parity >> (L - 1 - i)) & 1u);
}

bool crc_check(crc_type t, const uint8_t* bits, size_t count)
{
    const size_t L = static_cast<size_t>(crc_length(t));
    if (count < L)
        return false;
    const size_t data = count - L;
    const uint32_t parity = crc_parity(t, bits, data);
    for (size_t i = 0; i < L; ++i)
        if (bits[data + i] != ((parity >> (L - 1 - i)) & 1u))
            return false;
    return true;
}

} // namespace mimo_gpu
