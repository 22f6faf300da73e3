#include <mimo_gpu/lte_turbo_code.h>

#include "dematch_gather.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

namespace {

constexpr int k_subblock_columns = 32; // C_subblock

// Inter-column permutation P(j) of the sub-block interleaver, table 5.1.4-1.
constexpr int k_column_permutation[k_subblock_columns] = { 0, 16, 8,  24, 4, 20, 12, 28,
                                                           2, 18, 10, 26, 6, 22, 14, 30,
                                                           1, 17, 9,  25, 5, 21, 13, 29,
                                                           3, 19, 11, 27, 7, 23, 15, 31 };

void check_rv(int rv)
{
    if (rv < 0 || rv > 3)
        throw std::invalid_argument("mimo_gpu: redundancy version rv = " +
                                    std::to_string(rv) + " (expected 0..3)");
}

void check_E(int E)
{
    if (E < 0)
        throw std::invalid_argument("mimo_gpu: rate matching output length E = " +
                                    std::to_string(E) + " (expected >= 0)");
}

/// Index y_(pi(k)) that the sub-block interleaver of stream i (0, 1, 2) reads
/// for its output bit v_k; R rows, Kpi = 32 R (5.1.4.1.1).
int subblock_source(int stream, int k, int R)
{
    const int Kpi = k_subblock_columns * R;
    const int y = k_column_permutation[k / R] + k_subblock_columns * (k % R);
    return stream == 2 ? (y + 1) % Kpi : y;
}

void check_filler(int filler, int K)
{
    if (filler < 0 || filler >= K)
        throw std::invalid_argument(
            "mimo_gpu: dematch with filler = " + std::to_string(filler) +
            " bits for K = " + std::to_string(K));
}

/// The filler bits are <NULL> in d0 and d1 (not d2), as the encoder made them.
struct filler_bits {
    int D, filler;
    bool operator()(int s) const { return s < 2 * D && s % D < filler; }
};

/// Bit selection (5.1.4.1.2): walks the circular buffer from k0, wrapping at
/// Ncb, and calls visit(j, s) for output bit j = 0..E-1 and the index s of its
/// bit in [d0 | d1 | d2], passing over dummy positions and those skip(s) marks.
template <class Skip, class Visit>
void select_bits(const std::vector<int32_t>& buffer_to_stream,
                 int Ncb,
                 int k0,
                 int E,
                 Skip skip,
                 Visit visit)
{
    int position = k0 % Ncb;
    int passed_in_a_row = 0;
    for (int j = 0; j < E;) {
        const int s = buffer_to_stream[position];
        if (s >= 0 && !skip(s)) {
            visit(j++, s);
            passed_in_a_row = 0;
        } else if (++passed_in_a_row == Ncb) {
            throw std::invalid_argument(
                "mimo_gpu: rate matching circular buffer of Ncb = " +
                std::to_string(Ncb) + " holds no bit to send");
        }
        if (++position == Ncb)
            position = 0;
    }
}

} // namespace

rate_matcher::rate_matcher(int K, int Ncb) : m_K(K)
{
    if (!qpp_interleaver::is_block_size(K))
        throw std::invalid_argument(
            "mimo_gpu: rate matcher for K = " + std::to_string(K) +
            ", not a turbo code block size of table 5.1.3-3");
    const int R = (D() + k_subblock_columns - 1) / k_subblock_columns;
    m_Kpi = k_subblock_columns * R;
    // Ncb = Kw is the uplink rule and the downlink one without a soft-buffer
    // limit; a UE category's floor(N_IR / C) is passed explicitly.
    if (Ncb < 0 || Ncb > Kw())
        throw std::invalid_argument(
            "mimo_gpu: circular buffer size Ncb = " + std::to_string(Ncb) +
            " for K = " + std::to_string(K) + " (expected 1.." + std::to_string(Kw()) +
            ", or 0 for Kw)");
    m_Ncb = Ncb == 0 ? Kw() : Ncb;

    // w = v0, then v1 and v2 interlaced; y holds ND = Kpi - D dummy bits first.
    const int dummy = m_Kpi - D();
    auto stream_index = [&](int stream, int k) {
        const int y = subblock_source(stream, k, R);
        return y < dummy ? -1 : stream * D() + (y - dummy);
    };
    m_buffer_to_stream.resize(m_Ncb);
    for (int w = 0; w < m_Ncb; ++w) {
        const int stream = w < m_Kpi ? 0 : 1 + (w - m_Kpi) % 2;
        const int k = w < m_Kpi ? w : (w - m_Kpi) / 2;
        m_buffer_to_stream[w] = stream_index(stream, k);
    }
}

int rate_matcher::k0(int rv) const
{
    check_rv(rv);
    const int R = m_Kpi / k_subblock_columns;
    const int column_pairs = (m_Ncb + 8 * R - 1) / (8 * R); // ceil(Ncb / (8 R))
    return R * (2 * column_pairs * rv + 2);
}

void rate_matcher::match(const uint8_t* d0,
                         const uint8_t* d1,
                         const uint8_t* d2,
                         int E,
                         int rv,
                         uint8_t* e) const
{
    check_E(E);
    const uint8_t* streams[3] = { d0, d1, d2 };
    auto bit = [&](int s) { return streams[s / D()][s % D()]; };
    select_bits(
        m_buffer_to_stream,
        m_Ncb,
        k0(rv),
        E,
        [&](int s) { return bit(s) == k_null_bit; },
        [&](int j, int s) { e[j] = bit(s); });
}

void rate_matcher::dematch(const float* e, int E, int rv, int filler, float* d) const
{
    check_E(E);
    check_filler(filler, m_K);
    // Where each of the E values goes: walked once (the circular buffer's
    // <NULL> entries skipped) and kept by the thread for the last few block
    // shapes (a transport block mixes two K, two E and one block's filler; the
    // walk cost a 2-core receiver 4 % of its time). The values are added in the
    // same order as walking.
    struct walk {
        int K = -1, Ncb = -1, k0 = -1, E = -1, filler = -1;
        std::vector<int32_t> stream_of;
    };
    constexpr size_t kept_shapes = 4;
    thread_local walk kept[kept_shapes];
    thread_local size_t next_to_replace = 0;
    const int start = k0(rv);
    walk* w = nullptr;
    for (walk& k : kept)
        if (k.K == m_K && k.Ncb == m_Ncb && k.k0 == start && k.E == E &&
            k.filler == filler)
            w = &k;
    if (!w) {
        w = &kept[next_to_replace];
        next_to_replace = (next_to_replace + 1) % kept_shapes;
        w->K = -1; // a walk that throws leaves nothing behind
        w->stream_of.resize(size_t(E));
        select_bits(m_buffer_to_stream,
                    m_Ncb,
                    start,
                    E,
                    filler_bits{ D(), filler },
                    [&](int j, int s) { w->stream_of[size_t(j)] = s; });
        w->K = m_K, w->Ncb = m_Ncb, w->k0 = start, w->E = E, w->filler = filler;
    }
    std::fill(d, d + 3 * D(), 0.0f);
    const int32_t* stream_of = w->stream_of.data();
    for (int j = 0; j < E; ++j)
        d[stream_of[j]] += detail::bounded_copy(e[j]);
}

int rate_matcher::dematch_order(int rv, int filler, int32_t* first) const
{
    check_filler(filler, m_K);
    const filler_bits is_filler{ D(), filler };
    int period = 0;
    for (int s : m_buffer_to_stream)
        period += s >= 0 && !is_filler(s);
    std::fill(first, first + 3 * D(), -1);
    // One turn: every bit sent appears once (select_bits refuses period 0).
    select_bits(m_buffer_to_stream, m_Ncb, k0(rv), period, is_filler, [&](int j, int s) {
        first[s] = j;
    });
    return period;
}

} // namespace mimo_gpu
