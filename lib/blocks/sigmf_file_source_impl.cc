/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "plumbing/ofdm_parameters.h"

#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/sigmf_file_source.h>
#include <mimo_gpu/sigmf.h>

#include <memory>
#include <stdexcept>
#include <vector>

namespace gr {
namespace mimo_gpu {

class sigmf_file_source_impl : public sigmf_file_source
{
public:
    sigmf_file_source_impl(std::unique_ptr<::mimo_gpu::sigmf_reader> reader,
                           const std::string& path,
                           bool repeat)
        : gr::sync_block("sigmf_file_source",
                         gr::io_signature::make(0, 0, 0),
                         gr::io_signature::make(reader->meta().channels,
                                                reader->meta().channels,
                                                sizeof(gr_complex))),
          d_reader(std::move(reader)),
          d_path(path),
          d_repeat(repeat)
    {
        if (const uint64_t clipped = d_reader->meta().ci16_values_clipped)
            d_logger->warn(
                "{}: the recorder clipped {} int16 values (mimo_gpu:ci16_values_clipped)",
                path,
                clipped);
    }
    double sample_rate() const override { return d_reader->meta().sample_rate; }
    uint64_t samples_per_channel() const override
    {
        return d_reader->samples_per_channel();
    }

    int work(int noutput_items,
             gr_vector_const_void_star&,
             gr_vector_void_star& output_items) override
    {
        const int C = int(output_items.size());
        d_buffer.resize(size_t(noutput_items) * C);
        size_t got = d_reader->read(d_buffer.data(), size_t(noutput_items));
        if (got == 0 && d_repeat && d_reader->samples_per_channel() > 0) {
            d_reader = std::make_unique<::mimo_gpu::sigmf_reader>(d_path);
            d_at_file_start = true;
            got = d_reader->read(d_buffer.data(), size_t(noutput_items));
        }
        if (got == 0)
            return WORK_DONE;
        if (d_at_file_start) // the frame the samples carry, for ofdm_rx to check
            tag_frame(C);
        d_at_file_start = false;
        for (int c = 0; c < C; ++c) {
            auto out = static_cast<gr_complex*>(output_items[c]);
            for (size_t k = 0; k < got; ++k)
                out[k] = d_buffer[k * C + c];
        }
        return int(got);
    }

private:
    void tag_frame(int channels)
    {
        const auto& meta = d_reader->meta();
        if (!meta.has_grid)
            return;
        const pmt::pmt_t value = grid_tag_value(meta.grid);
        for (int c = 0; c < channels; ++c)
            add_item_tag(c, nitems_written(c), k_grid_tag_key, value);
    }

    std::unique_ptr<::mimo_gpu::sigmf_reader> d_reader;
    bool d_at_file_start = true;
    std::string d_path;
    bool d_repeat;
    std::vector<gr_complex> d_buffer;
};

sigmf_file_source::sptr
sigmf_file_source::make(const std::string& path, int channels, bool repeat)
{
    auto reader = std::make_unique<::mimo_gpu::sigmf_reader>(path);
    reader->require_channels(channels);
    return gnuradio::make_block_sptr<sigmf_file_source_impl>(
        std::move(reader), path, repeat);
}

} // namespace mimo_gpu
} // namespace gr
