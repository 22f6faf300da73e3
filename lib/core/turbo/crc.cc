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
        return { 0, 0 };
    case crc_type::crc24a: // D^24+D^23+D^18+D^17+D^14+D^11+D^10+D^7+D^6+D^5+D^4+D^3+D+1
        return { 24, 0x864CFBu };
    case crc_type::crc24b: // D^24+D^23+D^6+D^5+D+1
        return { 24, 0x800063u };
    case crc_type::crc16: // D^16+D^12+D^5+1
        return { 16, 0x1021u };
    case crc_type::crc8: // D^8+D^7+D^4+D^3+D+1
        return { 8, 0x9Bu };
    }
    throw std::invalid_argument("mimo_gpu: unknown crc_type " +
                                std::to_string(static_cast<int>(t)));
}

} // namespace

int crc_length(crc_type t) { return generator(t).length; }

namespace {

/// One bit of the division of a(D) D^L by g(D). Only a 1 is a one: filler bits
/// (k_null_bit) count as 0 (5.1.2).
uint32_t shift_bit(const crc_generator& g, uint32_t reg, uint8_t bit)
{
    const uint32_t top = 1u << (g.length - 1), mask = (top << 1) - 1;
    const bool feedback = ((reg & top) != 0) != (bit == 1);
    return ((reg << 1) & mask) ^ (feedback ? g.polynomial : 0u);
}

/// The register after 8 input bits, as a table of the top 8 register bits
/// xor the input byte (every generator here has L >= 8): a transport block's
/// CRC a byte at a time, not a bit (the CPU decoder checks every code block
/// after every iteration).
struct byte_table {
    uint32_t next[256];
    explicit byte_table(const crc_generator& g)
    {
        for (uint32_t b = 0; b < 256; ++b) {
            uint32_t reg = b << (g.length - 8);
            for (int i = 0; i < 8; ++i)
                reg = shift_bit(g, reg, 0);
            next[b] = reg;
        }
    }
};

const byte_table& table_of(crc_type t)
{
    static const byte_table crc24a(generator(crc_type::crc24a)),
        crc24b(generator(crc_type::crc24b)), crc16(generator(crc_type::crc16)),
        crc8(generator(crc_type::crc8));
    switch (t) {
    case crc_type::crc24a:
        return crc24a;
    case crc_type::crc24b:
        return crc24b;
    case crc_type::crc16:
        return crc16;
    default:
        return crc8;
    }
}

} // namespace

uint32_t crc_parity(crc_type t, const uint8_t* bits, size_t count)
{
    const crc_generator g = generator(t);
    if (g.length == 0)
        return 0;
    const uint32_t mask = (uint32_t(1) << g.length) - 1;
    const byte_table& table = table_of(t);
    uint32_t reg = 0; // register initialised to 0
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        uint32_t byte = 0;
        for (int k = 0; k < 8; ++k)
            byte = (byte << 1) | uint32_t(bits[i + k] == 1);
        reg = ((reg << 8) & mask) ^ table.next[((reg >> (g.length - 8)) ^ byte) & 0xffu];
    }
    for (; i < count; ++i)
        reg = shift_bit(g, reg, bits[i]);
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
