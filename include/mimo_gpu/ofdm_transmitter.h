// MIMO-OFDM transmitter: coded bits -> QAM -> nt streams on the resource grid
// (ofdm_grid.h: preamble, pilot combs, data) -> nt baseband sample streams.
#pragma once

#include <mimo_gpu/ofdm_grid.h>

#include <memory>
#include <vector>

namespace mimo_gpu {

namespace detail {
class fftw_plan_1d;
}

class ofdm_transmitter
{
public:
    /// Throws std::invalid_argument for a grid that fails validate().
    explicit ofdm_transmitter(const ofdm_grid& grid);
    ~ofdm_transmitter();
    const ofdm_grid& grid() const { return m_grid; }

    /// One frame. bits: grid().frame_bits() bytes (0/1) in resource-element order
    /// (ofdm_grid.h); samples: grid().frame_samples() * nt, antenna-interleaved
    /// (sample n of antenna t at n * nt + t). Throws std::invalid_argument on a
    /// byte other than 0 or 1.
    void modulate(const uint8_t* bits, cfloat* samples);

    /// The data symbols the bits map to: data_elements() * nt, symbol of stream
    /// t of problem p at p * nt + t (what a perfect receiver would detect).
    void map(const uint8_t* bits, cfloat* symbols) const;

private:
    ofdm_grid m_grid;
    constellation m_constellation;
    std::unique_ptr<detail::fftw_plan_1d> m_ifft;
    std::vector<cfloat> m_symbols, m_bins, m_time;
};

} // namespace mimo_gpu
