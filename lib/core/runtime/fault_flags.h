// Per-problem fault flags: how every engine (QR and the detector families, CPU
// and CUDA) reports bad problems, so that a bad problem can be erased while the
// rest of its batch is detected normally (include/mimo_gpu/erasures.h).
//
// A flag word per problem, OR-ed with one bit per fault kind. On the device
// the word also carries the generation of its collection cycle (above the fault
// bits), so the flags need no clearing between cycles: a word of an older
// generation is a clean one. The batches of one cycle have words of their own. The thread
// that puts the current generation into a word also appends the problem to a small
// summary (an exact count and the first k_listed_erasures reports), so a good batch costs
// one small copy back.
#pragma once

#include "host_device.h"
#include "problem_status.h"

#include <mimo_gpu/erasures.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace mimo_gpu {
namespace detail {

using fault_word = unsigned int;

MIMO_HD constexpr fault_word fault_bit(problem_fault f)
{
    return 1u << static_cast<unsigned>(f);
}

/// A singular H also makes the search's distances non-finite: "singular" is the cause to
/// name.
inline erasure_cause cause_of(fault_word w)
{
    return (w & fault_bit(problem_fault::singular)) ? erasure_cause::singular_channel
                                                    : erasure_cause::non_finite_input;
}

/// Device summary of a run of batches since the last collection.
struct fault_summary {
    unsigned long long count;
    unsigned long long
        listed[k_listed_erasures]; ///< (problem << 8) | problem_fault, arrival order
};

/// Device flag words: (generation << k_fault_bits) | fault bits.
constexpr unsigned k_fault_bits = 3;

/// What kernels report into, passed by value.
struct fault_sink {
    fault_word*
        flags; ///< one word per problem of this launch's batch (its own within the cycle)
    fault_summary* summary;
    unsigned long long
        offset; ///< index of flags[0] among the problems since the last collection
    fault_word generation; ///< this collection cycle's, >= 1
#if defined(__CUDACC__)
    __device__ void report(size_t p, problem_fault f) const
    {
        const fault_word bit = fault_bit(f), mine = (generation << k_fault_bits) | bit;
        fault_word old = flags[p];
        for (;;) {
            if ((old >> k_fault_bits) == generation) { // reported already in this batch
                atomicOr(flags + p, bit);
                return;
            }
            const fault_word seen = atomicCAS(flags + p, old, mine);
            if (seen == old)
                break; // the first report of p in this batch
            old = seen;
        }
        const unsigned long long slot = atomicAdd(&summary->count, 1ull);
        if (slot < k_listed_erasures)
            summary->listed[slot] =
                ((offset + p) << 8) | static_cast<unsigned long long>(f);
    }
    /// Whether problem p was reported in this batch (after a kernel boundary, or a
    /// barrier that orders the report before the read).
    __device__ bool flagged(size_t p) const
    {
        return (flags[p] >> k_fault_bits) == generation;
    }
#endif
};

/// CPU engines: one flag word per problem, written by the one thread that owns the
/// problem.
inline void report_fault(fault_word* flags, size_t p, problem_fault f)
{
    flags[p] |= fault_bit(f);
}

/// The report of a batch whose flags are all on the host.
inline detection_report report_from_flags(const fault_word* flags, size_t batch)
{
    detection_report r;
    r.problems = batch;
    for (size_t p = 0; p < batch; ++p)
        if (flags[p]) {
            ++r.erased;
            r.first_erased.push_back({ p, cause_of(flags[p]) });
        }
    return r;
}

/// Overwrites the output of every erased problem with `fill`. `flags` (may be
/// null) is needed only when the report does not list every erased problem.
inline void erase_problems(const detection_report& r,
                           const fault_word* flags,
                           float* out,
                           size_t per_problem,
                           float fill)
{
    if (r.erased == 0)
        return;
    if (r.first_erased.size() == r.erased || !flags) {
        for (const erased_problem& e : r.first_erased)
            if (e.index < r.problems) // indices of this batch only
                std::fill_n(out + e.index * per_problem, per_problem, fill);
        return;
    }
    for (size_t p = 0; p < r.problems; ++p)
        if (flags[p])
            std::fill_n(out + p * per_problem, per_problem, fill);
}

/// The CPU engines' flags: reset per batch, then report and erase.
class host_faults
{
public:
    fault_word* reset(size_t batch)
    {
        m_flags.assign(batch, 0u);
        return m_flags.data();
    }
    /// Report of the batch since reset(), its erased outputs overwritten with `fill`.
    detection_report finish(float* out, size_t per_problem, float fill = 0.0f)
    {
        detection_report r = report_from_flags(m_flags.data(), m_flags.size());
        erase_problems(r, m_flags.data(), out, per_problem, fill);
        return r;
    }

private:
    std::vector<fault_word> m_flags;
};

} // namespace detail
} // namespace mimo_gpu
