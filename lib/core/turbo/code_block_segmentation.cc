#include <mimo_gpu/lte_turbo_code.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

namespace {

constexpr int k_max_code_block = 6144; // Z
constexpr int k_block_crc_bits = 24;   // L when C > 1
// Not a limit of the standard (LTE transport blocks stay below 400 kbit): it
// keeps every size computed from B, down to the coded bits, well inside int.
constexpr int k_max_input_bits = 1 << 24;

/// Largest table K below K_plus (K_plus > 40).
int previous_block_size(int K_plus)
{
    const auto& sizes = qpp_interleaver::block_sizes();
    return *(std::lower_bound(sizes.begin(), sizes.end(), K_plus) - 1);
}

} // namespace

code_block_segmentation code_block_segmentation::for_bits(int B)
{
    if (B < 1 || B > k_max_input_bits)
        throw std::invalid_argument(
            "mimo_gpu: code block segmentation of B = " + std::to_string(B) +
            " bits (expected 1.." + std::to_string(k_max_input_bits) + ")");
    code_block_segmentation s;
    s.B = B;
    if (B <= k_max_code_block) {
        s.L = 0;
        s.C = 1;
    } else {
        s.L = k_block_crc_bits;
        s.C = (B + (k_max_code_block - s.L) - 1) / (k_max_code_block - s.L);
    }
    const int B_prime = B + s.C * s.L;
    s.K_plus = qpp_interleaver::next_block_size((B_prime + s.C - 1) / s.C);
    if (s.C == 1) {
        s.C_plus = 1;
    } else {
        s.K_minus = previous_block_size(s.K_plus);
        s.C_minus = (s.C * s.K_plus - B_prime) / (s.K_plus - s.K_minus);
        s.C_plus = s.C - s.C_minus;
    }
    s.F = s.C_plus * s.K_plus + s.C_minus * s.K_minus - B_prime;
    s.K.assign(s.C, s.K_plus);
    std::fill(s.K.begin(), s.K.begin() + s.C_minus, s.K_minus);
    return s;
}

std::vector<std::vector<uint8_t>> code_block_segmentation::segment(const uint8_t* b) const
{
    std::vector<std::vector<uint8_t>> blocks(C);
    int s = 0;
    for (int r = 0; r < C; ++r) {
        auto& c = blocks[r];
        c.resize(K[r]);
        const int filler = r == 0 ? F : 0;
        const int data = K[r] - L - filler;
        std::fill(c.begin(), c.begin() + filler, k_null_bit);
        std::copy(b + s, b + s + data, c.begin() + filler);
        s += data;
        if (L > 0) // the CRC treats the filler bits as 0
            crc_attach(crc_type::crc24b, c.data(), K[r] - L, c.data());
    }
    return blocks;
}

bool code_block_segmentation::desegment(const std::vector<const uint8_t*>& blocks,
                                        uint8_t* b) const
{
    if (static_cast<int>(blocks.size()) != C)
        throw std::invalid_argument(
            "mimo_gpu: desegment got " + std::to_string(blocks.size()) +
            " code blocks, the segmentation has C = " + std::to_string(C));
    bool all_ok = true;
    std::vector<uint8_t> block;
    int s = 0;
    for (int r = 0; r < C; ++r) {
        const int filler = r == 0 ? F : 0;
        const int data = K[r] - L - filler;
        if (L > 0) {
            // Whatever a decoder put at the filler positions, the CRC saw zeros there.
            block.assign(blocks[r], blocks[r] + K[r]);
            std::fill(block.begin(), block.begin() + filler, 0);
            all_ok = crc_check(crc_type::crc24b, block.data(), K[r]) && all_ok;
        }
        std::copy(blocks[r] + filler, blocks[r] + filler + data, b + s);
        s += data;
    }
    return all_ok;
}

} // namespace mimo_gpu
