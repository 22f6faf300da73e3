// Simulation source for device-resident chains (channel source -> detector ->
// error counter on the GPU): a counter-based generator, so that any batching
// gives the same stream, on the CPU and on CUDA alike.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/types.h>

#include <memory>

namespace mimo_gpu {

class channel_generator_engine; // CPU or CUDA, lib/core/channel/

/// Simulation source drawn from a counter-based generator (Philox4x32-10, keyed by
/// the seed): problem p of the stream gets its bits, and channel c its H, from the
/// generator at counters that depend only on (seed, p or c), so the stream is the
/// same whatever the batch sizes, on the CPU and on CUDA (bits exactly; H and y to
/// float rounding, since Box-Muller uses logf/sinf/cosf). i.i.d. Rayleigh H (CN(0,1)
/// entries), one per channel of S consecutive problems; n ~ CN(0, N0 I); y = H s + n;
/// symbols from constellation(mod) (3GPP mapping, unit energy), bits uniform 0/1
/// bytes, stream t's Q bits at [t*Q, t*Q+Q) as everywhere in the project.
/// Problem p = c*S + s of the stream uses channel c.
///
/// Not the stream of channel_simulator (a sequential mt19937_64): a different
/// generator, chosen because a GPU thread can draw any problem on its own.
class channel_generator
{
public:
    /// Throws std::invalid_argument on a bad shape (mimo_shape::validate) or S < 1,
    /// std::runtime_error when backend::cuda is asked for and unavailable.
    channel_generator(mimo_shape shape,
                      modulation mod,
                      uint64_t seed,
                      int symbols_per_channel = 1,
                      backend requested = backend::automatic);
    ~channel_generator();
    channel_generator(channel_generator&&) noexcept;
    channel_generator& operator=(channel_generator&&) noexcept;

    backend active_backend() const;
    const mimo_shape& shape() const { return m_shape; }
    int bits_per_problem() const { return m_shape.nt * m_bits_per_symbol; } ///< nt * Q
    int symbols_per_channel() const { return m_symbols_per_channel; }

    /// Host memory: channels [first_channel, first_channel + channels) of the stream:
    /// bits: channels*S*nt*Q bytes, H: channels*nr*nt, y: channels*S*nr.
    /// Throws std::invalid_argument on a bad n0 (check_noise_variance), null
    /// pointers, or a range past the end of the stream (problem index >= 2^64).
    ///
    /// given_bits (optional, channels*S*nt*Q bytes, non-zero means 1): the bits to
    /// send instead of drawn ones (a coded stream, e.g. transport blocks); `bits`
    /// then gets them as 0/1, or may be null (not copied out), and H and the
    /// noise are the stream's own as without.
    void generate(uint64_t first_channel,
                  size_t channels,
                  float n0,
                  uint8_t* bits,
                  cfloat* H,
                  cfloat* y,
                  const uint8_t* given_bits = nullptr);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else
    /// std::logic_error). Allocates nothing and never synchronises.
    void generate_device(uint64_t first_channel,
                         size_t channels,
                         float n0,
                         uint8_t* d_bits,
                         cfloat* d_H,
                         cfloat* d_y,
                         cuda_stream_t stream,
                         const uint8_t* d_given_bits = nullptr);

private:
    void check(uint64_t first_channel,
               size_t channels,
               float n0,
               const void* bits,
               const void* H,
               const void* y,
               const char* call) const;

    mimo_shape m_shape;
    int m_bits_per_symbol;
    int m_symbols_per_channel;
    std::unique_ptr<channel_generator_engine> m_engine;
};

/// Bits whose hard decision from the LLR (L < 0 -> 1, else 0; positive means bit 0,
/// and so do 0 and NaN) differs from bits[i] != 0, over n values. Host memory.
uint64_t count_bit_errors(const float* llr, const uint8_t* bits, size_t n);

/// Errors of decisions against the bits sent, over `items` items of bits_per_item
/// bits each: erroneous bits, and items with at least one (a transport block in
/// error, a symbol vector in error).
struct error_counts {
    uint64_t bits = 0;
    uint64_t items = 0;
};
/// From LLRs (hard decision as count_bit_errors), host memory.
error_counts
count_errors(const float* llr, const uint8_t* bits, size_t items, size_t bits_per_item);
/// From hard decisions (bytes, non-zero means 1; a decoder's output), host memory.
error_counts count_errors(const uint8_t* decided,
                          const uint8_t* bits,
                          size_t items,
                          size_t bits_per_item);
/// Device memory, asynchronous on `stream`: adds the counts into d_counts[0]
/// (bits) and d_counts[1] (items), device unsigned long longs. CUDA builds only
/// (else std::logic_error); items = 0 adds nothing.
void count_errors_device(const float* d_llr,
                         const uint8_t* d_bits,
                         size_t items,
                         size_t bits_per_item,
                         unsigned long long* d_counts,
                         cuda_stream_t stream);
void count_errors_device(const uint8_t* d_decided,
                         const uint8_t* d_bits,
                         size_t items,
                         size_t bits_per_item,
                         unsigned long long* d_counts,
                         cuda_stream_t stream);

/// Device memory, asynchronous on `stream`: adds the count into *d_count (a device
/// unsigned long long). CUDA builds only (else std::logic_error). n = 0 adds nothing.
void count_bit_errors_device(const float* d_llr,
                             const uint8_t* d_bits,
                             size_t n,
                             unsigned long long* d_count,
                             cuda_stream_t stream);

} // namespace mimo_gpu
