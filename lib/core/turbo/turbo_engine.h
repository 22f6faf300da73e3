// The interface behind mimo_gpu::lte_turbo_decoder (CPU and CUDA), and the host
// side planning of a batch that both share.
#pragma once

#include "turbo_batch.h"

#include <mimo_gpu/lte_turbo_decoder.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

namespace mimo_gpu {

namespace detail {

/// Descriptors of one batch: blocks, windows, and the QPP permutations of the
/// block sizes in it (interleavers are kept across calls).
class turbo_batch_plan
{
public:
    /// Throws std::invalid_argument naming the first K that is not a table size.
    /// Keeps the plan when K, window and training are those of the last complete
    /// build.
    void build(const std::vector<int>& K, int window, int training);
    /// What the plan was built for (the CUDA engine keeps device plans by it).
    const std::vector<int>& block_sizes() const { return m_K; }
    int window() const { return m_window; }
    int training() const { return m_training; }

    std::vector<turbo_block_desc> blocks;
    std::vector<turbo_window_desc> windows;
    std::vector<int32_t> permutations;
    size_t total_bits = 0, total_llr = 0;
    int max_window = 0; ///< longest window: the scratch holds this many stages per window
    /// Most training stages (both prefixes) of a window: they are run, not stored.
    int max_training = 0;
    size_t scratch_floats() const
    {
        return size_t(k_stage_words) * size_t(max_window) * windows.size();
    }

private:
    std::map<int, qpp_interleaver> m_interleavers;
    std::vector<int> m_K; ///< what the current plan was built for (empty while building)
    int m_window = 0, m_training = 0;
};

/// CRC generator polynomial with its x^L term, and L.
uint32_t crc_generator(crc_type t);
/// x^n mod g for n = 0..count-1: a bit string's remainder is the XOR of the entries
/// of its ones (bit i of N at n = N - 1 - i), zero when its CRC passes.
std::vector<uint32_t> crc_powers(crc_type t, size_t count);

} // namespace detail

class turbo_engine
{
public:
    virtual ~turbo_engine() = default;
    virtual backend kind() const = 0;
    /// Decodes the batch that `plan` describes. coded_extrinsic (may be null):
    /// plan.total_llr floats, detail::coded_extrinsic of every input position.
    virtual std::vector<turbo_block_result>
    decode(const float* llr, uint8_t* bits, float* app_llr, float* coded_extrinsic) = 0;
    virtual void decode_device(const float*, uint8_t*, float*, float*, cuda_stream_t)
    {
        throw std::logic_error(
            "mimo_gpu::lte_turbo_decoder::decode_device needs the CUDA backend");
    }
    virtual void check_device_status(cuda_stream_t)
    {
        throw std::logic_error(
            "mimo_gpu::lte_turbo_decoder::check_device_status needs the CUDA backend");
    }
    virtual lte_turbo_decoder::device_block_results device_results() const
    {
        throw std::logic_error(
            "mimo_gpu::lte_turbo_decoder::device_results needs the CUDA backend");
    }

    detail::turbo_batch_plan plan; ///< built by lte_turbo_decoder before each decode
};

namespace detail {
std::unique_ptr<turbo_engine> make_cpu_turbo_engine(const turbo_decoder_config& config);
std::unique_ptr<turbo_engine> make_cuda_turbo_engine(
    const turbo_decoder_config& config); // defined in the .cu (CUDA builds only)
} // namespace detail
} // namespace mimo_gpu
