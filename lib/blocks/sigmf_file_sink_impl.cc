/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "plumbing/ofdm_parameters.h"

#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/sigmf_file_sink.h>
#include <mimo_gpu/sigmf.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <vector>

namespace gr {
namespace mimo_gpu {

class sigmf_file_sink_impl : public sigmf_file_sink
{
public:
    sigmf_file_sink_impl(const std::string& base, const ::mimo_gpu::sigmf_meta& meta)
        : gr::sync_block(
              "sigmf_file_sink",
              gr::io_signature::make(meta.channels, meta.channels, sizeof(gr_complex)),
              gr::io_signature::make(0, 0, 0)),
          d_writer(std::make_unique<::mimo_gpu::sigmf_writer>(base, meta))
    {
    }
    uint64_t samples_written() const override { return d_samples_written; }
    uint64_t values_clipped() const override { return d_values_clipped; }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star&) override
    {
        const int C = int(input_items.size());
        d_buffer.resize(size_t(noutput_items) * C);
        for (int c = 0; c < C; ++c) {
            auto in = static_cast<const gr_complex*>(input_items[c]);
            for (int k = 0; k < noutput_items; ++k)
                d_buffer[size_t(k) * C + c] = in[k];
        }
        d_writer->write(d_buffer.data(), size_t(noutput_items));
        d_samples_written = d_writer->samples_written();
        const uint64_t clipped = d_writer->values_clipped();
        if (clipped > 0 && d_values_clipped == 0)
            d_logger->warn("ci16 values beyond full scale are being clipped (first "
                           "within samples up to {}): raise "
                           "full_scale or lower the gain; the meta will record how many",
                           d_samples_written);
        d_values_clipped = clipped;
        return noutput_items;
    }
    bool stop() override
    {
        d_writer->close(); // the meta: the recording is complete
        return true;
    }

private:
    std::unique_ptr<::mimo_gpu::sigmf_writer> d_writer;
    std::vector<gr_complex> d_buffer;
    // Read by other threads while the flowgraph runs.
    std::atomic<uint64_t> d_samples_written{ 0 }, d_values_clipped{ 0 };
};

sigmf_file_sink::sptr sigmf_file_sink::make(const std::string& base,
                                            int channels,
                                            double sample_rate,
                                            double center_frequency,
                                            const std::string& format,
                                            double full_scale,
                                            const std::string& grid,
                                            int nt,
                                            const std::string& modulation,
                                            int slots,
                                            int data_symbols,
                                            const std::string& description,
                                            const std::vector<int>& pilot_positions)
{
    ::mimo_gpu::sigmf_meta m;
    m.channels = channels;
    m.sample_rate = sample_rate;
    m.center_frequency = center_frequency;
    if (format != "cf32" && format != "ci16")
        throw std::invalid_argument(
            "sigmf_file_sink: format must be \"cf32\" or \"ci16\", got \"" + format +
            "\"");
    m.format = format == "cf32" ? ::mimo_gpu::sample_format::cf32
                                : ::mimo_gpu::sample_format::ci16;
    m.ci16_full_scale = float(full_scale);
    m.description = description;
    m.hardware = "GNU Radio (gr-mimo_gpu sigmf_file_sink)";
    if (!grid.empty()) {
        m.has_grid = true;
        m.grid = ofdm_frame(grid, nt, modulation, slots, data_symbols, pilot_positions);
        m.grid.sample_rate = sample_rate;
    }
    return gnuradio::make_block_sptr<sigmf_file_sink_impl>(base, m);
}

} // namespace mimo_gpu
} // namespace gr
