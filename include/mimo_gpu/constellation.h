// 3GPP QAM constellations (TS 36.211 7.1, TS 38.211 5.1) with their bit labels.
#pragma once

#include <mimo_gpu/types.h>

#include <string>
#include <vector>

namespace mimo_gpu {

enum class modulation { qpsk, qam16, qam64, qam256, qam1024 };

/// "qpsk", "16qam", "64qam", "256qam", "1024qam" (also "4qam", "qam16", "16-qam", any
/// case); anything else throws std::invalid_argument listing the valid names.
modulation modulation_from_string(const std::string& name);
std::string to_string(modulation m);

/// A square QAM constellation with unit average energy. Its in-phase part is a
/// PAM of L = sqrt(M) levels carried by the even label bits (b0, b2, ...), its
/// quadrature part the same PAM carried by the odd bits (b1, b3, ...), exactly
/// as 3GPP defines it; detectors use that split (real-valued decomposition).
class constellation
{
public:
    explicit constellation(modulation m);

    modulation kind() const { return m_kind; }
    int order() const { return m_order; }                 ///< M
    int bits_per_symbol() const { return m_bits; }        ///< Q = log2(M)
    int pam_levels() const { return m_levels; }           ///< L = sqrt(M)
    int bits_per_dimension() const { return m_bits / 2; } ///< Q/2
    /// Distance between neighbouring PAM levels is 2*scale();
    /// level i is scale()*(2i - (L-1)).
    float scale() const { return m_scale; }

    /// Amplitude of PAM level index i (0 = most negative).
    float pam_amplitude(int level) const { return m_pam_amplitude[level]; }
    /// The Q/2 label bits of PAM level i, packed MSB first (first bit of the dimension in
    /// the top bit).
    uint32_t pam_label(int level) const { return m_pam_label[level]; }
    /// Level index whose label is `label` (inverse of pam_label).
    int pam_level_of_label(uint32_t label) const { return m_level_of_label[label]; }

    /// Symbol of a label given as an integer whose MSB is b0
    /// (so label = b0 b1 ... b(Q-1)).
    cfloat point(uint32_t label) const { return m_points[label]; }
    const std::vector<cfloat>& points() const { return m_points; }

    /// Maps `count` symbols from `count*Q` bits (one bit per byte, 0 or 1).
    /// Throws std::invalid_argument on a byte other than 0 or 1.
    void map(const uint8_t* bits, cfloat* symbols, size_t count) const;
    /// Nearest-point hard decision of `count` symbols into `count*Q` bits. A
    /// coordinate beyond the outermost level (however large, Inf included) gives
    /// the outermost level; a NaN coordinate has no nearest point: throws
    /// std::invalid_argument naming the symbol, before writing any bits.
    void hard_demap(const cfloat* symbols, uint8_t* bits, size_t count) const;

private:
    modulation m_kind;
    int m_order, m_bits, m_levels;
    float m_scale;
    std::vector<float> m_pam_amplitude;
    std::vector<uint32_t> m_pam_label;
    std::vector<int> m_level_of_label;
    std::vector<cfloat> m_points;
};

} // namespace mimo_gpu
