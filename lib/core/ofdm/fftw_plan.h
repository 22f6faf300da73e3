// A unitary FFT of one size on the CPU through FFTW (single precision), the
// library GNU Radio's own fft blocks wrap; the core does not link GNU Radio,
// so it calls FFTW directly. Plans are made once (FFTW_ESTIMATE: no timing runs
// at start-up) under a process-wide lock, as FFTW's planner is not thread-safe.
#pragma once

#include <mimo_gpu/types.h>

#include <memory>

namespace mimo_gpu {
namespace detail {

class fftw_plan_1d
{
public:
    enum class direction { forward, inverse };
    fftw_plan_1d(int size, direction dir);
    ~fftw_plan_1d();
    fftw_plan_1d(const fftw_plan_1d&) = delete;
    fftw_plan_1d& operator=(const fftw_plan_1d&) = delete;

    int size() const { return m_size; }
    /// out = F in / sqrt(N) (forward: e^{-j...}); in and out may be the same.
    void run(const cfloat* in, cfloat* out);

private:
    struct impl;
    std::unique_ptr<impl> m_impl;
    int m_size;
};

} // namespace detail
} // namespace mimo_gpu
