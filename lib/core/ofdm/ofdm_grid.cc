// ofdm_grid: presets, checks and the known pilot and preamble values.
#include <mimo_gpu/ofdm_grid.h>

#include "pilot_layout.h"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace mimo_gpu {

namespace {

struct preset_entry {
    const char* name;
    int fft_size, used;
    double sample_rate;
    bool dc_null;
};

// LTE (TS 36.101 5.6: 6/15/25/50/75/100 RB of 12 subcarriers at 15 kHz) and NR
// (TS 38.101-1 5.3.2: 51/106/273 RB at 30 kHz).
constexpr preset_entry k_presets[] = {
    { "lte1.4", 128, 72, 1.92e6, true },      { "lte3", 256, 180, 3.84e6, true },
    { "lte5", 512, 300, 7.68e6, true },       { "lte10", 1024, 600, 15.36e6, true },
    { "lte15", 1536, 900, 23.04e6, true },    { "lte20", 2048, 1200, 30.72e6, true },
    { "nr20", 1024, 612, 30.72e6, false },    { "nr40", 2048, 1272, 61.44e6, false },
    { "nr100", 4096, 3276, 122.88e6, false },
};

/// A fixed PN sequence (a 32-bit LFSR-like hash) for pilot and preamble values.
cfloat qpsk_of(uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 0x9e3779b9u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    const float a = float(M_SQRT1_2);
    return cfloat((x & 1) ? -a : a, (x & 2) ? -a : a);
}

void fail(const std::string& what)
{
    throw std::invalid_argument("mimo_gpu: ofdm_grid: " + what);
}

} // namespace

ofdm_grid ofdm_grid::preset(const std::string& name)
{
    for (const auto& p : k_presets)
        if (name == p.name) {
            ofdm_grid g;
            g.fft_size = p.fft_size;
            g.used_subcarriers = p.used;
            g.sample_rate = p.sample_rate;
            g.dc_null = p.dc_null;
            g.cp_length = p.fft_size * 144 / 2048;
            return g;
        }
    std::string known;
    for (const auto& p : k_presets)
        known += std::string(known.empty() ? "" : ", ") + p.name;
    fail("unknown preset '" + name + "' (known: " + known + ")");
    return {};
}

std::vector<std::string> ofdm_grid::preset_names()
{
    std::vector<std::string> names;
    for (const auto& p : k_presets)
        names.emplace_back(p.name);
    return names;
}

void ofdm_grid::validate() const
{
    if (fft_size < 16 || fft_size > 65536)
        fail("fft_size must be in 16..65536, got " + std::to_string(fft_size));
    if (cp_length < 0 || cp_length > fft_size / 4)
        fail("cp_length must be in 0..fft_size/4 = " + std::to_string(fft_size / 4) +
             ", got " + std::to_string(cp_length));
    if (used_subcarriers < 2 || used_subcarriers % 2 != 0)
        fail("used_subcarriers must be even and >= 2, got " +
             std::to_string(used_subcarriers));
    if (used_subcarriers > fft_size - 1 - (dc_null ? 1 : 0))
        fail(std::to_string(used_subcarriers) + " used subcarriers" +
             (dc_null ? " and the DC null" : "") + " do not fit an FFT of " +
             std::to_string(fft_size) + " (at most " +
             std::to_string(fft_size - 1 - (dc_null ? 1 : 0)) + ")");
    if (nt < 1 || nt > 8)
        fail("nt must be in 1..8, got " + std::to_string(nt));
    if (used_subcarriers < 2 * nt)
        fail("the pilot combs need at least 2 subcarriers per antenna: " +
             std::to_string(used_subcarriers) +
             " used subcarriers for nt = " + std::to_string(nt));
    if (data_symbols < 1 || data_symbols > 1000)
        fail("data_symbols must be in 1..1000, got " + std::to_string(data_symbols));
    if (slots < 1 || slots > 1000)
        fail("slots must be in 1..1000, got " + std::to_string(slots));
    const int P = pilot_symbols_per_slot();
    if (P < 1 || P > k_max_pilot_symbols_per_slot)
        fail("a slot needs 1.." + std::to_string(k_max_pilot_symbols_per_slot) +
             " pilot symbols, got " + std::to_string(P));
    for (int p = 0; p < P; ++p) {
        const int at = pilot_positions[size_t(p)];
        if (at < 0 || at >= slot_symbols())
            fail("pilot position " + std::to_string(at) + " is outside the slot of " +
                 std::to_string(slot_symbols()) + " symbols (" + std::to_string(P) +
                 " pilot + " + std::to_string(data_symbols) + " data): positions 0.." +
                 std::to_string(slot_symbols() - 1));
        if (p > 0 && at <= pilot_positions[size_t(p - 1)])
            fail("pilot positions must be ascending and distinct, got " +
                 std::to_string(pilot_positions[size_t(p - 1)]) + " then " +
                 std::to_string(at));
    }
    if (!(sample_rate > 0) || !std::isfinite(sample_rate))
        fail("sample_rate must be finite and > 0");
}

size_t ofdm_grid::frame_bits() const
{
    return data_elements() * size_t(nt) * size_t(constellation(mod).bits_per_symbol());
}

int ofdm_grid::offset(int i) const
{
    const int half = used_subcarriers / 2;
    if (dc_null)
        return i < half ? i - half : i - half + 1;
    return i - half; // NR: DC is logical subcarrier U/2
}

int ofdm_grid::bin(int i) const
{
    const int k = offset(i);
    return k < 0 ? k + fft_size : k;
}

cfloat ofdm_grid::pilot(int q, int i) const
{
    return qpsk_of(uint32_t(q) * 65537u + uint32_t(i) + 1u);
}

int ofdm_grid::pilot_symbol(int slot, int p) const
{
    return detail::layout_of(*this).pilot_symbol(slot * pilot_symbols_per_slot() + p);
}

int ofdm_grid::data_symbol(int slot, int s) const
{
    return detail::layout_of(*this).data_symbol(slot, s);
}

std::vector<int> ofdm_grid::parse_pilot_positions(const std::string& text)
{
    std::vector<int> positions;
    std::string field;
    const auto take = [&] {
        if (field.empty())
            return;
        size_t used = 0;
        int v = 0;
        try {
            v = std::stoi(field, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != field.size())
            throw std::invalid_argument("mimo_gpu: pilot positions: '" + field +
                                        "' is not an integer (write e.g. \"0,7\")");
        positions.push_back(v);
        field.clear();
    };
    for (const char ch : text) {
        if (ch == ',' || ch == ' ' || ch == '\t')
            take();
        else
            field += ch;
    }
    take();
    if (positions.empty())
        throw std::invalid_argument("mimo_gpu: pilot positions: none given in '" + text +
                                    "'");
    return positions;
}

std::string pilot_positions_text(const std::vector<int>& positions)
{
    std::string s;
    for (size_t p = 0; p < positions.size(); ++p)
        s += (p ? "," : "") + std::to_string(positions[p]);
    return s;
}

cfloat ofdm_grid::preamble(int i) const
{
    if (offset(i) % 2 != 0)
        return cfloat(0, 0);
    return qpsk_of(0x5eed0000u + uint32_t(i)) * std::sqrt(2.0f * float(nt));
}

int ofdm_grid::preamble_antenna(int i) const { return ((offset(i) / 2) % nt + nt) % nt; }

std::string describe(const ofdm_grid& g)
{
    std::ostringstream s;
    s << "N=" << g.fft_size << " CP=" << g.cp_length << " U=" << g.used_subcarriers
      << (g.dc_null ? " DC-null" : " DC-used") << " fs=" << g.sample_rate / 1e6
      << " MHz nt=" << g.nt << " " << to_string(g.mod) << " " << g.slots << " slots x ("
      << (g.pilot_symbols_per_slot() == 1
              ? std::string("pilot")
              : std::to_string(g.pilot_symbols_per_slot()) + " pilots")
      << " + " << g.data_symbols << " data)";
    if (g.pilot_positions != std::vector<int>{ 0 })
        s << " pilots at " << pilot_positions_text(g.pilot_positions);
    return s.str();
}

std::string frame_mismatch(const ofdm_grid& recorded, const ofdm_grid& expected)
{
    const auto differs = [](const char* field,
                            const std::string& a,
                            const std::string& b) {
        return std::string(field) + " " + a + " (recorded) against " + b + " (expected)";
    };
    const std::pair<const char*, std::pair<int, int>> fields[] = {
        { "fft_size", { recorded.fft_size, expected.fft_size } },
        { "cp_length", { recorded.cp_length, expected.cp_length } },
        { "used_subcarriers", { recorded.used_subcarriers, expected.used_subcarriers } },
        { "dc_null", { int(recorded.dc_null), int(expected.dc_null) } },
        { "nt", { recorded.nt, expected.nt } },
        { "slots", { recorded.slots, expected.slots } },
        { "data_symbols", { recorded.data_symbols, expected.data_symbols } },
    };
    for (const auto& [field, values] : fields)
        if (values.first != values.second)
            return differs(
                field, std::to_string(values.first), std::to_string(values.second));
    if (recorded.pilot_positions != expected.pilot_positions)
        return differs("pilot_positions",
                       pilot_positions_text(recorded.pilot_positions),
                       pilot_positions_text(expected.pilot_positions));
    if (recorded.mod != expected.mod)
        return differs("modulation", to_string(recorded.mod), to_string(expected.mod));
    return {};
}

} // namespace mimo_gpu
