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
    /// Uses the plan's own buffer: one thread at a time.
    void run(const cfloat* in, cfloat* out);
    /// In place on `buffer` (from make_buffer(): FFTW's alignment), unscaled
    /// (multiply by scale()); any number of threads at once.
    void execute(cfloat* buffer) const;
    float scale() const;

    /// An FFTW-aligned buffer of size() values for execute().
    struct buffer_deleter {
        void operator()(cfloat* p) const;
    };
    using buffer = std::unique_ptr<cfloat[], buffer_deleter>;
    buffer make_buffer() const;

private:
    struct impl;
    std::unique_ptr<impl> m_impl;
    int m_size;
};

} // namespace detail
} // namespace mimo_gpu
