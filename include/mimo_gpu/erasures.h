// What a detector (or the QR stage) does with a problem it cannot work on: a
// non-finite number in its input or a rank-deficient channel matrix. One rule
// for every family (docs/detectors.md, "Bad problems"):
//   erase: the problem's output is overwritten (LLRs 0, an erasure a decoder can
//          work with; QR items NaN, which the detector downstream erases), the
//          rest of the batch is detected normally, and the report counts it;
//   stop:  the same, then std::invalid_argument naming the first bad problem.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mimo_gpu {

enum class bad_problem_policy { erase, stop };

/// "erase" or "stop"; anything else throws std::invalid_argument.
bad_problem_policy parse_bad_problem_policy(const std::string& name);
const char* to_string(bad_problem_policy policy);

enum class erasure_cause {
    singular_channel, ///< H is rank-deficient (a column's residual below 1e-11 of the
                      ///< largest)
    non_finite_input  ///< NaN or Inf in H, y or the a-priori LLRs
};
const char* to_string(erasure_cause cause);

struct erased_problem {
    size_t index; ///< problem index within the call (p = c*S + s)
    erasure_cause cause;
    bool operator==(const erased_problem& o) const
    {
        return index == o.index && cause == o.cause;
    }
};

/// The erased problems a device summary holds one by one; a report with more
/// reads them from the per-problem flags instead (the count is always exact).
constexpr size_t k_listed_erasures = 64;

/// What one call did with its problems.
struct detection_report {
    size_t problems = 0; ///< problems in the call
    size_t erased = 0;   ///< problems erased, exact
    /// Every erased problem, in ascending order.
    std::vector<erased_problem> first_erased;

    /// Adds a later part of the same call whose problem 0 is this call's `offset`.
    void append(const detection_report& part, size_t offset);
    /// "problem 5 has a rank-deficient (singular) channel matrix (3 of 100 erased)".
    std::string describe(const char* unit = "problem") const;
};

} // namespace mimo_gpu
