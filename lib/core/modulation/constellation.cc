#include <mimo_gpu/constellation.h>
#include <string>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mimo_gpu {

namespace {

std::string canonical(std::string s)
{
    std::string out;
    for (unsigned char c : s)
        if (std::isalnum(c))
            out += static_cast<char>(std::tolower(c));
    return out;
}

/// 3GPP PAM amplitude (unnormalised) of the dimension bits c[0..m-1] (TS 38.211 5.1):
/// f_k = (1 - 2 c_k) * (2^(m-1-k) - f_(k+1)), f_(m-1) = 1 - 2 c_(m-1).
int pam_amplitude_3gpp(uint32_t label, int m)
{
    auto bit = [&](int k) { return int((label >> (m - 1 - k)) & 1u); };
    int f = 1 - 2 * bit(m - 1);
    for (int k = m - 2; k >= 0; --k)
        f = (1 - 2 * bit(k)) * ((1 << (m - 1 - k)) - f);
    return f;
}

} // namespace

modulation modulation_from_string(const std::string& name)
{
    const std::string n = canonical(name);
    if (n == "qpsk" || n == "4qam" || n == "qam4")
        return modulation::qpsk;
    if (n == "16qam" || n == "qam16")
        return modulation::qam16;
    if (n == "64qam" || n == "qam64")
        return modulation::qam64;
    if (n == "256qam" || n == "qam256")
        return modulation::qam256;
    if (n == "1024qam" || n == "qam1024")
        return modulation::qam1024;
    throw std::invalid_argument("mimo_gpu: unknown modulation '" + name +
                                "' (expected qpsk, 16qam, 64qam, 256qam or 1024qam)");
}

std::string to_string(modulation m)
{
    switch (m) {
    case modulation::qpsk:
        return "qpsk";
    case modulation::qam16:
        return "16qam";
    case modulation::qam64:
        return "64qam";
    case modulation::qam256:
        return "256qam";
    case modulation::qam1024:
        return "1024qam";
    }
    throw std::invalid_argument("mimo_gpu: invalid modulation value");
}

constellation::constellation(modulation m) : m_kind(m)
{
    switch (m) {
    case modulation::qpsk:
        m_bits = 2;
        break;
    case modulation::qam16:
        m_bits = 4;
        break;
    case modulation::qam64:
        m_bits = 6;
        break;
    case modulation::qam256:
        m_bits = 8;
        break;
    case modulation::qam1024:
        m_bits = 10;
        break;
    default:
        throw std::invalid_argument("mimo_gpu: invalid modulation value");
    }
    m_order = 1 << m_bits;
    const int m_dim = m_bits / 2;
    m_levels = 1 << m_dim;
    // Unit average energy: E|s|^2 = 2 (M - 1) / 3 before scaling.
    m_scale = float(1.0 / std::sqrt(2.0 * (m_order - 1) / 3.0));

    m_pam_amplitude.resize(m_levels);
    m_pam_label.resize(m_levels);
    m_level_of_label.resize(m_levels);
    for (uint32_t label = 0; label < uint32_t(m_levels); ++label) {
        const int a = pam_amplitude_3gpp(label, m_dim); // odd integer in [-(L-1), L-1]
        const int level = (a + m_levels - 1) / 2;
        m_pam_label[level] = label;
        m_level_of_label[label] = level;
    }
    for (int level = 0; level < m_levels; ++level)
        m_pam_amplitude[level] = m_scale * float(2 * level - (m_levels - 1));

    // Full label b0 b1 ... b(Q-1): even bits carry I, odd bits carry Q.
    m_points.resize(m_order);
    for (uint32_t label = 0; label < uint32_t(m_order); ++label) {
        uint32_t i_label = 0, q_label = 0;
        for (int k = 0; k < m_bits; ++k) {
            const uint32_t b = (label >> (m_bits - 1 - k)) & 1u;
            if (k % 2 == 0)
                i_label = (i_label << 1) | b;
            else
                q_label = (q_label << 1) | b;
        }
        m_points[label] = cfloat(m_pam_amplitude[m_level_of_label[i_label]],
                                 m_pam_amplitude[m_level_of_label[q_label]]);
    }
}

void constellation::map(const uint8_t* bits, cfloat* symbols, size_t count) const
{
    for (size_t s = 0; s < count; ++s) {
        uint32_t label = 0;
        for (int k = 0; k < m_bits; ++k) {
            const uint8_t b = bits[s * m_bits + k];
            if (b > 1)
                throw std::invalid_argument("mimo_gpu::constellation::map: bit " +
                                            std::to_string(s * m_bits + k) + " is " +
                                            std::to_string(int(b)) + ", expected 0 or 1");
            label = (label << 1) | b;
        }
        symbols[s] = m_points[label];
    }
}

void constellation::hard_demap(const cfloat* symbols, uint8_t* bits, size_t count) const
{
    const int m_dim = m_bits / 2;
    // The level is clamped while still a float: converting a float beyond the
    // int range (a coordinate near 1e30, or Inf) is undefined behaviour. Huge
    // coordinates give the outermost level; NaN gives level 0.
    const float top = float(m_levels - 1);
    auto slice = [&](float x) {
        const float g = 0.5f * (x / m_scale + top);
        const float clamped = g > 0.0f ? (g < top ? g : top) : 0.0f;
        return int(std::floor(clamped + 0.5f));
    };
    for (size_t s = 0; s < count; ++s) // checked first: nothing is written for a bad call
        if (std::isnan(symbols[s].real()) || std::isnan(symbols[s].imag()))
            throw std::invalid_argument("mimo_gpu::constellation::hard_demap: symbol " +
                                        std::to_string(s) +
                                        " is NaN: it has no nearest constellation point");
    for (size_t s = 0; s < count; ++s) {
        const uint32_t i_label = m_pam_label[slice(symbols[s].real())];
        const uint32_t q_label = m_pam_label[slice(symbols[s].imag())];
        for (int k = 0; k < m_dim; ++k) {
            bits[s * m_bits + 2 * k] = uint8_t((i_label >> (m_dim - 1 - k)) & 1u);
            bits[s * m_bits + 2 * k + 1] = uint8_t((q_label >> (m_dim - 1 - k)) & 1u);
        }
    }
}

} // namespace mimo_gpu
