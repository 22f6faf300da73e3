// Inter-carrier interference (ICI) cancellation for channels that change
// within an OFDM symbol (Doppler), with decisions on the sent symbols.
//
// Over one FFT window a slowly turning channel is H(n) = H + (n - n_c) H'
// per tap, n_c the window's middle (where a front_end_frame's per-symbol H is
// taken: the pilots' least squares average the window). With the grid's
// unitary DFT F and D = diag(n - n_c), receive antenna r sees
//
//   y_r = sum_t H_rt X_t + F D F^H (sum_t H'_rt X_t),
//
// whose second term (zero on the diagonal: D sums to 0) is the interference
// every subcarrier's symbol leaks into the others: at 300 Hz and 30 kHz
// spacing about -35 dB per stream, the floor of 4x4 256-QAM
// (docs/front_end.md, "Inter-carrier interference"). Given decisions X (a
// first detection's, or a decoded codeword's), cancel() subtracts it from y;
// H' comes from the neighbouring data symbols' channels (central differences
// in time, one-sided at the frame's ends). Detecting again on the cleaned y
// then sees the interference of wrong decisions only.
#pragma once

#include <mimo_gpu/ofdm_grid.h>
#include <mimo_gpu/ofdm_receiver.h>

#include <memory>
#include <vector>

namespace mimo_gpu {

class ici_canceller
{
public:
    /// Throws std::invalid_argument for a bad grid (ofdm_grid::validate).
    explicit ici_canceller(const ofdm_grid& grid);
    ~ici_canceller();
    ici_canceller(const ici_canceller&) = delete;
    ici_canceller& operator=(const ici_canceller&) = delete;

    const ofdm_grid& grid() const { return m_grid; }

    /// The interference estimate, one value per element of frame.y (what
    /// cancel() subtracts). frame: a channel per data symbol (symbols_per_channel
    /// 1, channels == grid().data_elements(), as LMMSE or linear interpolation
    /// in time and the Doppler genie give), H and y of matching sizes;
    /// decisions: data_elements() * nt symbols, stream t of problem p at
    /// p * nt + t (the detector's and ofdm_transmitter::map's order). Anything
    /// else is a std::invalid_argument. A non-finite decision or channel adds
    /// nothing (it cannot spoil the other subcarriers' values).
    std::vector<cfloat> interference(const front_end_frame& frame,
                                     const cfloat* decisions) const;
    /// frame.y -= interference(frame, decisions).
    void cancel(front_end_frame& frame, const cfloat* decisions) const;

private:
    struct impl;
    ofdm_grid m_grid;
    std::unique_ptr<impl> m_impl;
};

} // namespace mimo_gpu
