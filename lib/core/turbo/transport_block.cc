// Transport block format and encoder (TS 36.212 5.1.1 - 5.1.5). The decoder
// side (transport_block_decoder) lives with the turbo decoder.
#include <mimo_gpu/lte_turbo_decoder.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

namespace {

constexpr int k_transport_crc_bits = 24; // CRC24A

void require(bool ok, const std::string& what)
{
    if (!ok)
        throw std::invalid_argument("mimo_gpu: transport block format: " + what);
}

bool is_modulation_order(int Qm)
{
    return Qm == 1 || Qm == 2 || Qm == 4 || Qm == 6 || Qm == 8 || Qm == 10;
}

code_block_segmentation validated_segmentation(const transport_block_format& format)
{
    format.validate();
    return format.segmentation();
}

/// E_r of 5.1.4.1.2: G' = G / group symbols (per layer) shared out over the C
/// blocks, the last gamma = G' mod C blocks one symbol more.
std::vector<int64_t> rate_matched_sizes_of(int64_t G, int C, int group)
{
    const int64_t G_prime = G / group, gamma = G_prime % C;
    std::vector<int64_t> E(C);
    for (int r = 0; r < C; ++r)
        E[r] = group * (r <= C - gamma - 1 ? G_prime / C : (G_prime + C - 1) / C);
    return E;
}

/// The first code block that gets fewer coded bits than the information and
/// CRC bits it carries (E_r < K_r - F_r, a code rate above 1), or -1.
int first_block_above_rate_one(const code_block_segmentation& seg, int64_t G, int group)
{
    const std::vector<int64_t> E = rate_matched_sizes_of(G, seg.C, group);
    for (int r = 0; r < seg.C; ++r)
        if (E[r] < seg.K[r] - (r == 0 ? seg.F : 0))
            return r;
    return -1;
}

/// The smallest G (a multiple of group) with no code block above rate 1. Each
/// E_r grows with G, so a binary search over G / group finds it; C symbols
/// of ceil(max K / group) each are always enough.
int64_t min_G_for(const code_block_segmentation& seg, int group)
{
    const int K_max = *std::max_element(seg.K.begin(), seg.K.end());
    int64_t lo = seg.C, hi = int64_t(seg.C) * ((K_max + group - 1) / group);
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (first_block_above_rate_one(seg, mid * group, group) < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo * group;
}

} // namespace

void transport_block_format::validate() const
{
    require(A >= 1, "A = " + std::to_string(A) + " information bits (expected >= 1)");
    require(G >= 1, "G = " + std::to_string(G) + " coded bits (expected >= 1)");
    require(is_modulation_order(Qm),
            "Qm = " + std::to_string(Qm) + " (expected 1, 2, 4, 6, 8 or 10)");
    require(NL >= 1 && NL <= 4, "NL = " + std::to_string(NL) + " layers (expected 1..4)");
    require(rv >= 0 && rv <= 3, "rv = " + std::to_string(rv) + " (expected 0..3)");
    require(G % (NL * Qm) == 0,
            "G = " + std::to_string(G) +
                " is not a multiple of NL*Qm = " + std::to_string(NL * Qm));
    // segmentation() throws when A is too large to segment.
    const code_block_segmentation seg = segmentation();
    // Every code block needs at least one group of NL*Qm coded bits (E_r > 0).
    require(G / (NL * Qm) >= seg.C,
            "A = " + std::to_string(A) + " needs C = " + std::to_string(seg.C) +
                " code blocks, more than G/(NL*Qm) = " + std::to_string(G / (NL * Qm)));
}

void transport_block_format::validate_for_decoding() const
{
    validate();
    const code_block_segmentation seg = segmentation();
    // A code block needs at least as many coded bits as the bits it carries
    // (K_r less its filler: data and CRCs). With fewer, a code rate above 1, the
    // K_r bits cannot be recovered even without noise, and the turbo decoder
    // would see fewer non-zero LLRs than K_r and report no information.
    const int r = first_block_above_rate_one(seg, G, NL * Qm);
    if (r >= 0) {
        const int carried = seg.K[r] - (r == 0 ? seg.F : 0);
        require(false,
                "G = " + std::to_string(G) +
                    " coded bits are too few for A = " + std::to_string(A) +
                    ": code block " + std::to_string(r) + " would get E = " +
                    std::to_string(rate_matched_sizes_of(G, seg.C, NL * Qm)[r]) +
                    " coded bits for the " + std::to_string(carried) +
                    " information and CRC bits it carries (a code rate above 1 cannot be "
                    "decoded); "
                    "the smallest G for this A, Qm = " +
                    std::to_string(Qm) + " and NL = " + std::to_string(NL) + " is " +
                    std::to_string(min_G_for(seg, NL * Qm)));
    }
}

code_block_segmentation transport_block_format::segmentation() const
{
    const std::string a_is = "A = " + std::to_string(A) + " information bits";
    require(A >= 1 && A <= std::numeric_limits<int>::max() - k_transport_crc_bits,
            a_is + " cannot be segmented");
    try {
        return code_block_segmentation::for_bits(A + k_transport_crc_bits);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("mimo_gpu: transport block format: " + a_is + ": " +
                                    e.what());
    }
}

std::vector<int> transport_block_format::rate_matched_sizes() const
{
    validate();
    const std::vector<int64_t> E = rate_matched_sizes_of(G, segmentation().C, NL * Qm);
    return std::vector<int>(E.begin(), E.end()); // each E_r <= G
}

transport_block_encoder::transport_block_encoder(const transport_block_format& format)
    : m_format(format), m_seg(validated_segmentation(format))
{
}

void transport_block_encoder::encode(const uint8_t* a, uint8_t* f) const
{
    // a -> b = a + CRC24A (5.1.1) -> code blocks (5.1.2).
    std::vector<uint8_t> b(m_seg.B);
    crc_attach(crc_type::crc24a, a, m_format.A, b.data());
    const auto blocks = m_seg.segment(b.data());

    // Each block turbo coded (5.1.3) and rate matched to E_r (5.1.4.1), the
    // results concatenated (5.1.5). Ncb = Kw: no soft-buffer limit.
    const std::vector<int> E = m_format.rate_matched_sizes();
    std::vector<rate_matcher> matchers;
    std::vector<uint8_t> d;
    int offset = 0;
    for (int r = 0; r < m_seg.C; ++r) {
        const int K = m_seg.K[r];
        auto matcher = std::find_if(matchers.begin(),
                                    matchers.end(),
                                    [&](const rate_matcher& m) { return m.K() == K; });
        if (matcher == matchers.end())
            matcher = matchers.emplace(matchers.end(), K);
        const int D = K + 4;
        d.resize(3 * D);
        turbo_encode(blocks[r].data(), K, d.data(), d.data() + D, d.data() + 2 * D);
        matcher->match(
            d.data(), d.data() + D, d.data() + 2 * D, E[r], m_format.rv, f + offset);
        offset += E[r];
    }
}

} // namespace mimo_gpu
