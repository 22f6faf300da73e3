// The ICI estimate of include/mimo_gpu/ici_canceller.h: per data symbol and
// receive antenna, v = sum_t H'_rt X_t on the used bins, F D F^H v by two
// unitary FFTs and the ramp between them.
#include "fftw_plan.h"

#include <mimo_gpu/ici_canceller.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

struct ici_canceller::impl {
    detail::fftw_plan_1d forward, inverse;
    explicit impl(int N)
        : forward(N, detail::fftw_plan_1d::direction::forward),
          inverse(N, detail::fftw_plan_1d::direction::inverse)
    {
    }
};

ici_canceller::ici_canceller(const ofdm_grid& grid) : m_grid(grid)
{
    m_grid.validate();
    m_impl = std::make_unique<impl>(m_grid.fft_size);
}

ici_canceller::~ici_canceller() = default;

namespace {

bool finite(cfloat v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }

} // namespace

std::vector<cfloat> ici_canceller::interference(const front_end_frame& frame,
                                                const cfloat* decisions) const
{
    const ofdm_grid& g = m_grid;
    const int U = g.used_subcarriers, D = g.data_symbols, nt = g.nt, N = g.fft_size;
    const size_t elements = g.data_elements();
    if (!decisions)
        throw std::invalid_argument("ici_canceller: no decisions");
    if (frame.symbols_per_channel != 1 || frame.channels != elements)
        throw std::invalid_argument(
            "ici_canceller: the frame needs a channel per data symbol (" +
            std::to_string(elements) + " channels of 1 symbol; it has " +
            std::to_string(frame.channels) + " of " +
            std::to_string(frame.symbols_per_channel) +
            "): receive with time interpolation linear or lmmse");
    const size_t nr = elements ? frame.y.size() / elements : 0;
    if (nr == 0 || frame.y.size() != elements * nr ||
        frame.H.size() != elements * nr * size_t(nt))
        throw std::invalid_argument(
            "ici_canceller: the frame's H (" + std::to_string(frame.H.size()) +
            ") and y (" + std::to_string(frame.y.size()) + ") do not fit the grid's " +
            std::to_string(elements) + " data elements");

    // Data symbols in time order (q = j D + s) and their places in samples.
    const int symbols = g.slots * D;
    std::vector<double> when(static_cast<size_t>(symbols));
    for (int q = 0; q < symbols; ++q)
        when[size_t(q)] = double(g.data_symbol(q / D, q % D)) * g.symbol_samples();
    const auto problem = [&](int q, int c) {
        return (size_t(q / D) * U + size_t(c)) * D + size_t(q % D);
    };

    std::vector<cfloat> ici(frame.y.size(), cfloat(0, 0));
    if (symbols < 2)
        return ici; // no slope to measure
    const detail::fftw_plan_1d::buffer buf = m_impl->forward.make_buffer();
    const float scale = m_impl->forward.scale() * m_impl->inverse.scale();
    const double centre = 0.5 * double(N - 1);
    const size_t block = nr * size_t(nt);
    for (int q = 0; q < symbols; ++q) {
        // H' at symbol q: the derivative of the parabola through three
        // neighbouring data symbols (q's own and its neighbours; the first or
        // last three at the frame's ends), exact for uneven spacing (a pilot
        // symbol between) and second order at the ends; a line through two
        // where the frame has only two.
        const int first = symbols == 2 ? 0 : std::clamp(q - 1, 0, symbols - 3);
        const int points = symbols == 2 ? 2 : 3;
        float weight[3] = { 0, 0, 0 };
        const double x = when[size_t(q)];
        for (int i = 0; i < points; ++i) {
            const double xi = when[size_t(first + i)];
            double w = 0;
            if (points == 2)
                w = (i == 0 ? -1.0 : 1.0) /
                    (when[size_t(first + 1)] - when[size_t(first)]);
            else {
                double denominator = 1;
                for (int j = 0; j < points; ++j)
                    if (j != i) {
                        denominator *= xi - when[size_t(first + j)];
                        w += x - when[size_t(first + 3 - i - j)];
                    }
                w /= denominator;
            }
            weight[i] = float(w);
        }
        for (size_t r = 0; r < nr; ++r) {
            std::fill(buf.get(), buf.get() + N, cfloat(0, 0));
            for (int c = 0; c < U; ++c) {
                const size_t p = problem(q, c);
                cfloat v(0, 0);
                for (int t = 0; t < nt; ++t) {
                    cfloat slope(0, 0);
                    for (int i = 0; i < points; ++i)
                        slope +=
                            weight[i] *
                            frame.H[problem(first + i, c) * block + r * nt + size_t(t)];
                    const cfloat term = slope * decisions[p * size_t(nt) + t];
                    if (finite(term))
                        v += term;
                }
                buf[size_t(g.bin(c))] = v;
            }
            m_impl->inverse.execute(buf.get());
            for (int n = 0; n < N; ++n)
                buf[size_t(n)] *= float(double(n) - centre);
            m_impl->forward.execute(buf.get());
            for (int c = 0; c < U; ++c)
                ici[problem(q, c) * nr + r] = buf[size_t(g.bin(c))] * scale;
        }
    }
    return ici;
}

void ici_canceller::cancel(front_end_frame& frame, const cfloat* decisions) const
{
    const std::vector<cfloat> ici = interference(frame, decisions);
    for (size_t i = 0; i < ici.size(); ++i)
        frame.y[i] -= ici[i];
}

} // namespace mimo_gpu
