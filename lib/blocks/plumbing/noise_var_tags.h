/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// "noise_var" stream tags: a detector splits its batch at them so that each
// run of items is detected with the N0 in force for it.
#ifndef INCLUDED_MIMO_GPU_NOISE_VAR_TAGS_H
#define INCLUDED_MIMO_GPU_NOISE_VAR_TAGS_H

#include "rate_limited_warning.h"

#include <gnuradio/block.h>

#include <vector>

namespace gr {
namespace mimo_gpu {

/// Key of the stream tag that carries N0 (pmt double) from its item on.
extern const pmt::pmt_t k_noise_var_key;

/// A run of items [begin, end) of one work() call, detected with one N0.
struct noise_var_segment {
    int begin;
    int end;
    float noise_var;
};

/// Splits [0, nitems) at the "noise_var" tags among `tags`, the tags of the
/// window whose first item has absolute offset `first_item`. `noise_var` holds the value
/// in force before the first item and is updated to the value in force after the last
/// one. A tag whose value is not a finite number > 0 is ignored and counted in
/// `ignored` (which logs the first few and then only at powers of two).
std::vector<noise_var_segment> split_at_noise_var_tags(std::vector<gr::tag_t> tags,
                                                       uint64_t first_item,
                                                       int nitems,
                                                       float& noise_var,
                                                       rate_limited_warning& ignored);

} // namespace mimo_gpu
} // namespace gr

#endif
