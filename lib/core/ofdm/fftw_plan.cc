#include "fftw_plan.h"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace mimo_gpu {
namespace detail {

namespace {
std::mutex& planner_mutex()
{
    static std::mutex m;
    return m;
}
} // namespace

struct fftw_plan_1d::impl {
    fftwf_plan plan = nullptr;
    fftwf_complex* buffer = nullptr; // planned in place on this aligned buffer
    float scale = 1;
};

fftw_plan_1d::fftw_plan_1d(int size, direction dir)
    : m_impl(std::make_unique<impl>()), m_size(size)
{
    if (size < 1)
        throw std::invalid_argument("mimo_gpu: fft size must be >= 1, got " +
                                    std::to_string(size));
    const std::lock_guard<std::mutex> lock(planner_mutex());
    m_impl->buffer = fftwf_alloc_complex(size_t(size));
    if (!m_impl->buffer)
        throw std::bad_alloc();
    m_impl->plan =
        fftwf_plan_dft_1d(size,
                          m_impl->buffer,
                          m_impl->buffer,
                          dir == direction::forward ? FFTW_FORWARD : FFTW_BACKWARD,
                          FFTW_ESTIMATE);
    if (!m_impl->plan) {
        fftwf_free(m_impl->buffer);
        throw std::runtime_error("mimo_gpu: FFTW could not plan an FFT of size " +
                                 std::to_string(size));
    }
    m_impl->scale = float(1.0 / std::sqrt(double(size)));
}

fftw_plan_1d::~fftw_plan_1d()
{
    const std::lock_guard<std::mutex> lock(planner_mutex());
    fftwf_destroy_plan(m_impl->plan);
    fftwf_free(m_impl->buffer);
}

void fftw_plan_1d::run(const cfloat* in, cfloat* out)
{
    std::memcpy(m_impl->buffer, in, sizeof(cfloat) * size_t(m_size));
    fftwf_execute(m_impl->plan);
    const auto* b = reinterpret_cast<const cfloat*>(m_impl->buffer);
    const float s = m_impl->scale;
    for (int k = 0; k < m_size; ++k)
        out[k] = b[k] * s;
}

void fftw_plan_1d::execute(cfloat* buffer) const
{
    auto* b = reinterpret_cast<fftwf_complex*>(buffer);
    fftwf_execute_dft(m_impl->plan, b, b); // new-array execution: thread-safe
}

float fftw_plan_1d::scale() const { return m_impl->scale; }

void fftw_plan_1d::buffer_deleter::operator()(cfloat* p) const { fftwf_free(p); }

fftw_plan_1d::buffer fftw_plan_1d::make_buffer() const
{
    auto* p = reinterpret_cast<cfloat*>(fftwf_alloc_complex(size_t(m_size)));
    if (!p)
        throw std::bad_alloc();
    return buffer(p);
}

} // namespace detail
} // namespace mimo_gpu
