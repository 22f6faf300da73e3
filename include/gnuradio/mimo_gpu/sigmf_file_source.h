/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_SIGMF_FILE_SOURCE_H
#define INCLUDED_MIMO_GPU_SIGMF_FILE_SOURCE_H

#include <gnuradio/mimo_gpu/api.h>
#include <gnuradio/sync_block.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Plays a multi-antenna SigMF recording: one complex output per channel.
 * \ingroup mimo_gpu
 *
 * Reads BASE.sigmf-data (cf32 or ci16, interleaved or per channel) as its
 * BASE.sigmf-meta describes it (docs/front_end.md, "Recordings"). The number
 * of outputs must equal the recording's channel count (`channels` parameter):
 * otherwise make() throws std::invalid_argument saying both. A missing,
 * malformed or truncated recording is a std::runtime_error at make().
 * The stream ends at the end of the file (or loops with `repeat`).
 */
class MIMO_GPU_API sigmf_file_source : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<sigmf_file_source> sptr;
    static sptr make(const std::string& path, int channels, bool repeat = false);
    virtual double sample_rate() const = 0;
    virtual uint64_t samples_per_channel() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
