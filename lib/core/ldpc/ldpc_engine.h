// The engines behind ldpc_decoder (CPU, CUDA) and what they share: the lifted
// graph as layers, which layers a block needs, and the check-node rules. Min-sum
// (normalized and offset) runs in IEEE half precision on both engines: the
// CUDA kernel two code blocks to a thread in half2, the CPU in float rounded to
// half after every operation, which is exactly half arithmetic (float carries
// 24 >= 2 x 11 + 2 significand bits, so rounding twice rounds once), so the two
// agree bit for bit. Sum-product stays in float (ldpc_check), its logarithms
// and tanh differing between the libraries in the last ulp.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/nr_ldpc.h>
#include <mimo_gpu/types.h>

#include "../runtime/host_device.h"

#include <math.h>
#include <memory>
#include <stdexcept>
#include <vector>

namespace mimo_gpu {
namespace detail {

/// The LLR the transport-block decoders give a filler bit: known to be 0.
constexpr float k_ldpc_known_bit_llr = 1e4f;

/// Messages and a-posteriori LLRs stay within this bound: a saturated input (a
/// known filler bit) stays finite through any sum.
constexpr float k_ldpc_llr_limit = 1e6f;
/// Rows of BG1 have at most 19 edges, of BG2 10.
constexpr int k_ldpc_max_row_degree = 19;

/// Min-sum's half-precision LLRs are bounded by this (a power of two): a check
/// message is at most this too, so q = L - R stays within 2x and L + R within
/// 3x, below half's largest finite value (65504).
constexpr float k_ldpc_half_limit = 8192.0f;
/// The smallest positive half (a subnormal): a non-zero input LLR too small
/// for half keeps its sign as this, so no received bit turns into an erasure.
constexpr float k_ldpc_half_tiny = 5.9604644775390625e-8f; // 2^-24

/// The layers a code block needs: the 4 core rows, and each extension row up
/// to the last column with a non-zero LLR (an extension row whose own parity
/// column is all zero, a bit not sent, sends only zero messages to the rest:
/// skipping it changes no other LLR). last_column: the last base graph column
/// holding a non-zero LLR, -1 for none.
MIMO_HD int ldpc_active_rows(int last_column, int info_columns, int rows)
{
    const int r = last_column - info_columns + 1;
    return r < 4 ? 4 : (r > rows ? rows : r);
}

/// The base graph's edges row by row (the layers): row r's edges are
/// [row_start[r], row_start[r + 1]); column and shift (mod Zc) per edge.
struct ldpc_layers {
    std::vector<int> row_start, column, shift;
    static ldpc_layers of(const ldpc_code& code);
};

class ldpc_engine
{
public:
    virtual ~ldpc_engine() = default;
    virtual backend kind() const = 0;
    /// Host memory; results: count entries. The CPU engine gets finite LLRs
    /// (ldpc_decoder checks them); the CUDA kernels check as they read.
    virtual void decode(const float* llr,
                        size_t count,
                        uint8_t* bits,
                        float* app,
                        ldpc_block_result* results) = 0;
    /// Device memory on `stream` (CUDA engine only): float LLRs, or int8 ones
    /// (scale * value) when d_llr8 is set; results stay on the device.
    virtual void decode_device(const float* d_llr,
                               const int8_t* d_llr8,
                               float scale,
                               size_t count,
                               uint8_t* d_bits,
                               float* d_app,
                               cuda_stream_t stream)
    {
        (void)d_llr, (void)d_llr8, (void)scale, (void)count, (void)d_bits, (void)d_app,
            (void)stream;
        throw std::logic_error(
            "mimo_gpu: LDPC decoder: decode_device needs the CUDA backend");
    }
    /// Waits for `stream`; the results of the last decode_device. A block with a
    /// non-finite LLR throws std::invalid_argument naming it.
    virtual std::vector<ldpc_block_result> device_results(cuda_stream_t stream)
    {
        (void)stream;
        throw std::logic_error(
            "mimo_gpu: LDPC decoder: device_results needs the CUDA backend");
    }
};

std::unique_ptr<ldpc_engine> make_cpu_ldpc_engine(const ldpc_code& code,
                                                  const ldpc_decoder_config& config);
std::unique_ptr<ldpc_engine>
make_cuda_ldpc_engine(const ldpc_code& code,
                      const ldpc_decoder_config& config); // ldpc_decoder.cu

MIMO_HD float ldpc_clamp(float v)
{
    return v > k_ldpc_llr_limit ? k_ldpc_llr_limit
                                : (v < -k_ldpc_llr_limit ? -k_ldpc_llr_limit : v);
}

/// phi(x) = -ln tanh(x / 2), its own inverse on (0, inf): sum-product's
/// magnitude is phi(sum of the others' phi(|Q|)). Float's tanh rounds to 1
/// beyond ~17, so a message saturates at phi(1e-7) = 16.8.
MIMO_HD float ldpc_phi(float x)
{
    x = x > 1e-7f ? x : 1e-7f;
    if (x > 30.0f)
        return 2.0f * expf(-x); // -ln tanh(x/2) ~ 2 e^-x
    return -logf(tanhf(0.5f * x));
}

/// One lifted check's reduction over its edges' variable-to-check values Q.
struct ldpc_check {
    float min1 = k_infinity, min2 = k_infinity, phi_sum = 0.0f;
    int argmin = -1;
    bool negative = false;

    MIMO_HD void add(float q, int k, bool sum_product)
    {
        const float a = fabsf(q);
        negative ^= q < 0.0f;
        if (a < min1) {
            min2 = min1;
            min1 = a;
            argmin = k;
        } else if (a < min2) {
            min2 = a;
        }
        if (sum_product)
            phi_sum += ldpc_phi(a);
    }

    /// The check-to-variable message to edge k, whose Q is q.
    MIMO_HD float message(float q, int k, const ldpc_decoder_config& rule) const
    {
        const float others = k == argmin ? min2 : min1;
        float magnitude;
        if (rule.algorithm == ldpc_algorithm::normalized_min_sum)
            magnitude = rule.scale * others;
        else if (rule.algorithm == ldpc_algorithm::offset_min_sum)
            magnitude = others - rule.offset > 0.0f ? others - rule.offset : 0.0f;
        else {
            const float rest = phi_sum - ldpc_phi(fabsf(q));
            magnitude = ldpc_phi(rest > 0.0f ? rest : 0.0f);
        }
        const bool sign = negative ^ (q < 0.0f); // the others' sign
        return ldpc_clamp(sign ? -magnitude : magnitude);
    }
};

} // namespace detail
} // namespace mimo_gpu
