/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_SIGMF_FILE_SINK_H
#define INCLUDED_MIMO_GPU_SIGMF_FILE_SINK_H

#include <gnuradio/mimo_gpu/api.h>
#include <gnuradio/sync_block.h>

#include <string>
#include <vector>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Records `channels` complex streams as one SigMF recording.
 * \ingroup mimo_gpu
 *
 * Samples go to BASE.sigmf-data (channels interleaved, cf32 or ci16 with
 * `full_scale` the float value of int16 32767); BASE.sigmf-meta (sample rate,
 * centre frequency, channels, and, when `grid` is not empty, the module's
 * frame parameters so mimo_gpu_ofdm_file and sigmf_file_source -> ofdm_rx can
 * decode it) is written when the flowgraph stops. In ci16, values beyond
 * full scale are clipped: the block warns the first time, values_clipped()
 * counts them and the meta records the count ("mimo_gpu:ci16_values_clipped").
 * The frame's pilot layout (pilot_positions, as ofdm_tx) goes into the meta
 * too ("mimo_gpu:pilot_positions").
 */
class MIMO_GPU_API sigmf_file_sink : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<sigmf_file_sink> sptr;
    static sptr make(const std::string& base,
                     int channels,
                     double sample_rate,
                     double center_frequency = 0,
                     const std::string& format = "cf32",
                     double full_scale = 1.0,
                     const std::string& grid = "",
                     int nt = 2,
                     const std::string& modulation = "16qam",
                     int slots = 2,
                     int data_symbols = 6,
                     const std::string& description = "",
                     const std::vector<int>& pilot_positions = std::vector<int>{ 0 });
    virtual uint64_t samples_written() const = 0;
    //! ci16: int16 values clipped so far (beyond full scale or not finite).
    virtual uint64_t values_clipped() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
