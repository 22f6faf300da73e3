/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "batch_runner.h"
#include "block_parameters.h"
#include "ml_detector_impl.h"
#include "noise_var_tags.h"

#include <gnuradio/io_signature.h>

namespace gr {
namespace mimo_gpu {

ml_detector::sptr ml_detector::make(int nr,
                                    int nt,
                                    const std::string& modulation,
                                    double noise_var,
                                    const std::string& backend,
                                    int max_batch)
{
    return gnuradio::make_block_sptr<ml_detector_impl>(
        nr, nt, modulation, noise_var, backend, max_batch);
}

ml_detector_impl::ml_detector_impl(int nr,
                                   int nt,
                                   const std::string& modulation,
                                   double noise_var,
                                   const std::string& backend,
                                   int max_batch)
    : gr::sync_block(
          "ml_detector", channel_signature(nr, nt), llr_signature(nr, nt, modulation)),
      d_detector(checked_shape(nr, nt),
                 ::mimo_gpu::modulation_from_string(modulation),
                 ::mimo_gpu::backend_from_string(backend)),
      d_batches(checked_max_batch(max_batch), d_logger),
      d_noise_var(checked_noise_var(noise_var))
{
    request_batch_sized_output_buffers(*this, max_batch);
    d_logger->info("{}x{} {} ML detector on backend {}",
                   nr,
                   nt,
                   ::mimo_gpu::to_string(d_detector.mod()),
                   active_backend());
}

void ml_detector_impl::set_noise_var(double noise_var)
{
    const float checked = checked_noise_var(noise_var);
    gr::thread::scoped_lock lock(d_mutex);
    d_noise_var = checked;
}

double ml_detector_impl::noise_var() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_noise_var;
}

std::string ml_detector_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_detector.active_backend());
}

int ml_detector_impl::work(int noutput_items,
                           gr_vector_const_void_star& input_items,
                           gr_vector_void_star& output_items)
{
    const auto H = static_cast<const gr_complex*>(input_items[0]);
    const auto y = static_cast<const gr_complex*>(input_items[1]);
    auto llr = static_cast<float*>(output_items[0]);
    const auto shape = d_detector.shape();
    const size_t llrs_per_item = d_detector.llrs_per_problem();

    if (!d_batches.start(nitems_read(0)))
        return WORK_DONE;
    gr::thread::scoped_lock lock(d_mutex);
    // The channel tags H and y alike; y (input 1) is the documented tag input.
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 1, 0, noutput_items, k_noise_var_key);
    const auto segments = split_at_noise_var_tags(
        tags, nitems_read(1), noutput_items, d_noise_var, d_logger);
    for (const auto& segment : segments) {
        d_batches.run(segment.begin, segment.end, [&](int first, int count) {
            d_detector.detect(H + size_t(first) * shape.nr * shape.nt,
                              y + size_t(first) * shape.nr,
                              count,
                              segment.noise_var,
                              llr + size_t(first) * llrs_per_item);
        });
    }
    return d_batches.finish(noutput_items);
}

} // namespace mimo_gpu
} // namespace gr
