// CUDA engine of the K-best detector: the FSD engine's ordering and QR kernel
// (V-BLAST order), then a warp per problem: kbest_select_kernel for lists of
// up to 32 paths and 1024 children (children in registers, the K best taken by
// warp minima), else kbest_threshold_kernel (the children under a bound
// sorted in shared memory).
#include "../../runtime/warp_reduce.h"
#include "../engine/cuda_detector_engine.h"
#include "kbest_engine.h"

namespace mimo_gpu {
namespace detail {

namespace {

/// The axis minima of a problem's two symbol tables (kbest_warp_llrs): words.
inline int kbest_axis_minima_words(int nt, const pam_table& pam)
{
    return 4 * nt * pam.levels;
}

/// The threshold kernel's candidate buffer: at least this many children, and
/// four times the list rounded up to a power of two, so that the bound
/// (kbest_threshold_kernel) rarely lets more through.
constexpr int k_kbest_min_candidates = 128;

/// kbest_threshold_kernel's words of shared memory per warp: first the
/// candidates (64-bit child words, `cap` of them, a power of two from 128),
/// the parents' records (float4), then the item, two path lists, the new
/// list's distances, the level's products of R with the amplitudes, the
/// a-priori costs and the axis minima of the list's and the pruned paths'
/// symbols. A multiple of four words, so that every warp's 64- and 128-bit
/// words stay aligned. The children's distances are computed again where
/// needed, not kept: 16 KB a warp at 4096 children held an SM to 7 warps.
struct kbest_threshold_layout {
    int cap, item, paths_words, costs, amin, words;
    /// priors: room for the a-priori costs of every stream's symbols.
    static kbest_threshold_layout
    of(int nt, int K, const pam_table& pam, size_t item_bytes, bool priors = false)
    {
        const int M = pam.order();
        kbest_threshold_layout l;
        int list = 1, children = 1;
        while (list < K)
            list *= 2;
        while (children < K * M)
            children *= 2;
        l.cap = 4 * list < k_kbest_min_candidates ? k_kbest_min_candidates : 4 * list;
        l.cap = l.cap < children ? l.cap : children; // then every level passes whole
        l.item = int(item_bytes / 4);
        // parents (float4) and their pruned minima, two path lists, the new
        // list's distances, the products of R with the amplitudes
        l.paths_words = 4 * K + K + 2 * K * 2 * nt + K + 3 * pam.levels;
        l.costs = priors ? nt * M : 0;
        l.amin = kbest_axis_minima_words(nt, pam);
        l.words = 2 * l.cap + l.item + l.paths_words + l.costs + l.amin;
        l.words = (l.words + 3) & ~3;
        return l;
    }
};

constexpr int k_kbest_max_warps = 4;

/// A warp's start on problem p, in both K-best kernels: false (the fault
/// reported, the problem erased) where its a-priori LLRs are not finite; else
/// its item is in shared memory at w, the minima (the list's and the pruned
/// paths', `minima_words` float bits) are +inf, and with priors each stream's
/// symbols' a-priori costs are at cost. The caller syncs the warp.
template <int NT>
__device__ bool kbest_warp_begin(const sphere_item<NT>* items,
                                 size_t p,
                                 const float* prior,
                                 const pam_table& pam,
                                 float n0,
                                 int item_words,
                                 unsigned int* w,
                                 int* minima,
                                 int minima_words,
                                 float* cost,
                                 fault_sink faults,
                                 int lane)
{
    const int M = pam.order(), Q = pam.bits_per_symbol();
    if (prior && !priors_finite(prior, NT * Q)) {
        if (lane == 0)
            faults.report(p, problem_fault::non_finite);
        return false;
    }
    const unsigned int* src = reinterpret_cast<const unsigned int*>(items + p);
    for (int i = lane; i < item_words; i += 32)
        w[i] = src[i];
    for (int i = lane; i < minima_words; i += 32)
        minima[i] = __float_as_int(k_infinity);
    if (prior)
        for (int i = lane; i < NT * M; i += 32)
            cost[i] = symbol_prior_cost(prior + (i / M) * Q, pam, i % M, n0);
    return true;
}

/// The problem's LLRs (out: its NT * Q), kbest_llr's values, a lane per bit
/// from its axis's L levels of the axis minima `amin` (kbest_axis_minima_words:
/// amin[((table * NT + t) * 2 + axis) * L + level], table 0 the list's, 1 the
/// pruned paths'; the minimum over the symbols whose bit k is b is the minimum
/// over the levels of k's axis with label bit b, pam_table.h); extrinsic where
/// prior is given.
template <int NT>
__device__ void kbest_warp_llrs_from_axis_minima(const float* amin,
                                                 float best,
                                                 const pam_table& pam,
                                                 float n0,
                                                 float clip,
                                                 float missing,
                                                 const float* prior,
                                                 float* out,
                                                 int lane)
{
    const int L = pam.levels, Q = pam.bits_per_symbol();
    for (int b = lane; b < NT * Q; b += 32) {
        const int t = b / Q, k = b - t * Q;
        const float* list = amin + (2 * t + (k & 1)) * L;
        const float* pruned = amin + (2 * (NT + t) + (k & 1)) * L;
        // kbest_llr's steps, the side minima taken once for both branches.
        float min0, min1, p0, p1;
        bit_side_minima(
            pam, k, [list](int level) { return list[level]; }, min0, min1);
        bit_side_minima(
            pam, k, [pruned](int level) { return pruned[level]; }, p0, p1);
        out[b] = prior ? kbest_llr_from_sides<true>(
                             min0, min1, p0, p1, best, n0, clip, missing, prior[b])
                       : kbest_llr_from_sides<false>(
                             min0, min1, p0, p1, best, n0, clip, missing, 0.0f);
    }
}

/// The problem's LLRs from its symbol tables (dmin, pmin: NT * M float bits
/// each): their axis minima first, a lane each, into amin, then
/// kbest_warp_llrs_from_axis_minima.
template <int NT>
__device__ void kbest_warp_llrs(const int* dmin,
                                const int* pmin,
                                float best,
                                const pam_table& pam,
                                float n0,
                                float clip,
                                float missing,
                                const float* prior,
                                float* amin,
                                float* out,
                                int lane)
{
    const int L = pam.levels, M = pam.order();
    const int lbits = pam.bits_per_dim;
    for (int i = lane; i < 4 * NT * L; i += 32) {
        const int table_stream = i >> (lbits + 1), table = table_stream / NT;
        const int t = table_stream - table * NT;
        const float* symbols =
            reinterpret_cast<const float*>(table ? pmin : dmin) + t * M;
        amin[i] = axis_minimum(symbols, pam, (i >> lbits) & 1, i & (L - 1));
    }
    __syncwarp();
    kbest_warp_llrs_from_axis_minima<NT>(
        amin, best, pam, n0, clip, missing, prior, out, lane);
}

/// A child as one 64-bit word: its distance's bits above its index, so that
/// (distance, index) order is the words' order (distances are non-negative).
__device__ __forceinline__ unsigned long long child_word(unsigned int key, int id)
{
    return (static_cast<unsigned long long>(key) << 32) | static_cast<unsigned int>(id);
}

/// Each lane's best children kept for kbest_threshold_kernel's bound.
constexpr int k_kbest_pool = 4;

/// K-best for any list (those kbest_selects refuses: K > 32 or K * M > 1024),
/// the same steps and results as kbest_search (the CPU's), a warp per problem.
/// A level's K best children are found without sorting all K * M of them:
/// 1. every child's distance; each lane keeps its four smallest (its
///    children's symbols vary, so that the K best spread over the lanes);
/// 2. the bound: the keep-th smallest of those 128 pooled distances. They are
///    distinct children's, so at least keep children lie at or under it; it
///    is the keep-th distance itself unless a lane held more than four of the
///    K best, and then only a little above it;
/// 3. the children at or under it (typically a little more than K) as
///    (distance, index) words into the candidate buffer; the others are
///    pruned, into the pruned minima (the parent's symbols above through a
///    minimum over its children). Where more than the buffer holds pass
///    (exact ties, K beyond the pool), the keep-th distance is found by
///    bisection over all children, then, were that tied too, the keep-th
///    index among its children, and the children are passed again;
/// 4. the candidates sorted by a bitonic network: the first keep are the new
///    list, in the CPU's heap order; the rest are pruned.
/// In step 3 (and its bisection) a lane takes the same symbol of every parent
/// (M >= 32) or of every (32 / M)-th parent (for_each_child), so that the
/// symbol's terms stay in registers and the parent's come in one 128-bit load.
/// The axis minima give the LLRs (kbest_warp_llrs_from_axis_minima). A level
/// with at most `cap` children (the top one, small lists) passes whole.
/// Priors: the a-priori costs in the path metric (priors is not null); the
/// kernel without them is compiled apart, so the plain search pays nothing.
template <int NT, bool Priors>
__global__ void __launch_bounds__(32 * k_kbest_max_warps)
    kbest_threshold_kernel(const sphere_item<NT>* __restrict__ items,
                           size_t batch,
                           const __grid_constant__ pam_table pam,
                           int K,
                           kbest_threshold_layout l,
                           float n0,
                           float clip,
                           float missing,
                           const float* __restrict__ priors,
                           float* __restrict__ llr,
                           fault_sink faults)
{
    constexpr int COLS = 2 * NT;
    constexpr unsigned int all = 0xffffffffu;  // the warp's lanes, in *_sync masks
    constexpr unsigned int none = 0xffffffffu; // no child: after every distance's bits
    extern __shared__ __align__(16) unsigned int smem_words[]; // 64-bit words inside
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t p = size_t(blockIdx.x) * (blockDim.x / 32) + warp;
    if (p >= batch || faults.flagged(p)) // the whole warp leaves
        return;
    const int M = pam.order(), L = pam.levels, Q = pam.bits_per_symbol();
    const int lbits = pam.bits_per_dim, mbits = 2 * lbits;
    unsigned int* w = smem_words + size_t(warp) * l.words;
    unsigned long long* cand = reinterpret_cast<unsigned long long*>(w);
    // Parent a's distance and residuals (kbest_residuals; w unused), 16-byte
    // aligned: 2 * cap is a multiple of 4.
    float4* parent = reinterpret_cast<float4*>(w + 2 * l.cap);
    // R's entries x the levels' amplitudes: a Q level's two (8-byte aligned
    // after the parents), an I level's one.
    float2* q_terms = reinterpret_cast<float2*>(parent + K);
    float* ii_p = reinterpret_cast<float*>(q_terms + L);
    // Parent a's pruned children's minimum (float bits), apart from parent[a],
    // which every lane loads while one lane writes this.
    unsigned int* parent_min = reinterpret_cast<unsigned int*>(ii_p + L);
    unsigned int* item_words = parent_min + K;
    const sphere_item<NT>* item = reinterpret_cast<const sphere_item<NT>*>(item_words);
    int* lev = reinterpret_cast<int*>(item_words + l.item);
    int* next = lev + K * COLS;
    float* list_d = reinterpret_cast<float*>(next + K * COLS); // the new list's
    float* cost = list_d + K;                                  // l.costs words (priors)
    // The axis minima of the list's and the pruned paths' symbols (the
    // minimum over a symbol's paths counts on both its levels' axes), not
    // their symbol tables: NT * M words each would hold an SM to half the warps.
    float* amin = cost + l.costs;
    unsigned int* axis_min = reinterpret_cast<unsigned int*>(amin);
    // d into table 0 (the list's) or 1 (the pruned paths') at stream t's
    // symbol with levels li, lq.
    const auto note = [&](int table, int t, int li, int lq, unsigned int d) {
        unsigned int* m = axis_min + (table * NT + t) * 2 * L;
        atomicMin(m + li, d);
        atomicMin(m + L + lq, d);
    };
    const float* prior = Priors ? priors + p * NT * Q : nullptr;
    if (!kbest_warp_begin<NT>(items,
                              p,
                              prior,
                              pam,
                              n0,
                              l.item,
                              item_words,
                              reinterpret_cast<int*>(amin),
                              l.amin,
                              cost,
                              faults,
                              lane))
        return; // the whole warp leaves: erased
    if (lane == 0)
        list_d[0] = 0.0f;
    __syncwarp();
    const float* E = item->E;
    const int* perm = item->perm;
    const unsigned int lanes_before = (1u << lane) - 1u;
    int paths = 1;
    for (int pos = NT - 1; pos >= 0; --pos) {
        const int n = paths << mbits, keep = n < K ? n : K;
        for (int a = lane; a < paths; a += 32) {
            float bq, bi;
            kbest_residuals<NT>(E, lev + a * COLS, 1, pos, pam, &bq, &bi);
            parent[a] = make_float4(list_d[a], bq, bi, 0.0f);
            parent_min[a] = none;
        }
        const kbest_rows rows = kbest_rows::at<NT>(E, pos);
        for (int v = lane; v < L; v += 32) {
            const float amplitude = pam.amplitude(v);
            q_terms[v] = make_float2(rows.qq * amplitude, rows.iq * amplitude);
            ii_p[v] = rows.ii * amplitude;
        }
        __syncwarp();
        // Calls child(c, a, valid, bits) for every child c (parent a, distance
        // bits; valid false for the lanes past the last parent) and then
        // run_end(sym) once the lane's symbol sym changes: with M >= 32 a run
        // of 32 symbols over every parent at a time, a symbol a lane; else M
        // lanes a parent, 32 / M parents a step, the lane's symbol lane % M
        // throughout. Distances: kbest_child's arithmetic.
        const auto for_each_child = [&](auto child, auto run_end) {
            const int runs = M >= 32 ? M >> 5 : 1;
            for (int r = 0; r < runs; ++r) {
                const int sym = M >= 32 ? (r << 5) + lane : lane & (M - 1);
                const int li = pam.i_level(sym), lq = pam.q_level(sym);
                const float2 q = q_terms[lq];
                const float qq = q.x, iq = q.y, ii = ii_p[li];
                const float prior_cost = Priors ? cost[(perm[pos] << mbits) + sym] : 0.0f;
                const int step = M >= 32 ? 1 : 32 >> mbits;
                for (int a0 = 0; a0 < paths; a0 += step) {
                    const int a = M >= 32 ? a0 : a0 + (lane >> mbits);
                    const bool valid = a < paths;
                    const float4 pa = parent[valid ? a : 0];
                    float d = kbest_rows::from_products(pa.x, pa.y, pa.z, qq, iq, ii);
                    if (Priors)
                        d += prior_cost;
                    child((a << mbits) + sym, a, valid, __float_as_uint(d));
                }
                run_end(sym);
            }
        };
        // 1. Every child's distance, and each lane's smallest ones.
        unsigned int pool[k_kbest_pool];
#pragma unroll
        for (int s = 0; s < k_kbest_pool; ++s)
            pool[s] = none;
        unsigned int largest = 0; // bits from +inf's on: not finite
        int rotation = lane;
        for (int base = 0; base < n; base += 32) {
            // Not for_each_child's order: each lane's children rotate through
            // the offsets of each run of 32, so that its symbols vary and the
            // K best spread over the lanes (a symbol a lane held many of the
            // K best at once in a few lanes, and the bound far above them).
            const int c = base + (base + 32 <= n ? rotation : lane);
            rotation = (rotation + 7) & 31;
            if (c < n) {
                const int sym = c & (M - 1), li = pam.i_level(sym), lq = pam.q_level(sym);
                const float4 pa = parent[c >> mbits];
                const float2 q = q_terms[lq];
                float d = kbest_rows::from_products(pa.x, pa.y, pa.z, q.x, q.y, ii_p[li]);
                if (Priors)
                    d += cost[(perm[pos] << mbits) + sym];
                unsigned int k = __float_as_uint(d);
                largest = k > largest ? k : largest;
#pragma unroll
                for (int s = 0; s < k_kbest_pool; ++s) { // insertion, without branches
                    const unsigned int low = k < pool[s] ? k : pool[s];
                    k = k < pool[s] ? pool[s] : k;
                    pool[s] = low;
                }
            }
        }
        if (__any_sync(all, largest >= __float_as_uint(k_infinity))) { // or NaN
            if (lane == 0)
                faults.report(p, problem_fault::non_finite);
            return;
        }
        // 2. The bound: the smallest x with at least keep pooled distances at or
        // under it (none where the level passes whole or the pool is short).
        unsigned int bound = none;
        if (n > l.cap && keep <= 32 * k_kbest_pool) {
            unsigned int lo = 0, hi = none;
            while (lo < hi) {
                const unsigned int mid = lo + (hi - lo) / 2;
                unsigned int under = 0;
#pragma unroll
                for (int s = 0; s < k_kbest_pool; ++s)
                    under += pool[s] <= mid;
                if (int(warp_sum(under)) >= keep)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            bound = lo;
        }
        // The children whose words are at or under x.
        const auto under = [&](unsigned long long x) {
            unsigned int count = 0;
            for_each_child(
                [&](int c, int, bool valid, unsigned int k) {
                    count += valid && child_word(k, c) <= x;
                },
                [](int) {});
            return int(warp_sum(count));
        };
        // 3. The candidates: the children's words at or under last_word.
        unsigned long long last_word = child_word(bound, -1); // every index of it
        int count = 0;
        for (int round = 0;; ++round) {
            __syncwarp(); // a round's candidates overwrite the last round's
            count = 0;
            unsigned int sym_min = none; // the pruned of the lane's symbol
            for_each_child(
                [&](int c, int a, bool valid, unsigned int k) {
                    const bool in = valid && child_word(k, c) <= last_word;
                    const unsigned int vote = __ballot_sync(all, in);
                    const int at = count + __popc(vote & lanes_before);
                    if (in && at < l.cap)
                        cand[at] = child_word(k, c);
                    count += __popc(vote);
                    const unsigned int v = in || !valid ? none : k; // pruned
                    sym_min = v < sym_min ? v : sym_min;
                    if (pos == NT - 1) // no symbols above
                        return;
                    // The parent's minimum: over the warp (M >= 32), else
                    // over its M lanes, into parent_min[a] by one lane.
                    unsigned int m = v;
                    if (M >= 32)
                        m = warp_min(m);
                    else
                        for (int o = 1; o < M; o <<= 1) {
                            const unsigned int u = __shfl_xor_sync(all, m, o);
                            m = u < m ? u : m;
                        }
                    unsigned int* slot = parent_min + a;
                    if (valid && (lane & ((M >= 32 ? 32 : M) - 1)) == 0 && m < *slot)
                        *slot = m; // this lane's alone
                },
                [&](int sym) {
                    if (M < 32) // the lanes that hold the symbol
                        for (int o = M; o < 32; o <<= 1) {
                            const unsigned int u = __shfl_xor_sync(all, sym_min, o);
                            sym_min = u < sym_min ? u : sym_min;
                        }
                    if ((M >= 32 || lane < M) && sym_min != none)
                        note(1, perm[pos], pam.i_level(sym), pam.q_level(sym), sym_min);
                    sym_min = none;
                });
            if (count <= l.cap)
                break;
            if (round == 0) { // the keep-th distance
                unsigned int lo = 0, hi = unsigned(last_word >> 32);
                while (lo < hi) {
                    const unsigned int mid = lo + (hi - lo) / 2;
                    if (under(child_word(mid, -1)) >= keep)
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                last_word = child_word(lo, -1);
            } else { // ties at it: the keep-th index among them
                const unsigned int t = unsigned(last_word >> 32);
                int lo = 0, hi = n - 1;
                while (lo < hi) {
                    const int mid = lo + (hi - lo) / 2;
                    if (under(child_word(t, mid)) >= keep)
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                last_word = child_word(t, lo); // exactly keep pass
            }
        }
        // A pruned child's parent's symbols above: the minimum over its
        // children `v` (none: no change).
        const auto prune_above = [&](int a, unsigned int v) {
            const int* up = lev + a * COLS;
            for (int j = pos + 1; j < NT; ++j)
                note(1, perm[j], up[2 * j], up[2 * j + 1], v);
        };
        __syncwarp();
        for (int a = lane; a < paths && pos < NT - 1; a += 32)
            if (parent_min[a] != none)
                prune_above(a, parent_min[a]);
        // 4. The candidates in order: the new list, then pruned ones.
        int size = 1;
        while (size < count)
            size <<= 1;
        for (int i = count + lane; i < size; i += 32)
            cand[i] = ~0ull;
        __syncwarp();
        for (int k = 2; k <= size; k <<= 1)
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int i = lane; i < size; i += 32) {
                    const int o = i ^ j;
                    if (o > i) {
                        const unsigned long long a = cand[i], b = cand[o];
                        if ((b < a) == ((i & k) == 0)) {
                            cand[i] = b;
                            cand[o] = a;
                        }
                    }
                }
                __syncwarp();
            }
        for (int r = keep + lane; r < count; r += 32) {
            const unsigned long long word = cand[r];
            const int c = int(unsigned(word));
            const unsigned int k = unsigned(word >> 32);
            const int sym = c & (M - 1);
            note(1, perm[pos], pam.i_level(sym), pam.q_level(sym), k);
            prune_above(c >> mbits, k);
        }
        for (int r = lane; r < keep; r += 32) { // the next level's paths
            const unsigned long long mine = cand[r];
            const int c = int(unsigned(mine)), a = c >> mbits, sym = c & (M - 1);
            for (int j = 2 * pos + 2; j < COLS; ++j)
                next[r * COLS + j] = lev[a * COLS + j];
            next[r * COLS + 2 * pos] = pam.i_level(sym);
            next[r * COLS + 2 * pos + 1] = pam.q_level(sym);
            list_d[r] = __uint_as_float(unsigned(mine >> 32));
        }
        __syncwarp();
        int* t = lev;
        lev = next;
        next = t;
        paths = keep;
    }
    for (int r = lane; r < paths; r += 32) {
        const unsigned int d = __float_as_uint(list_d[r]);
        for (int j = 0; j < NT; ++j)
            note(0, perm[j], lev[r * COLS + 2 * j], lev[r * COLS + 2 * j + 1], d);
    }
    __syncwarp();
    kbest_warp_llrs_from_axis_minima<NT>(
        amin, list_d[0], pam, n0, clip, missing, prior, llr + p * NT * Q, lane);
}

/// The selection kernel's words of shared memory per warp: first the 64-bit
/// words (child_word), the lanes' sorted children after their heads (which
/// stay in registers) and an end marker, then the level's new list in order;
/// then the item, two path lists (this level's and the next's), the symbol
/// minima, the a-priori costs and the axis minima of the LLRs. An even count,
/// so that every warp's 64-bit words are aligned.
struct kbest_select_layout {
    int parked, chosen, item, paths_words, table, costs, amin, words;
    static kbest_select_layout of(int nt,
                                  int K,
                                  const pam_table& pam,
                                  int per_lane,
                                  size_t item_bytes,
                                  bool priors = false)
    {
        const int M = pam.order();
        kbest_select_layout l;
        l.parked = 2 * 32 * per_lane;
        l.chosen = 2 * K;
        l.item = int(item_bytes / 4);
        l.paths_words = K * 2 * nt;
        l.table = nt * M;
        l.costs = priors ? nt * M : 0;
        l.amin = kbest_axis_minima_words(nt, pam);
        l.words = l.parked + l.chosen + l.item + 2 * l.paths_words + 2 * l.table +
                  l.costs + l.amin;
        l.words += l.words & 1;
        return l;
    }
};

constexpr int k_kbest_select_warps = 8;
/// The selection kernel takes K <= 32 (a kept path per lane) and K * M <= 1024
/// (at most 32 children per lane: 64-QAM with the default K = 16); larger
/// lists take kbest_threshold_kernel.
constexpr int k_kbest_select_max_k = 32;
constexpr int k_kbest_select_max_per_lane = 32; // kernels compiled for P = 2 .. 32
constexpr int k_kbest_select_max_children = 32 * k_kbest_select_max_per_lane;
/// Blocks an SM should hold: 5 (40 warps) caps 4x4 16-QAM K = 16 (P = 8) at 48
/// registers (it took 63 and ran 3 % slower on the H100 at 32 warps); 16 and
/// 32 children a lane need their registers (3 blocks: 85; 2 blocks: 128).
constexpr int kbest_select_min_blocks(int per_lane)
{
    return per_lane <= 8 ? 5 : (per_lane <= 16 ? 3 : 2);
}

/// The children per lane the selection kernel needs: P, a power of two from 2,
/// 32 P covering K * M. P divides M (M >= 4 is a power of two, and
/// 32 P = max(64, next power of two of K M) <= 32 M as K <= 32), so a lane's
/// children share a parent; and M / P <= 32, so the lanes holding a symbol's
/// children repeat every M / P lanes.
inline int kbest_children_per_lane(int K, int M)
{
    int per_lane = 2;
    while (32 * per_lane < K * M)
        per_lane *= 2;
    return per_lane;
}

inline bool kbest_selects(int K, int M)
{
    return K <= k_kbest_select_max_k && K * M <= k_kbest_select_max_children;
}

/// Puts the smaller of words i and j at i, without branches.
template <int P>
__device__ __forceinline__ void order_pair(unsigned long long (&v)[P], int i, int j)
{
    const unsigned long long a = v[i], b = v[j];
    v[i] = a < b ? a : b;
    v[j] = a < b ? b : a;
}

/// A lane's P children (child_word) in order, in registers: the smallest known
/// networks for 2, 4 and 8 inputs (1, 5 and 19 comparators; bitonic takes 1,
/// 6 and 24), bitonic for 16 and 32 (80 and 240).
template <int P>
__device__ __forceinline__ void sort_lane_children(unsigned long long (&v)[P])
{
    if constexpr (P == 2) {
        order_pair(v, 0, 1);
    } else if constexpr (P == 4) {
        order_pair(v, 0, 1);
        order_pair(v, 2, 3);
        order_pair(v, 0, 2);
        order_pair(v, 1, 3);
        order_pair(v, 1, 2);
    } else if constexpr (P == 8) {
        constexpr int pairs[19][2] = { { 0, 2 }, { 1, 3 }, { 4, 6 }, { 5, 7 }, { 0, 4 },
                                       { 1, 5 }, { 2, 6 }, { 3, 7 }, { 0, 1 }, { 2, 3 },
                                       { 4, 5 }, { 6, 7 }, { 2, 4 }, { 3, 5 }, { 1, 4 },
                                       { 3, 6 }, { 1, 2 }, { 3, 4 }, { 5, 6 } };
#pragma unroll
        for (int c = 0; c < 19; ++c)
            order_pair(v, pairs[c][0], pairs[c][1]);
    } else {
#pragma unroll
        for (int k = 2; k <= P; k <<= 1)
#pragma unroll
            for (int j = k >> 1; j > 0; j >>= 1)
#pragma unroll
                for (int i = 0; i < P; ++i) {
                    const int o = i ^ j;
                    if (o > i) {
                        if ((i & k) == 0)
                            order_pair(v, i, o);
                        else
                            order_pair(v, o, i);
                    }
                }
    }
}

/// K-best for small lists (K <= 32, K * M <= 1024), the same steps and results
/// as kbest_threshold_kernel without a candidate buffer in shared memory: lane l
/// computes children l*P .. l*P+P-1 (one parent's, so the parent's residuals
/// come from the lane that keeps it, by shuffle), sorts them in registers and
/// parks them in shared memory; the warp then takes the K best one at a time,
/// the smallest head (a warp minimum; ties go to the lowest lane, whose
/// children have the lower indices), and the winning lane reads its next
/// child. A level with one path and M <= 32 children (the top one, and every
/// one with K = 1) ranks a child per lane instead. Distances are non-negative, so their
/// bits order as unsigned integers. The pruned children's minima are reduced across the
/// lanes that share a symbol (or a parent) before one atomicMin each. M and L
/// are powers of two: indices split by shifts and masks, not by the integer
/// divisions that dominated this kernel's first version. LBITS: log2 L, so
/// that the terms of each level are computed once for a lane's children.
template <int NT, bool Priors, int P, int LBITS>
__global__ void __launch_bounds__(32 * k_kbest_select_warps, kbest_select_min_blocks(P))
    kbest_select_kernel(const sphere_item<NT>* __restrict__ items,
                        size_t batch,
                        const __grid_constant__ pam_table pam,
                        int K,
                        kbest_select_layout l,
                        float n0,
                        float clip,
                        float missing,
                        const float* __restrict__ priors,
                        float* __restrict__ llr,
                        fault_sink faults)
{
    constexpr int COLS = 2 * NT;
    constexpr unsigned int all = 0xffffffffu;  // the warp's lanes, in *_sync masks
    constexpr unsigned int none = 0xffffffffu; // no child: after every distance's bits
    extern __shared__ __align__(16) unsigned int smem_words[]; // 64-bit words inside
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t p = size_t(blockIdx.x) * (blockDim.x / 32) + warp;
    if (p >= batch || faults.flagged(p)) // the whole warp leaves
        return;
    constexpr int lbits = LBITS, mbits = 2 * LBITS, L = 1 << lbits, M = 1 << mbits;
    constexpr int lanes_per_parent = M / P; // a power of two, at most 32
    const int Q = pam.bits_per_symbol();
    unsigned int* w = smem_words + size_t(warp) * l.words;
    // A lane's sorted children 1..P-1 (its head, sorted child 0, stays in
    // registers), sorted child s at [(s - 1) * 32 + lane], then
    // an end marker (no child) at [(P - 1) * 32 + lane]; the new list after them.
    unsigned long long* parked = reinterpret_cast<unsigned long long*>(w);
    unsigned long long* chosen = parked + 32 * P;
    unsigned int* item_words = w + l.parked + l.chosen;
    const sphere_item<NT>* item = reinterpret_cast<const sphere_item<NT>*>(item_words);
    int* lists =
        reinterpret_cast<int*>(item_words + l.item); // two lists of K paths' levels
    // The symbol minima as unsigned float bits: no child (all ones) is after
    // every distance, so an atomicMin of it changes nothing.
    unsigned int* dmin = reinterpret_cast<unsigned int*>(lists + 2 * l.paths_words);
    unsigned int* pmin = dmin + l.table;
    float* cost = reinterpret_cast<float*>(pmin + l.table);
    float* amin = cost + l.costs;
    const float* prior = Priors ? priors + p * NT * Q : nullptr;
    if (!kbest_warp_begin<NT>(items,
                              p,
                              prior,
                              pam,
                              n0,
                              l.item,
                              item_words,
                              reinterpret_cast<int*>(dmin),
                              2 * l.table, // dmin, then pmin
                              cost,
                              faults,
                              lane))
        return; // the whole warp leaves: erased
    parked[(P - 1) * 32 + lane] = ~0ull;
    __syncwarp();
    const float* E = item->E;
    const int* perm = item->perm;
    int* lev = lists;                  // this level's paths
    int* next = lists + l.paths_words; // the next level's
    unsigned int kept_key = 0u;        // lane r: path r's distance's bits
    int paths = 1;
    for (int pos = NT - 1; pos >= 0; --pos) {
        const int n = paths << mbits;
        const int keep = n < K ? n : K;
        float bq = 0.0f, bi = 0.0f;
        if (lane < paths)
            kbest_residuals<NT>(E, lev + lane * COLS, 1, pos, pam, &bq, &bi);
        const float* stream_cost = Priors ? cost + (perm[pos] << mbits) : nullptr;
        if (paths == 1 && M <= 32) {
            // One parent (path 0), a child per lane, each ranked by the
            // children before it; the new list by rank.
            const float pbq = __shfl_sync(all, bq, 0), pbi = __shfl_sync(all, bi, 0);
            const float pped = __uint_as_float(__shfl_sync(all, kept_key, 0));
            const int sym = lane & (M - 1); // lanes from M on: no child
            float d = kbest_child_levels<NT>(
                E, pped, pbq, pbi, pos, sym >> lbits, sym & (L - 1), pam);
            if (Priors)
                d += stream_cost[sym];
            const bool finite = lane >= M || d < k_infinity;
            const unsigned int k = lane < M ? __float_as_uint(d) : none;
            if (__any_sync(all, !finite)) {
                if (lane == 0)
                    faults.report(p, problem_fault::non_finite);
                return;
            }
            int rank = 0;
            for (int o = 0; o < M; ++o) {
                const unsigned int ko = __shfl_sync(all, k, o);
                rank += ko < k || (ko == k && o < lane);
            }
            const bool kept = lane < M && rank < keep;
            if (kept)
                chosen[rank] = child_word(k, lane);
            const unsigned int pruned = lane < M && !kept ? k : none;
            if (lane < M)
                atomicMin(pmin + (perm[pos] << mbits) + lane, pruned);
            const unsigned int lowest = warp_min(pruned);
            if (lane == 0) // the parent's symbols above
                for (int j = pos + 1; j < NT; ++j)
                    atomicMin(pmin + (perm[j] << mbits) + (lev[2 * j] << lbits) +
                                  lev[2 * j + 1],
                              lowest);
            __syncwarp();
        } else {
            const int parent = (lane * P) >> mbits;
            const float pbq = __shfl_sync(all, bq, parent & 31);
            const float pbi = __shfl_sync(all, bi, parent & 31);
            const float pped = __uint_as_float(__shfl_sync(all, kept_key, parent & 31));
            // Every slot computed, without branches; children from n on
            // (their parent's values stale) are then no child.
            unsigned long long v[P]; // child_word of each, sorted below
            unsigned int orig[P];    // the distance bits of child lane * P + s
            bool finite = true;
            // The lane's symbols are base .. base + P - 1 (P divides M): with
            // P >= L each Q level's terms repeat every L children, else all
            // share one I level; written so, the compiler computes each once.
            const int base = (lane * P) & (M - 1);
#pragma unroll
            for (int s = 0; s < P; ++s) {
                const int c = lane * P + s, sym = base + s;
                const int li = P >= L ? (base >> lbits) + (s >> lbits) : base >> lbits;
                const int lq = P >= L ? s & (L - 1) : (base & (L - 1)) + s;
                float d = kbest_child_levels<NT>(E, pped, pbq, pbi, pos, li, lq, pam);
                if (Priors)
                    d += stream_cost[sym];
                finite &= c >= n || d < k_infinity;
                orig[s] = c < n ? __float_as_uint(d) : none;
                v[s] = child_word(orig[s], c);
            }
            if (__any_sync(all, !finite)) {
                if (lane == 0)
                    faults.report(p, problem_fault::non_finite);
                return;
            }
            // The lane's children in (distance, index) order, parked in shared
            // memory after the head, which stays in registers.
            sort_lane_children<P>(v);
#pragma unroll
            for (int s = 1; s < P; ++s)
                parked[(s - 1) * 32 + lane] = v[s];
            unsigned long long head = v[0];
            const unsigned long long* following = parked + lane; // its own column only
            const unsigned int lanes_before = (1u << lane) - 1u;
            // The K best, one at a time: the smallest head, ties to the lowest
            // lane (lane l holds children l*P .. l*P+P-1), which moves on.
            for (int r = 0; r < keep; ++r) {
                const unsigned int head_key = unsigned(head >> 32);
                const unsigned int m = warp_min(head_key);
                const unsigned int tied = __ballot_sync(all, head_key == m);
                if (head_key == m && (tied & lanes_before) == 0) {
                    chosen[r] = head;
                    head = *following;
                    following += 32;
                }
            }
            __syncwarp();
            if (n >
                keep) { // the pruned children's hypotheses, for bits that leave the list
                const unsigned long long last = chosen[keep - 1];
                unsigned int lane_min = none;
#pragma unroll
                for (int s = 0; s < P; ++s) { // kept: not after the list's last
                    const bool kept = child_word(orig[s], lane * P + s) <= last;
                    orig[s] = kept ? none : orig[s];
                    lane_min = orig[s] < lane_min ? orig[s] : lane_min;
                }
                // This position's symbols: lanes l and l + lanes_per_parent
                // hold the same ones.
                for (int o = lanes_per_parent; o < 32; o <<= 1)
#pragma unroll
                    for (int s = 0; s < P; ++s) {
                        const unsigned int u = __shfl_xor_sync(all, orig[s], o);
                        orig[s] = u < orig[s] ? u : orig[s];
                    }
                if (lane < lanes_per_parent) {
                    unsigned int* slots = pmin + (perm[pos] << mbits) + lane * P;
#pragma unroll
                    for (int s = 0; s < P; ++s)
                        atomicMin(slots + s, orig[s]); // none: no change
                }
                // The parent's symbols above: one value per parent.
                for (int o = 1; o < lanes_per_parent; o <<= 1) {
                    const unsigned int u = __shfl_xor_sync(all, lane_min, o);
                    lane_min = u < lane_min ? u : lane_min;
                }
                if ((lane & (lanes_per_parent - 1)) == 0 && parent < paths) {
                    const int* up = lev + parent * COLS;
#pragma unroll
                    for (int j = 1; j < NT; ++j)
                        if (j > pos)
                            atomicMin(pmin + (perm[j] << mbits) + (up[2 * j] << lbits) +
                                          up[2 * j + 1],
                                      lane_min);
                }
            }
        }
        if (lane < keep) { // child `lane` of the new list: the next level's path `lane`
            const unsigned long long mine = chosen[lane];
            const int child = int(unsigned(mine));
            const int a = child >> mbits, sym = child & (M - 1);
            for (int j = 2 * pos + 2; j < COLS; ++j)
                next[lane * COLS + j] = lev[a * COLS + j];
            next[lane * COLS + 2 * pos] = sym >> lbits;
            next[lane * COLS + 2 * pos + 1] = sym & (L - 1);
            kept_key = unsigned(mine >> 32);
        }
        __syncwarp();
        int* t = lev;
        lev = next;
        next = t;
        paths = keep;
    }
    if (lane < paths)
#pragma unroll
        for (int j = 0; j < NT; ++j)
            atomicMin(dmin + (perm[j] << mbits) + (lev[lane * COLS + 2 * j] << lbits) +
                          lev[lane * COLS + 2 * j + 1],
                      kept_key);
    __syncwarp();
    const float best = __uint_as_float(__shfl_sync(all, kept_key, 0));
    kbest_warp_llrs<NT>(reinterpret_cast<const int*>(dmin),
                        reinterpret_cast<const int*>(pmin),
                        best,
                        pam,
                        n0,
                        clip,
                        missing,
                        prior,
                        amin,
                        llr + p * NT * Q,
                        lane);
}

class cuda_kbest_engine final : public cuda_detector_engine
{
public:
    explicit cuda_kbest_engine(const kbest_config& config)
        : cuda_detector_engine(
              config.shape,
              config.mod,
              { true, false }, // the ordering/QR kernel reads its input once, up front
              sphere_item_bytes(config.shape.nt)),
          m_config(config)
    {
        const kbest_threshold_layout l = kbest_threshold_layout::of(
            config.shape.nt, config.K, m_pam, sphere_item_bytes(config.shape.nt));
        int device = 0;
        MIMO_CUDA_CHECK(cudaGetDevice(&device));
        MIMO_CUDA_CHECK(cudaDeviceGetAttribute(
            &m_shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        check_fits(l, "");
    }

protected:
    void launch(const detector_input& in,
                float clip,
                float* d_llr,
                fault_sink sink,
                cudaStream_t stream) override
    {
        const size_t batch = in.problems();
        const int nt = m_config.shape.nt, M = m_pam.order();
        const bool priors = in.priors != nullptr;
        const bool selects = kbest_selects(m_config.K, M);
        const int per_lane = selects ? kbest_children_per_lane(m_config.K, M) : 0;
        const kbest_select_layout ls = kbest_select_layout::of(
            nt, m_config.K, m_pam, per_lane, sphere_item_bytes(nt), priors);
        const kbest_threshold_layout lw = kbest_threshold_layout::of(
            nt, m_config.K, m_pam, sphere_item_bytes(nt), priors);
        if (!selects) // before any launch: nothing to undo
            check_fits(lw, " and the a-priori costs");
        void* d_items = m_items.reserve(batch * sphere_item_bytes(nt));
        launch_sphere_prepare(
            m_config.shape, 0, in.H, in.y, batch, d_items, sink, stream);
        dispatch_nt(nt, [&](auto nt_c) {
            constexpr int NT = decltype(nt_c)::value;
            if constexpr (NT <= k_sphere_max_streams) {
                const auto* items = static_cast<const sphere_item<NT>*>(d_items);
                // Both kernels take the same arguments but their layout.
                const auto run = [&](auto kernel, auto layout, int words, int max_warps) {
                    launch_warps(kernel,
                                 batch,
                                 words,
                                 max_warps,
                                 stream,
                                 items,
                                 batch,
                                 m_pam,
                                 m_config.K,
                                 layout,
                                 in.n0,
                                 clip,
                                 m_config.missing_llr,
                                 in.priors,
                                 d_llr,
                                 sink);
                };
                if (!selects) {
                    run(priors ? kbest_threshold_kernel<NT, true>
                               : kbest_threshold_kernel<NT, false>,
                        lw,
                        lw.words,
                        k_kbest_max_warps);
                    return;
                }
                // A kernel for each (children a lane, bits a level) that
                // kbest_selects admits: M / 32 <= P <= M.
                const auto with = [&](auto per_lane_c, auto lbits_c) {
                    constexpr int P = decltype(per_lane_c)::value;
                    constexpr int LB = decltype(lbits_c)::value, M_c = 1 << (2 * LB);
                    if constexpr (P <= M_c && 32 * P >= M_c)
                        run(priors ? kbest_select_kernel<NT, true, P, LB>
                                   : kbest_select_kernel<NT, false, P, LB>,
                            ls,
                            ls.words,
                            k_kbest_select_warps);
                    else // kbest_children_per_lane gives M / 32 <= P <= M
                        throw std::logic_error(
                            "mimo_gpu: kbest: no selection kernel for these lists");
                };
                const auto with_levels = [&](auto lbits_c) {
                    switch (per_lane) {
                    case 2:
                        with(std::integral_constant<int, 2>{}, lbits_c);
                        break;
                    case 4:
                        with(std::integral_constant<int, 4>{}, lbits_c);
                        break;
                    case 8:
                        with(std::integral_constant<int, 8>{}, lbits_c);
                        break;
                    case 16:
                        with(std::integral_constant<int, 16>{}, lbits_c);
                        break;
                    default: // kbest_selects: per_lane <= k_kbest_select_max_per_lane
                        static_assert(k_kbest_select_max_per_lane == 32,
                                      "a kernel for each children-per-lane count");
                        with(std::integral_constant<int, 32>{}, lbits_c);
                        break;
                    }
                };
                // QPSK .. 256-QAM, the family's modulations
                dispatch_bits_per_dim<4>(m_pam.bits_per_dim, with_levels);
            }
        });
        MIMO_CUDA_CHECK_LAUNCH("kbest search kernel");
    }

private:
    /// A warp per problem: as many warps a block (up to max_warps) as 48 KB of
    /// shared memory holds at `words` a warp (4x4 16-QAM K = 16: 8 warps of the
    /// selection kernel); a warp that needs more raises the kernel's limit.
    template <typename Kernel, typename... Args>
    static void launch_warps(Kernel kernel,
                             size_t batch,
                             int words,
                             int max_warps,
                             cudaStream_t stream,
                             Args... args)
    {
        const int by_memory = int((48 * 1024) / (size_t(words) * 4));
        const int warps =
            by_memory < 1 ? 1 : (by_memory < max_warps ? by_memory : max_warps);
        const size_t shared = size_t(warps) * size_t(words) * 4;
        if (shared > 48 * 1024)
            MIMO_CUDA_CHECK(cudaFuncSetAttribute(
                kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
        kernel<<<unsigned((batch + warps - 1) / warps), 32 * warps, shared, stream>>>(
            args...);
    }

    /// A warp's lists must fit the GPU's shared memory (K = 1024 with QPSK, nt = 4: 120
    /// KB).
    void check_fits(const kbest_threshold_layout& l, const std::string& with) const
    {
        if (size_t(l.words) * 4 > size_t(m_shared_limit))
            throw std::invalid_argument(
                "mimo_gpu: detector 'kbest': K = " + std::to_string(m_config.K) +
                " with " + std::to_string(m_pam.order()) + "-point symbols" + with +
                " needs " + std::to_string(size_t(l.words) * 4 / 1024) +
                " KB of shared memory per problem; this GPU allows " +
                std::to_string(m_shared_limit / 1024) + " KB: choose a smaller K");
    }

    kbest_config m_config;
    int m_shared_limit = 0;
    device_array<char> m_items; // the ordered QR of each problem
};

} // namespace

std::unique_ptr<detector_engine> make_cuda_kbest_engine(const kbest_config& config)
{
    return std::make_unique<cuda_kbest_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
