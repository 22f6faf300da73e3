// The CPU shell every family's CPU engine shares: a flag word per problem,
// the report, and the bad problems' LLRs zeroed. A family writes
// detect_problems() (usually a parallel_for over its per-problem routine).
#pragma once

#include "../../runtime/fault_flags.h"
#include "../pam_table.h"
#include "detector_engine.h"

namespace mimo_gpu {
namespace detail {

class cpu_detector_engine : public detector_engine
{
public:
    backend kind() const final { return backend::cpu; }

    detection_report detect(const detector_input& in, float clip, float* llr) final
    {
        return checked_call(in.problems(), llr, [&](fault_word* flags) {
            detect_problems(in, clip, llr, flags);
        });
    }

protected:
    /// nt * Q LLRs per problem; m_pam: the constellation's tables.
    cpu_detector_engine(const mimo_shape& shape, modulation mod)
        : m_pam(make_pam_table(constellation(mod))),
          m_llrs(size_t(shape.nt) * m_pam.bits_per_symbol())
    {
    }

    /// Writes the LLRs of in.problems() problems; report_fault(flags, p, ...)
    /// for a bad problem p (its LLRs are zeroed afterwards).
    virtual void detect_problems(const detector_input& in,
                                 float clip,
                                 float* llr,
                                 fault_word* flags) = 0;

    /// The same bookkeeping around another call (a family's extension):
    /// body(flags) for `problems` problems; `llr` (may be null) is zeroed where flagged.
    template <typename Body>
    detection_report checked_call(size_t problems, float* llr, Body body)
    {
        fault_word* flags = m_faults.reset(problems);
        body(flags);
        return m_faults.finish(llr, llr ? m_llrs : 0);
    }

    size_t llrs_per_problem() const { return m_llrs; }

    const pam_table m_pam;

private:
    size_t m_llrs;
    host_faults m_faults;
};

} // namespace detail
} // namespace mimo_gpu
