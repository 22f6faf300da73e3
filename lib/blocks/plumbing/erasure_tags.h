/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_ERASURE_TAGS_H
#define INCLUDED_MIMO_GPU_ERASURE_TAGS_H

#include "rate_limited_warning.h"

#include <gnuradio/logger.h>
#include <gnuradio/tags.h>
#include <mimo_gpu/erasures.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace gr {
namespace mimo_gpu {

/// Key of the tag a block puts on the output item of each problem it erased
/// (value: the cause, "singular_channel" or "non_finite_input").
extern const pmt::pmt_t k_erasure_key;

/// How the blocks report the problems their core call erased (erasures.h): a
/// tag on every erased problem's item, an exact count, and warnings for the
/// first few (then at powers of two, with the count).
class erasure_log
{
public:
    explicit erasure_log(gr::logger_ptr logger)
        : m_logger(logger),
          m_items(logger, "erased items"),
          m_unlisted(logger, "calls with erasures not listed")
    {
    }

    /// Counts the report of a core call whose problem 0 is output item
    /// `first_output_item`, and returns the tags to add on output port 0.
    std::vector<gr::tag_t> record(const ::mimo_gpu::detection_report& report,
                                  uint64_t first_output_item);

    uint64_t erased() const { return m_erased.load(); }
    /// Logs the total (at stop()).
    void summarize(uint64_t problems_out) const;

private:
    gr::logger_ptr m_logger;
    rate_limited_warning m_items, m_unlisted;
    std::atomic<uint64_t> m_erased{ 0 };
};

} // namespace mimo_gpu
} // namespace gr

#endif
