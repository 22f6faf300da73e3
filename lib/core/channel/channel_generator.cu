// CUDA engine of channel_generator, and count_bit_errors_device. H: a thread per
// Philox block of a channel (two entries); bits and y: a thread per problem.
// Each block stages its outputs, which are contiguous in global memory, in
// shared memory and writes them coalesced (any alignment of the caller's
// pointers). Both kernels run channel_draws.h, as the CPU engine does.
#include "../runtime/cuda_buffers.h"
#include "../runtime/cuda_staging.h"
#include "../runtime/warp_reduce.h"
#include "channel_generator_engine.h"

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_channel_threads = 256;
constexpr int k_problem_threads = 128;
constexpr size_t k_max_stage_bytes = 48 * 1024; // the default dynamic shared memory limit

/// The block's draws cover a contiguous range of entries (the channels' H one
/// after the other), which it stages in shared memory and writes coalesced.
__global__ void __launch_bounds__(k_channel_threads) channel_kernel(
    generator_params g, uint64_t first_channel, size_t channels, float* __restrict__ H)
{
    __shared__ float stage[4 * k_channel_threads];
    const size_t draws = size_t(g.channel_draws()), entries = size_t(g.channel_entries());
    const size_t first = size_t(blockIdx.x) * k_channel_threads;
    const size_t end = min(first + k_channel_threads, channels * draws);
    // Entry index in the batch of draw `idx`'s first entry.
    auto entry_of = [&](size_t idx) {
        return (idx / draws) * entries + 2 * (idx % draws);
    };
    const size_t first_entry = entry_of(first);
    const size_t last_entry =
        min(entry_of(end - 1) + 2, ((end - 1) / draws + 1) * entries);

    const size_t idx = first + threadIdx.x;
    if (idx < end) {
        const size_t c = idx / draws;
        const int d = int(idx - c * draws);
        float v[4];
        channel_draw(g, first_channel + c, d, v);
        float* out = stage + 2 * (entry_of(idx) - first_entry);
        const int n = size_t(2 * d + 1) < entries ? 4 : 2;
        for (int k = 0; k < n; ++k)
            out[k] = v[k];
    }
    __syncthreads();
    const int n_floats = int(2 * (last_entry - first_entry));
    for (int i = threadIdx.x; i < n_floats; i += k_channel_threads)
        H[2 * first_entry + i] = stage[i];
}

/// Shared-memory layout of a problem block: per thread, y (2nr floats) and the
/// bits, each at an odd pitch in words so that a thread per problem hits
/// distinct banks.
struct problem_stage {
    int y_pitch;    // floats
    int bits_pitch; // bytes, a multiple of 4
    __host__ __device__ problem_stage(const generator_params& g)
        : y_pitch(2 * g.nr | 1), bits_pitch(4 * (((g.bits_per_problem() + 3) / 4) | 1))
    {
    }
    __host__ __device__ size_t bytes() const
    {
        return size_t(k_problem_threads) * (sizeof(float) * y_pitch + bits_pitch);
    }
};

/// Staged: outputs go through shared memory (up to 384 bytes of y and bits per
/// problem, e.g. 32x8 16-QAM); larger shapes write each problem's outputs
/// straight to global memory.
template <bool Staged>
__global__ void __launch_bounds__(k_problem_threads)
    problem_kernel(generator_params g,
                   uint64_t first_problem,
                   size_t problems,
                   const float* __restrict__ H,
                   const uint8_t* __restrict__ given,
                   uint8_t* __restrict__ bits,
                   float* __restrict__ y)
{
    extern __shared__ float stage[];
    const problem_stage layout(g);
    const size_t S = size_t(g.symbols_per_channel), bpp = size_t(g.bits_per_problem());
    const size_t y_floats = 2 * size_t(g.nr), h_floats = 2 * size_t(g.channel_entries());
    const size_t first = size_t(blockIdx.x) * k_problem_threads;
    const int n = int(min(size_t(k_problem_threads), problems - first));
    float* stage_y = stage;
    uint8_t* stage_bits =
        reinterpret_cast<uint8_t*>(stage + k_problem_threads * layout.y_pitch);

    if (int(threadIdx.x) < n) {
        const size_t q = first + threadIdx.x;
        uint8_t* b = Staged ? stage_bits + threadIdx.x * layout.bits_pitch
                            : (bits ? bits + q * bpp : nullptr);
        float* yy = Staged ? stage_y + threadIdx.x * layout.y_pitch : y + q * y_floats;
        draw_problem(g,
                     first_problem + q,
                     H + (q / S) * h_floats,
                     given ? given + q * bpp : nullptr,
                     b,
                     yy);
    }
    if constexpr (Staged) {
        __syncthreads();
        const int yf = int(y_floats), nb = int(bpp);
        for (int i = threadIdx.x; i < n * yf; i += k_problem_threads)
            y[first * y_floats + i] = stage_y[(i / yf) * layout.y_pitch + i % yf];
        if (bits) // null: the given bits are sent and not copied out
            for (int i = threadIdx.x; i < n * nb; i += k_problem_threads)
                bits[first * bpp + i] = stage_bits[(i / nb) * layout.bits_pitch + i % nb];
    }
}

/// Both kernels on `stream`; the problem kernel reads H as the channel kernel
/// wrote it (stream order).
void launch_generator(const generator_params& g,
                      uint64_t first_channel,
                      size_t channels,
                      uint8_t* d_bits,
                      cfloat* d_H,
                      cfloat* d_y,
                      const uint8_t* d_given,
                      cudaStream_t stream)
{
    const size_t draws = channels * size_t(g.channel_draws());
    channel_kernel<<<unsigned((draws + k_channel_threads - 1) / k_channel_threads),
                     k_channel_threads,
                     0,
                     stream>>>(g, first_channel, channels, reinterpret_cast<float*>(d_H));
    MIMO_CUDA_CHECK_LAUNCH("channel_kernel");

    const size_t problems = channels * size_t(g.symbols_per_channel);
    const unsigned blocks =
        unsigned((problems + k_problem_threads - 1) / k_problem_threads);
    const uint64_t first_problem = first_channel * uint64_t(g.symbols_per_channel);
    const float* H = reinterpret_cast<const float*>(d_H);
    float* y = reinterpret_cast<float*>(d_y);
    const size_t stage_bytes = problem_stage(g).bytes();
    if (stage_bytes <= k_max_stage_bytes) {
        problem_kernel<true><<<blocks, k_problem_threads, stage_bytes, stream>>>(
            g, first_problem, problems, H, d_given, d_bits, y);
    } else {
        problem_kernel<false><<<blocks, k_problem_threads, 0, stream>>>(
            g, first_problem, problems, H, d_given, d_bits, y);
    }
    MIMO_CUDA_CHECK_LAUNCH("problem_kernel");
}

class cuda_channel_generator_engine final : public channel_generator_engine
{
public:
    using channel_generator_engine::channel_generator_engine;
    backend kind() const override { return backend::cuda; }

    void generate(uint64_t first_channel,
                  size_t channels,
                  float n0,
                  uint8_t* bits,
                  cfloat* H,
                  cfloat* y,
                  const uint8_t* given) override
    {
        const generator_params g = params(n0);
        const size_t problems = channels * size_t(g.symbols_per_channel);
        const size_t n_bits = problems * size_t(g.bits_per_problem());
        launch_generator(g,
                         first_channel,
                         channels,
                         bits ? m_bits.device_view(bits, n_bits) : nullptr,
                         m_H.device_view(H, channels * size_t(g.channel_entries())),
                         m_y.device_view(y, problems * size_t(g.nr)),
                         given ? m_given.device_view(given, n_bits) : nullptr,
                         m_stream.get());
        m_stream.synchronize();
        if (bits)
            m_bits.finish();
        m_H.finish();
        m_y.finish();
    }

    void generate_device(uint64_t first_channel,
                         size_t channels,
                         float n0,
                         uint8_t* d_bits,
                         cfloat* d_H,
                         cfloat* d_y,
                         cuda_stream_t stream,
                         const uint8_t* d_given) override
    {
        launch_generator(
            params(n0), first_channel, channels, d_bits, d_H, d_y, d_given, stream);
    }

private:
    cuda_stream m_stream; // generate()'s own
    host_input<uint8_t> m_given;
    host_output<uint8_t> m_bits;
    host_output<cfloat> m_H, m_y;
};

constexpr int k_count_threads = 256;
constexpr unsigned k_count_max_blocks =
    1024; // fills any current GPU; more only adds atomics

__global__ void __launch_bounds__(k_count_threads)
    count_bit_errors_kernel(const float* __restrict__ llr,
                            const uint8_t* __restrict__ bits,
                            size_t n,
                            unsigned long long* __restrict__ count)
{
    __shared__ unsigned long long warp_sums[k_count_threads / 32];
    unsigned long long errors = 0;
    const size_t stride = size_t(gridDim.x) * k_count_threads;
    for (size_t i = size_t(blockIdx.x) * k_count_threads + threadIdx.x; i < n;
         i += stride)
        errors += bit_error(llr[i], bits[i]);
    errors = warp_sum(errors);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = errors;
    __syncthreads();
    if (threadIdx.x < 32) {
        errors =
            warp_sum(threadIdx.x < k_count_threads / 32 ? warp_sums[threadIdx.x] : 0);
        if (threadIdx.x == 0 && errors > 0)
            atomicAdd(count, errors);
    }
}

/// A warp per item (coalesced over its bits), grid-striding over the items.
template <typename Decision>
__global__ void __launch_bounds__(k_count_threads)
    count_item_errors_kernel(const Decision* __restrict__ decided,
                             const uint8_t* __restrict__ bits,
                             size_t items,
                             size_t bits_per_item,
                             unsigned long long* __restrict__ counts)
{
    constexpr int warps = k_count_threads / 32;
    __shared__ unsigned long long warp_bits[warps], warp_items[warps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned long long bit_errors = 0, item_errors = 0;
    for (size_t i = size_t(blockIdx.x) * warps + warp; i < items;
         i += size_t(gridDim.x) * warps) {
        unsigned long long errors = 0;
        for (size_t k = i * bits_per_item + lane; k < (i + 1) * bits_per_item; k += 32)
            errors += bit_error(decided[k], bits[k]);
        errors = warp_sum(errors);
        if (lane == 0) {
            bit_errors += errors;
            item_errors += errors > 0;
        }
    }
    if (lane == 0) {
        warp_bits[warp] = bit_errors;
        warp_items[warp] = item_errors;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long b = 0, n = 0;
        for (int w = 0; w < warps; ++w) {
            b += warp_bits[w];
            n += warp_items[w];
        }
        if (b > 0) {
            atomicAdd(&counts[0], b);
            atomicAdd(&counts[1], n);
        }
    }
}

template <typename Decision>
void launch_count_item_errors(const Decision* d_decided,
                              const uint8_t* d_bits,
                              size_t items,
                              size_t bits_per_item,
                              unsigned long long* d_counts,
                              cudaStream_t stream)
{
    if (items == 0 || bits_per_item == 0)
        return;
    if (!d_decided || !d_bits || !d_counts)
        throw std::invalid_argument("mimo_gpu::count_errors_device: null buffer");
    constexpr size_t warps = k_count_threads / 32;
    const unsigned blocks =
        unsigned(std::min<size_t>((items + warps - 1) / warps, k_count_max_blocks));
    count_item_errors_kernel<<<blocks, k_count_threads, 0, stream>>>(
        d_decided, d_bits, items, bits_per_item, d_counts);
    MIMO_CUDA_CHECK_LAUNCH("count_item_errors_kernel");
}

} // namespace

std::unique_ptr<channel_generator_engine>
make_cuda_channel_generator_engine(const generator_params& params)
{
    return std::make_unique<cuda_channel_generator_engine>(params);
}

} // namespace detail

void count_bit_errors_device(const float* d_llr,
                             const uint8_t* d_bits,
                             size_t n,
                             unsigned long long* d_count,
                             cuda_stream_t stream)
{
    if (n == 0)
        return;
    if (!d_llr || !d_bits || !d_count)
        throw std::invalid_argument("mimo_gpu::count_bit_errors_device: null buffer");
    const size_t needed = (n + detail::k_count_threads - 1) / detail::k_count_threads;
    const unsigned blocks =
        unsigned(std::min<size_t>(needed, detail::k_count_max_blocks));
    detail::count_bit_errors_kernel<<<blocks, detail::k_count_threads, 0, stream>>>(
        d_llr, d_bits, n, d_count);
    MIMO_CUDA_CHECK_LAUNCH("count_bit_errors_kernel");
}

void count_errors_device(const float* d_llr,
                         const uint8_t* d_bits,
                         size_t items,
                         size_t bits_per_item,
                         unsigned long long* d_counts,
                         cuda_stream_t stream)
{
    detail::launch_count_item_errors(
        d_llr, d_bits, items, bits_per_item, d_counts, stream);
}

void count_errors_device(const uint8_t* d_decided,
                         const uint8_t* d_bits,
                         size_t items,
                         size_t bits_per_item,
                         unsigned long long* d_counts,
                         cuda_stream_t stream)
{
    detail::launch_count_item_errors(
        d_decided, d_bits, items, bits_per_item, d_counts, stream);
}

} // namespace mimo_gpu
