// 3GPP LTE turbo code building blocks (TS 36.212 5.1.1 - 5.1.4.1): QPP
// interleaver, CRC, code block segmentation, the turbo encoder and rate
// matching. Bits are uint8_t 0/1; LLRs are float, positive means 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mimo_gpu {

/// Marks a <NULL> (filler) bit in encoder outputs (TS 36.212 5.1.2, 5.1.3.2).
constexpr uint8_t k_null_bit = 2;

// ---- QPP interleaver (5.1.3.2.3, table 5.1.3-3) -----------------------------

class qpp_interleaver
{
public:
    /// The 188 code block sizes K of table 5.1.3-3, ascending (40 ... 6144).
    static const std::vector<int>& block_sizes();
    static bool is_block_size(int K);
    /// Smallest table K >= k; throws std::invalid_argument above 6144.
    static int next_block_size(int k);

    /// Throws std::invalid_argument naming K when K is not in the table.
    explicit qpp_interleaver(int K);

    int K() const { return m_K; }
    int f1() const { return m_f1; }
    int f2() const { return m_f2; }
    /// c'_i = c_{pi(i)}, pi(i) = (f1 i + f2 i^2) mod K.
    int pi(int i) const { return m_pi[i]; }
    const std::vector<int32_t>& permutation() const { return m_pi; }

private:
    int m_K, m_f1, m_f2;
    std::vector<int32_t> m_pi;
};

// ---- CRC (5.1.1) -------------------------------------------------------------

enum class crc_type { none, crc24a, crc24b, crc16, crc8 };

int crc_length(crc_type t);
/// Parity bits p0..p(L-1) of `bits` (shift register initialised to 0), as an integer, p0
/// in the top bit.
uint32_t crc_parity(crc_type t, const uint8_t* bits, size_t count);
/// Writes bits followed by their L parity bits into `out` (count + L bytes). `bits` may
/// equal `out`.
void crc_attach(crc_type t, const uint8_t* bits, size_t count, uint8_t* out);
/// True when the last L of `count` bits are the CRC of the ones before them.
bool crc_check(crc_type t, const uint8_t* bits, size_t count);

// ---- Code block segmentation (5.1.2) ------------------------------------------

struct code_block_segmentation {
    int B = 0; ///< input bits (transport block + CRC24A)
    int C = 0; ///< code blocks
    int K_plus = 0, K_minus = 0, C_plus = 0, C_minus = 0;
    int F = 0;          ///< filler bits at the start of block 0
    int L = 0;          ///< CRC24B bits per block (0 when C == 1)
    std::vector<int> K; ///< size of each code block r (K_minus for r < C_minus)

    /// Throws std::invalid_argument on B < 1 or B larger than the code can carry.
    static code_block_segmentation for_bits(int B);

    /// Splits b (B bits) into C code blocks of K[r] bits: filler bits (k_null_bit)
    /// first in block 0, then the data, then CRC24B when C > 1 (filler counted as 0).
    std::vector<std::vector<uint8_t>> segment(const uint8_t* b) const;
    /// Inverse for decoded blocks (K[r] bits each, filler positions ignored):
    /// writes the B bits; false if any block's CRC24B fails (C > 1).
    bool desegment(const std::vector<const uint8_t*>& blocks, uint8_t* b) const;
};

// ---- Turbo encoder (5.1.3.2) --------------------------------------------------

/// Encodes one code block of K bits (k_null_bit allowed for filler bits, which
/// enter the encoder as 0 and give <NULL> in d0 and d1). Writes d0, d1, d2 of
/// K + 4 bits each, the 12 tail bits arranged as in 5.1.3.2.2.
void turbo_encode(const uint8_t* c, int K, uint8_t* d0, uint8_t* d1, uint8_t* d2);

// ---- Rate matching (5.1.4.1) --------------------------------------------------

/// Rate matcher of one code block of size K (D = K + 4), circular buffer size
/// Ncb (default: the whole buffer, Kw = 3 Kpi; smaller for a limited soft buffer).
class rate_matcher
{
public:
    explicit rate_matcher(int K, int Ncb = 0);

    int K() const { return m_K; }
    int D() const { return m_K + 4; }
    int Kpi() const { return m_Kpi; }
    int Kw() const { return 3 * m_Kpi; }
    int Ncb() const { return m_Ncb; }
    /// Start of redundancy version rv (0..3) in the circular buffer: k0.
    int k0(int rv) const;

    /// e_0..e_(E-1) from d0, d1, d2 (D bits each, <NULL> skipped), redundancy version rv.
    void match(const uint8_t* d0,
               const uint8_t* d1,
               const uint8_t* d2,
               int E,
               int rv,
               uint8_t* e) const;
    /// LLRs of d0, d1, d2 (D each, written as [d0 | d1 | d2]) from E received LLRs:
    /// repeated bits add up; bits never sent and <NULL> positions give 0.
    /// `filler` is the F of the segmentation for this block (d0 and d1 are <NULL>
    /// at positions < F), as match() saw it in the encoder's output.
    void dematch(const float* e, int E, int rv, int filler, float* d) const;
    /// dematch() as a gather: bit selection visits the same bits in the same order on
    /// every turn of the circular buffer, so d[s] is the sum of e_j over j = first[s],
    /// first[s] + P, first[s] + 2P, ... below E. Writes first[s] for the 3 D positions
    /// s of [d0 | d1 | d2] (-1 where no bit is ever sent: dummy, filler, beyond Ncb)
    /// and returns P, the bits sent per turn.
    int dematch_order(int rv, int filler, int32_t* first) const;

private:
    int m_K, m_Kpi, m_Ncb;
    std::vector<int32_t> m_buffer_to_stream; // circular buffer position -> index in
                                             // [d0|d1|d2] or -1 (dummy)
};

} // namespace mimo_gpu
