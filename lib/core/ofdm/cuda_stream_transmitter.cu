// ofdm_stream_transmitter's CUDA engine: per batch of frames, one kernel fills
// every antenna's FFT bins of every symbol (preamble, pilot combs, data symbols
// mapped from the bits), one batched cuFFT inverse transform, one kernel cuts
// the cyclic prefixes into each antenna's output (with the unitary scale, as
// the CPU's FFTW plan applies it after its transform).
#include "../runtime/cuda_buffers.h"
#include "../runtime/cuda_check.h"
#include "pilot_layout.h"
#include "transmitter_engine.h"

#include <mimo_gpu/device_memory.h>

#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_threads = 256;
/// Complex values a pass transforms at most (32 MB): frames are batched up to it.
constexpr size_t k_pass_values = size_t(1) << 22;
constexpr uint32_t k_no_bad_frame = 0xFFFFFFFFu;
constexpr int k_max_antennas = 8; // ofdm_grid's nt

void check_cufft(cufftResult r, const char* what)
{
    if (r != CUFFT_SUCCESS)
        throw std::runtime_error(std::string("mimo_gpu: ofdm transmitter: ") + what +
                                 " failed (cufftResult " + std::to_string(int(r)) + ")");
}

struct tx_dims {
    int N, CP, U, D, slots, nt, Q, symbols; // symbols per frame
    slot_layout layout;                     // where the pilot symbols sit
    size_t frame_bits, frame_samples;
    float scale; // 1/sqrt(N): the unitary transform
};

struct tx_tables {
    const int* logical_of_bin;   // N: logical subcarrier, or -1 (unused)
    const float2* preamble;      // U
    const int* preamble_antenna; // U
    const float2* pilots;        // pilot symbols * U, boosted by sqrt(nt)
    const float* amplitude;      // per dimension label
};

/// bits: the pass's frames, the first of which is frame `first` of the call
/// (what a bad byte's frame is counted from).
__global__ void fill_bins_kernel(tx_dims d,
                                 tx_tables tables,
                                 const uint8_t* bits,
                                 size_t first,
                                 size_t frames,
                                 float2* bins,
                                 unsigned* bad_frame)
{
    const size_t total = frames * size_t(d.symbols) * size_t(d.nt) * size_t(d.N);
    for (size_t e = blockIdx.x * size_t(blockDim.x) + threadIdx.x; e < total;
         e += size_t(gridDim.x) * blockDim.x) {
        const int b = int(e % size_t(d.N));
        size_t rest = e / size_t(d.N);
        const int t = int(rest % size_t(d.nt));
        rest /= size_t(d.nt);
        const int k = int(rest % size_t(d.symbols));
        const size_t f = rest / size_t(d.symbols);
        const int i = tables.logical_of_bin[b];
        float2 v = make_float2(0.0f, 0.0f);
        if (i >= 0) {
            if (k == 0) {
                if (tables.preamble_antenna[i] == t)
                    v = tables.preamble[i];
            } else {
                const int j = (k - 1) / d.layout.L,
                          role = d.layout.role((k - 1) % d.layout.L);
                if (role < 0) {
                    const int q = j * d.layout.P - 1 - role;
                    if (i % d.nt == t)
                        v = tables.pilots[size_t(q) * d.U + size_t(i)];
                } else {
                    const size_t p =
                        (size_t(j) * d.U + size_t(i)) * size_t(d.D) + size_t(role);
                    const uint8_t* x =
                        bits + f * d.frame_bits + (p * size_t(d.nt) + size_t(t)) * d.Q;
                    unsigned i_label = 0, q_label = 0, any = 0;
                    for (int q = 0; q < d.Q; q += 2) {
                        any |= unsigned(x[q]) | unsigned(x[q + 1]);
                        i_label = (i_label << 1) | unsigned(x[q] & 1u);
                        q_label = (q_label << 1) | unsigned(x[q + 1] & 1u);
                    }
                    if (any > 1u)
                        atomicMin(bad_frame, unsigned(first + f));
                    v = make_float2(tables.amplitude[i_label], tables.amplitude[q_label]);
                }
            }
        }
        bins[e] = v;
    }
}

/// Where each antenna's samples go (by value: no table to copy or keep alive).
struct tx_outputs {
    float2* antenna[k_max_antennas];
};

/// Output sample n of antenna t in frame f: its symbol's time sample (the cyclic
/// prefix repeats the symbol's end), scaled.
__global__ void
cyclic_prefix_kernel(tx_dims d, const float2* time, size_t frames, tx_outputs out)
{
    const size_t S = d.frame_samples, total = size_t(d.nt) * frames * S;
    const int L = d.N + d.CP;
    for (size_t e = blockIdx.x * size_t(blockDim.x) + threadIdx.x; e < total;
         e += size_t(gridDim.x) * blockDim.x) {
        const size_t n = e % S, ft = e / S;
        const size_t f = ft % frames;
        const int t = int(ft / frames);
        const int k = int(n / size_t(L)), o = int(n % size_t(L));
        const int src = o < d.CP ? d.N - d.CP + o : o - d.CP;
        const float2 v =
            time[((f * size_t(d.symbols) + size_t(k)) * d.nt + size_t(t)) * size_t(d.N) +
                 size_t(src)];
        out.antenna[t][f * S + n] = make_float2(v.x * d.scale, v.y * d.scale);
    }
}

unsigned blocks_for(size_t total)
{
    return unsigned(std::min<size_t>((total + k_threads - 1) / k_threads, 65535));
}

class cuda_transmitter final : public transmitter_engine
{
public:
    explicit cuda_transmitter(const ofdm_grid& g) : m_grid(g)
    {
        const constellation c(g.mod);
        m_dims.N = g.fft_size;
        m_dims.CP = g.cp_length;
        m_dims.U = g.used_subcarriers;
        m_dims.D = g.data_symbols;
        m_dims.layout = layout_of(g);
        m_dims.slots = g.slots;
        m_dims.nt = g.nt;
        m_dims.Q = c.bits_per_symbol();
        m_dims.symbols = g.frame_symbols();
        m_dims.frame_bits = g.frame_bits();
        m_dims.frame_samples = size_t(g.frame_samples());
        m_dims.scale = float(1.0 / std::sqrt(double(g.fft_size)));
        std::vector<int> logical(size_t(g.fft_size), -1),
            antenna(size_t(g.used_subcarriers));
        std::vector<float2> preamble(size_t(g.used_subcarriers)),
            pilots(size_t(g.pilot_symbols()) * size_t(g.used_subcarriers));
        const int pilot_symbols = g.pilot_symbols();
        const float boost = std::sqrt(float(g.nt)); // as ofdm_transmitter
        for (int i = 0; i < g.used_subcarriers; ++i) {
            logical[size_t(g.bin(i))] = i;
            const cfloat p = g.preamble(i);
            preamble[size_t(i)] = make_float2(p.real(), p.imag());
            antenna[size_t(i)] = g.preamble_antenna(i);
            for (int q = 0; q < pilot_symbols; ++q) {
                const cfloat v = g.pilot(q, i) * boost;
                pilots[size_t(q) * size_t(g.used_subcarriers) + size_t(i)] =
                    make_float2(v.real(), v.imag());
            }
        }
        std::vector<float> amplitude(size_t(1) << (m_dims.Q / 2));
        for (size_t label = 0; label < amplitude.size(); ++label)
            amplitude[label] = c.pam_amplitude(c.pam_level_of_label(uint32_t(label)));
        upload(m_logical, logical);
        upload(m_preamble, preamble);
        upload(m_antenna, antenna);
        upload(m_pilots, pilots);
        upload(m_amplitude, amplitude);
        m_tables = { m_logical.data(),
                     m_preamble.data(),
                     m_antenna.data(),
                     m_pilots.data(),
                     m_amplitude.data() };
        m_frame_values = size_t(m_dims.symbols) * size_t(g.nt) * size_t(g.fft_size);
        m_pass_frames = std::max<size_t>(1, k_pass_values / m_frame_values);
        m_bad.reserve(1);
        m_bad_device.reserve(1);
    }

    ~cuda_transmitter() override
    {
        for (auto& p : m_plans)
            cufftDestroy(p.second);
    }

    backend kind() const override { return backend::cuda; }

    void modulate(const uint8_t* bits, size_t frames, cfloat* const* antennas) override
    {
        const cudaStream_t st = m_stream.get();
        const int nt = m_grid.nt;
        const size_t S = m_dims.frame_samples, B = m_dims.frame_bits;
        // Outputs in device memory are written in place; host ones from a staging
        // area, copied after each pass.
        bool on_device[k_max_antennas] = {};
        bool any_host = false;
        for (int t = 0; t < nt; ++t) {
            on_device[t] = memory_kind_of(antennas[t]) == ::mimo_gpu::memory_kind::device;
            any_host = any_host || !on_device[t];
        }
        const bool bits_on_device =
            memory_kind_of(bits) == ::mimo_gpu::memory_kind::device;
        // Sized once for a whole pass: no reallocation while a pass's copies run.
        float2* bins = m_bins.reserve(m_pass_frames * m_frame_values);
        float2* staging =
            any_host ? m_staging.reserve(m_pass_frames * S * size_t(nt)) : nullptr;
        MIMO_CUDA_CHECK(cudaMemsetAsync(m_bad_device.data(), 0xFF, sizeof(unsigned), st));
        for (size_t first = 0; first < frames; first += m_pass_frames) {
            const size_t count = std::min(m_pass_frames, frames - first);
            const uint8_t* pass_bits = bits + first * B;
            if (!bits_on_device) {
                MIMO_CUDA_CHECK(cudaMemcpyAsync(m_bits.reserve(m_pass_frames * B),
                                                pass_bits,
                                                count * B,
                                                cudaMemcpyDefault,
                                                st));
                pass_bits = m_bits.data();
            }
            const size_t values = count * m_frame_values;
            fill_bins_kernel<<<blocks_for(values), k_threads, 0, st>>>(
                m_dims, m_tables, pass_bits, first, count, bins, m_bad_device.data());
            MIMO_CUDA_CHECK_LAUNCH("fill_bins_kernel");
            // In power-of-two runs of frames: a plan per size, log2 of them at most.
            for (size_t done = 0; done < count;) {
                size_t run = 1;
                while (run * 2 <= count - done)
                    run *= 2;
                cufftComplex* at =
                    reinterpret_cast<cufftComplex*>(bins + done * m_frame_values);
                check_cufft(cufftExecC2C(plan_for(run), at, at, CUFFT_INVERSE),
                            "cufftExecC2C");
                done += run;
            }
            tx_outputs out;
            for (int t = 0; t < nt; ++t)
                out.antenna[t] = on_device[t]
                                     ? reinterpret_cast<float2*>(antennas[t] + first * S)
                                     : staging + size_t(t) * m_pass_frames * S;
            cyclic_prefix_kernel<<<blocks_for(size_t(nt) * count * S),
                                   k_threads,
                                   0,
                                   st>>>(m_dims, bins, count, out);
            MIMO_CUDA_CHECK_LAUNCH("cyclic_prefix_kernel");
            // Host outputs from the staging area. The passes follow one another in
            // the stream: the next one's kernels write staging and bins after
            // these copies have read them.
            for (int t = 0; t < nt; ++t)
                if (!on_device[t])
                    MIMO_CUDA_CHECK(cudaMemcpyAsync(antennas[t] + first * S,
                                                    out.antenna[t],
                                                    count * S * sizeof(cfloat),
                                                    cudaMemcpyDefault,
                                                    st));
        }
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_bad.data(),
                                        m_bad_device.data(),
                                        sizeof(unsigned),
                                        cudaMemcpyDeviceToHost,
                                        st));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(st));
        if (*m_bad.data() != k_no_bad_frame)
            throw bad_frame_bits(size_t(*m_bad.data()));
    }

private:
    template <typename T>
    static void upload(device_array<T>& to, const std::vector<T>& from)
    {
        MIMO_CUDA_CHECK(cudaMemcpy(to.reserve(from.size()),
                                   from.data(),
                                   from.size() * sizeof(T),
                                   cudaMemcpyHostToDevice));
    }

    cufftHandle plan_for(size_t frames)
    {
        auto it = m_plans.find(frames);
        if (it == m_plans.end()) {
            cufftHandle h = 0;
            int n = m_dims.N;
            check_cufft(
                cufftPlanMany(&h,
                              1,
                              &n,
                              nullptr,
                              1,
                              n,
                              nullptr,
                              1,
                              n,
                              CUFFT_C2C,
                              int(frames * size_t(m_dims.symbols) * size_t(m_dims.nt))),
                "cufftPlanMany");
            check_cufft(cufftSetStream(h, m_stream.get()), "cufftSetStream");
            it = m_plans.emplace(frames, h).first;
        }
        return it->second;
    }

    const ofdm_grid m_grid;
    tx_dims m_dims{};
    tx_tables m_tables{};
    size_t m_frame_values = 0; // FFT bins of a frame (every symbol and antenna)
    size_t m_pass_frames = 1;
    cuda_stream m_stream;
    device_array<int> m_logical, m_antenna;
    device_array<float2> m_preamble, m_pilots, m_bins, m_staging;
    device_array<float> m_amplitude;
    device_array<uint8_t> m_bits;
    device_array<unsigned> m_bad_device;
    pinned_buffer<unsigned> m_bad;
    std::map<size_t, cufftHandle> m_plans;
};

} // namespace

std::unique_ptr<transmitter_engine> make_cuda_transmitter(const ofdm_grid& grid)
{
    return std::make_unique<cuda_transmitter>(grid);
}

} // namespace detail
} // namespace mimo_gpu
