// How a batch reports its first bad problem (non-finite input, singular H),
// the same way on the CPU and on the device: the smallest bad problem index,
// or k_no_bad_problem.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mimo_gpu {
namespace detail {

/// Lower codes win when one problem is reported twice: a singular H also makes
/// the search's distances non-finite, and "singular" is the cause to name.
enum class problem_fault : unsigned int { none = 0, singular = 1, non_finite = 2 };

/// One word per batch: (problem index << 8) | fault, so the minimum over all
/// reports (atomicMin on the device, std::min on the CPU) is the first bad problem.
using problem_status = unsigned long long;
constexpr problem_status k_status_ok = ~0ull;

inline constexpr problem_status make_status(unsigned long long index, problem_fault fault)
{
    return (index << 8) | static_cast<unsigned long long>(fault);
}

/// Throws std::invalid_argument describing the bad problem of `status`.
[[noreturn]] inline void
throw_bad_problem(const char* who, problem_status status, const char* unit)
{
    const unsigned long long index = status >> 8;
    const auto fault = static_cast<problem_fault>(status & 0xff);
    const char* what = fault == problem_fault::singular
                           ? "has a rank-deficient (singular) channel matrix"
                           : "contains a non-finite value (NaN or Inf) in its input";
    throw std::invalid_argument(std::string("mimo_gpu::") + who + ": " + unit + " " +
                                std::to_string(index) + " of the batch " + what +
                                "; the batch's output is not valid");
}

} // namespace detail
} // namespace mimo_gpu

namespace mimo_gpu {
namespace detail {
/// `unit` names what the batch is made of ("problem", "code block").
inline void
throw_if_bad(const char* who, problem_status status, const char* unit = "problem")
{
    if (status != k_status_ok)
        throw_bad_problem(who, status, unit);
}
} // namespace detail
} // namespace mimo_gpu

#include <atomic>

namespace mimo_gpu {
namespace detail {

/// CPU-side gathering of problem_status from several threads: keeps the minimum.
class status_collector
{
public:
    void report(problem_status s)
    {
        problem_status cur = m_status.load(std::memory_order_relaxed);
        while (s < cur &&
               !m_status.compare_exchange_weak(cur, s, std::memory_order_relaxed)) {
        }
    }
    problem_status get() const { return m_status.load(std::memory_order_relaxed); }

private:
    std::atomic<problem_status> m_status{ k_status_ok };
};

} // namespace detail
} // namespace mimo_gpu
