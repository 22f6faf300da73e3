/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_DEVICE_OUTPUT_GUARD_H
#define INCLUDED_MIMO_GPU_DEVICE_OUTPUT_GUARD_H

#include <gnuradio/block.h>
#include <gnuradio/logger.h>
#include <gnuradio/mimo_gpu/device_buffer.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/// What a block writing device buffers checks at the top of work(): on the first
/// call, the shape that would stall GNU Radio 3.10.5 (device_outputs_stall), and
/// on every call, a failed copy to an ordinary reader (device_outputs_failed).
class device_output_guard
{
public:
    /// Whether work() must end the stream (the reason is logged).
    bool must_stop(const gr::block& writer, gr::logger& logger)
    {
        if (!m_checked) {
            m_checked = true;
            const std::string stall = device_outputs_stall(writer);
            if (!stall.empty()) {
                logger.error("{}; ending the stream", stall); // rather than hang
                return true;
            }
        }
        return device_outputs_failed(writer); // the failed copy was logged
    }

private:
    bool m_checked = false;
};

} // namespace mimo_gpu
} // namespace gr

#endif
