/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "noise_var_tags.h"

#include <mimo_gpu/detector.h>

#include <stdexcept>
#include <string>

#include <algorithm>
#include <cmath>

namespace gr {
namespace mimo_gpu {

const pmt::pmt_t k_noise_var_key = pmt::string_to_symbol("noise_var");

std::vector<noise_var_segment> split_at_noise_var_tags(std::vector<gr::tag_t> tags,
                                                       uint64_t first_item,
                                                       int nitems,
                                                       float& noise_var,
                                                       rate_limited_warning& ignored)
{
    std::stable_sort(tags.begin(), tags.end(), gr::tag_t::offset_compare);

    std::vector<noise_var_segment> segments;
    int begin = 0;
    for (const auto& tag : tags) {
        if (!pmt::eq(tag.key, k_noise_var_key))
            continue;
        double value = NAN;
        try {
            if (pmt::is_real(tag.value) || pmt::is_integer(tag.value))
                value = pmt::to_double(tag.value);
            ::mimo_gpu::check_noise_variance(value); // as float, where it is used
        } catch (const std::exception&) { // not a real number, or none > 0 in float
            ignored.warn_with([&] {
                return "ignoring noise_var tag at item " + std::to_string(tag.offset) +
                       ": " + pmt::write_string(tag.value) +
                       " is not a finite number > 0 in single precision";
            });
            continue;
        }
        const int at = static_cast<int>(tag.offset - first_item);
        if (at > begin)
            segments.push_back({ begin, at, noise_var });
        begin = at;
        noise_var = static_cast<float>(value);
    }
    if (nitems > begin)
        segments.push_back({ begin, nitems, noise_var });
    return segments;
}

} // namespace mimo_gpu
} // namespace gr
