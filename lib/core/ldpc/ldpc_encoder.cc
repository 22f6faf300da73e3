// 5G NR LDPC codes (3GPP TS 38.212 5.3.2): lifting sizes, the lifted base
// graphs, the encoder and the parity check. Bits are bytes 0/1; column j of
// the base graph holds bits [j Zc, (j + 1) Zc) of the full codeword x = [c | w].
#include "ldpc_base_graph.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

namespace {

/// Table 5.3.2-1: Zc = a * 2^j <= 384 with a = 2, 3, 5, 7, 9, 11, 13, 15 for i_LS 0..7.
constexpr int k_set_base[8] = { 2, 3, 5, 7, 9, 11, 13, 15 };
constexpr int k_largest_lifting_size = 384;

/// Core rows: the first four rows hold the parity columns kb .. kb + 3.
constexpr int k_core_rows = 4;

/// (P^s v)_i = v_{(i + s) mod Zc}: the identity shifted right by s, applied to v.
void add_shifted(const uint8_t* v, int s, int Zc, uint8_t* acc)
{
    for (int i = 0; i < Zc; ++i)
        acc[i] ^= v[(i + s) % Zc];
}

/// Solves P^s u = rhs for u.
void unshift(const uint8_t* rhs, int s, int Zc, uint8_t* u)
{
    for (int k = 0; k < Zc; ++k)
        u[k] = rhs[(k - s + Zc) % Zc];
}

} // namespace

const std::vector<int>& ldpc_lifting_sizes()
{
    static const std::vector<int> sizes = [] {
        std::vector<int> z;
        for (int a : k_set_base)
            for (int v = a; v <= k_largest_lifting_size; v *= 2)
                z.push_back(v);
        std::sort(z.begin(), z.end());
        return z;
    }();
    return sizes;
}

int ldpc_lifting_set(int Zc)
{
    for (int set = 0; set < 8; ++set)
        for (int v = k_set_base[set]; v <= k_largest_lifting_size; v *= 2)
            if (v == Zc)
                return set;
    throw std::invalid_argument("mimo_gpu: LDPC lifting size Zc = " + std::to_string(Zc) +
                                " is not in 38.212 Table 5.3.2-1");
}

void ldpc_code::validate() const
{
    if (base_graph != 1 && base_graph != 2)
        throw std::invalid_argument("mimo_gpu: LDPC base graph must be 1 or 2, got " +
                                    std::to_string(base_graph));
    ldpc_lifting_set(Zc);
}

namespace detail {

std::vector<ldpc_edge> ldpc_edges(const ldpc_code& code)
{
    code.validate();
    const int set = ldpc_lifting_set(code.Zc);
    const ldpc_table t = ldpc_base_graph_table(code.base_graph);
    std::vector<ldpc_edge> edges;
    edges.reserve(t.count);
    for (size_t e = 0; e < t.count; ++e)
        edges.push_back(
            { t.entries[e].row, t.entries[e].column, t.entries[e].shift[set] % code.Zc });
    return edges;
}

} // namespace detail

ldpc_encoder::ldpc_encoder(const ldpc_code& code) : m_code(code)
{
    const std::vector<detail::ldpc_edge> edges = detail::ldpc_edges(code);
    for (const auto& e : edges) {
        m_edges.push_back(e.row);
        m_edges.push_back(e.column);
        m_edges.push_back(e.shift);
    }
    // The structure the encoding relies on (38.212's base graphs have it):
    // every core parity column but the first appears in exactly two core rows
    // with equal shifts, and the first's shifts cancel in pairs but for one,
    // b; so the core rows summed give P^b p_0. Each extension row r >= 4 has
    // its own parity column kb + r.
    const int kb = code.info_columns();
    std::map<int, std::vector<int>> core; // column -> shifts in the core rows
    for (const auto& e : edges) {
        if (e.row < k_core_rows && e.column >= kb)
            core[e.column].push_back(e.shift);
        if (e.row >= k_core_rows && e.column >= kb + k_core_rows &&
            e.column != kb + e.row)
            throw std::logic_error("mimo_gpu: LDPC base graph: row " +
                                   std::to_string(e.row) + " has parity column " +
                                   std::to_string(e.column));
    }
    std::vector<int> first = core[kb];
    std::sort(first.begin(), first.end());
    std::vector<int> unpaired;
    for (size_t i = 0; i < first.size(); ++i) {
        if (i + 1 < first.size() && first[i] == first[i + 1]) {
            ++i;
            continue;
        }
        unpaired.push_back(first[i]);
    }
    bool paired = unpaired.size() == 1;
    for (int c = kb + 1; c < kb + k_core_rows; ++c)
        paired &= core[c].size() == 2 && core[c][0] == core[c][1];
    if (!paired)
        throw std::logic_error("mimo_gpu: LDPC base graph " +
                               std::to_string(code.base_graph) +
                               ": the core parity columns do not have the 38.212 form");
    m_core_shift = unpaired[0];
}

void ldpc_encoder::encode_full(const uint8_t* c, uint8_t* x) const
{
    const int Zc = m_code.Zc, kb = m_code.info_columns(), rows = m_code.rows();
    const size_t edges = m_edges.size() / 3;
    std::copy(c, c + size_t(m_code.K()), x);
    std::fill(x + m_code.K(), x + m_code.codeword_bits(), uint8_t(0));
    std::vector<bool> known(size_t(m_code.columns()), false);
    std::fill(known.begin(), known.begin() + kb, true);
    std::vector<uint8_t> sum(static_cast<size_t>(Zc)), rhs(static_cast<size_t>(Zc));

    // p_0 (column kb) = P^-b times the sum of the core rows' information parts.
    std::fill(sum.begin(), sum.end(), uint8_t(0));
    for (size_t e = 0; e < edges; ++e) {
        const int row = m_edges[3 * e], col = m_edges[3 * e + 1], s = m_edges[3 * e + 2];
        if (row < k_core_rows && col < kb)
            add_shifted(x + size_t(col) * Zc, s, Zc, sum.data());
    }
    unshift(sum.data(), m_core_shift, Zc, x + size_t(kb) * Zc);
    known[size_t(kb)] = true;

    // Then each row with one unknown parity column left gives that column:
    // the core rows in turn, then every extension row (its own column kb + r).
    auto solve_row = [&](int row) {
        int unknown = -1, unknown_shift = 0, count = 0;
        std::fill(rhs.begin(), rhs.end(), uint8_t(0));
        for (size_t e = 0; e < edges; ++e) {
            if (m_edges[3 * e] != row)
                continue;
            const int col = m_edges[3 * e + 1], s = m_edges[3 * e + 2];
            if (known[size_t(col)])
                add_shifted(x + size_t(col) * Zc, s, Zc, rhs.data());
            else {
                unknown = col;
                unknown_shift = s;
                ++count;
            }
        }
        if (count != 1)
            return false;
        unshift(rhs.data(), unknown_shift, Zc, x + size_t(unknown) * Zc);
        known[size_t(unknown)] = true;
        return true;
    };
    for (int solved = 1; solved < k_core_rows;) {
        bool progress = false;
        for (int row = 0; row < k_core_rows && solved < k_core_rows; ++row)
            if (solve_row(row)) {
                ++solved;
                progress = true;
            }
        if (!progress)
            throw std::logic_error("mimo_gpu: LDPC encoder: the core does not solve");
    }
    for (int row = k_core_rows; row < rows; ++row)
        if (!solve_row(row))
            throw std::logic_error("mimo_gpu: LDPC encoder: extension row " +
                                   std::to_string(row));
}

void ldpc_encoder::encode(const uint8_t* c, uint8_t* d) const
{
    std::vector<uint8_t> x(size_t(m_code.codeword_bits()));
    encode_full(c, x.data());
    std::copy(x.begin() + 2 * m_code.Zc, x.end(), d);
}

int ldpc_syndrome_weight(const ldpc_code& code, const uint8_t* x)
{
    const int Zc = code.Zc;
    std::vector<uint8_t> syndrome(size_t(code.rows()) * Zc, 0);
    for (const detail::ldpc_edge& e : detail::ldpc_edges(code))
        add_shifted(
            x + size_t(e.column) * Zc, e.shift, Zc, syndrome.data() + size_t(e.row) * Zc);
    return int(std::count(syndrome.begin(), syndrome.end(), uint8_t(1)));
}

} // namespace mimo_gpu
