/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "erasure_tags.h"

namespace gr {
namespace mimo_gpu {

const pmt::pmt_t k_erasure_key = pmt::string_to_symbol("erasure");

std::vector<gr::tag_t> erasure_log::record(const ::mimo_gpu::detection_report& report,
                                           uint64_t first_output_item)
{
    std::vector<gr::tag_t> tags;
    if (report.erased == 0)
        return tags;
    const uint64_t before = m_erased.fetch_add(report.erased);
    for (const auto& e : report.first_erased) {
        gr::tag_t tag;
        tag.offset = first_output_item + e.index;
        tag.key = k_erasure_key;
        tag.value = pmt::string_to_symbol(::mimo_gpu::to_string(e.cause));
        tags.push_back(tag);
        if (before + tags.size() <= k_logged)
            m_logger->warn("item {} erased (LLRs 0): {}{}",
                           tag.offset,
                           ::mimo_gpu::to_string(e.cause),
                           before + tags.size() == k_logged
                               ? "; further erasures are tagged and counted, not logged"
                               : "");
    }
    if (report.erased > report.first_erased.size())
        m_logger->warn(
            "{} problems erased in one call of {} items; the first {} are tagged",
            report.erased,
            report.problems,
            report.first_erased.size());
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
