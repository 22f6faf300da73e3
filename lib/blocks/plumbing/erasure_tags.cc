/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "erasure_tags.h"

#include <string>

namespace gr {
namespace mimo_gpu {

const pmt::pmt_t k_erasure_key = pmt::string_to_symbol("erasure");

std::vector<gr::tag_t> erasure_log::record(const ::mimo_gpu::detection_report& report,
                                           uint64_t first_output_item)
{
    std::vector<gr::tag_t> tags;
    if (report.erased == 0)
        return tags;
    m_erased.fetch_add(report.erased);
    tags.reserve(report.first_erased.size());
    for (const auto& e : report.first_erased) {
        gr::tag_t tag;
        tag.offset = first_output_item + e.index;
        tag.key = k_erasure_key;
        tag.value = pmt::string_to_symbol(::mimo_gpu::to_string(e.cause));
        tags.push_back(tag);
        m_items.warn_with([&] {
            return "item " + std::to_string(tag.offset) +
                   " erased (LLRs 0): " + ::mimo_gpu::to_string(e.cause);
        });
    }
    // Reports list every erased problem; a shorter list would be a core bug.
    if (report.erased > report.first_erased.size())
        m_unlisted.warn(
            std::to_string(report.erased) + " problems erased in one call of " +
            std::to_string(report.problems) + " items; " +
            std::to_string(report.first_erased.size()) + " of them are tagged");
    return tags;
}

void erasure_log::summarize(uint64_t problems_out) const
{
    if (erased() > 0)
        m_logger->warn("{} of {} problems were erased (bad input: non-finite values or a "
                       "rank-deficient H)",
                       erased(),
                       problems_out);
}

} // namespace mimo_gpu
} // namespace gr
