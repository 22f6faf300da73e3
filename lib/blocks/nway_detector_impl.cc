/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "nway_detector_impl.h"
#include "plumbing/batch_runner.h"
#include "plumbing/block_parameters.h"
#include "plumbing/noise_var_tags.h"

#include <gnuradio/io_signature.h>

namespace gr {
namespace mimo_gpu {

namespace {
::mimo_gpu::nway_config
make_config(int nr, int nt, const std::string& modulation, int passes, double llr_clip)
{
    ::mimo_gpu::nway_config config;
    config.shape = checked_shape(nr, nt);
    config.mod = ::mimo_gpu::modulation_from_string(modulation);
    config.passes = passes;
    config.llr_clip = static_cast<float>(llr_clip);
    config.validate();
    return config;
}

gr::io_signature::sptr items_signature(const ::mimo_gpu::nway_config& config)
{
    ::mimo_gpu::qr_layout layout;
    layout.nt = config.shape.nt;
    layout.orders = config.passes;
    return gr::io_signature::make(1, 1, layout.floats_per_item() * sizeof(float));
}
} // namespace

nway_detector::sptr nway_detector::make(int nr,
                                        int nt,
                                        const std::string& modulation,
                                        int passes,
                                        double noise_var,
                                        double llr_clip,
                                        const std::string& backend,
                                        int max_batch,
                                        const std::string& policy)
{
    return gnuradio::make_block_sptr<nway_detector_impl>(
        nr, nt, modulation, passes, noise_var, llr_clip, backend, max_batch, policy);
}

nway_detector_impl::nway_detector_impl(int nr,
                                       int nt,
                                       const std::string& modulation,
                                       int passes,
                                       double noise_var,
                                       double llr_clip,
                                       const std::string& backend,
                                       int max_batch,
                                       const std::string& policy)
    : gr::sync_block("nway_detector",
                     items_signature(make_config(nr, nt, modulation, passes, llr_clip)),
                     llr_signature(nr, nt, modulation)),
      d_detector(make_config(nr, nt, modulation, passes, llr_clip),
                 ::mimo_gpu::backend_from_string(backend)),
      d_batches(checked_max_batch(max_batch), d_logger),
      d_noise_var(checked_noise_var(noise_var)),
      d_erasures(d_logger),
      d_ignored_noise_var(d_logger, "ignored noise_var tags")
{
    d_detector.set_bad_problem_policy(::mimo_gpu::parse_bad_problem_policy(policy));
    request_batch_sized_output_buffers(*this, max_batch);
    d_logger->info("{}x{} {} detector, {} pass(es), on backend {}",
                   nr,
                   nt,
                   ::mimo_gpu::to_string(d_detector.config().mod),
                   passes,
                   active_backend());
}

void nway_detector_impl::set_noise_var(double noise_var)
{
    const float checked = checked_noise_var(noise_var);
    gr::thread::scoped_lock lock(d_mutex);
    d_noise_var = checked;
}

double nway_detector_impl::noise_var() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_noise_var;
}

void nway_detector_impl::set_llr_clip(double llr_clip)
{
    gr::thread::scoped_lock lock(d_mutex);
    d_detector.set_llr_clip(static_cast<float>(llr_clip)); // throws on a bad value
}

double nway_detector_impl::llr_clip() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_detector.config().llr_clip;
}

std::string nway_detector_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_detector.active_backend());
}

int nway_detector_impl::work(int noutput_items,
                             gr_vector_const_void_star& input_items,
                             gr_vector_void_star& output_items)
{
    const auto items = static_cast<const float*>(input_items[0]);
    auto llr = static_cast<float*>(output_items[0]);
    const size_t floats_per_item = d_detector.input_layout().floats_per_item();
    const size_t llrs_per_item = d_detector.llrs_per_problem();

    if (!d_batches.start(nitems_read(0)))
        return WORK_DONE;
    gr::thread::scoped_lock lock(d_mutex);
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 0, 0, noutput_items, k_noise_var_key);
    const auto segments = split_at_noise_var_tags(
        tags, nitems_read(0), noutput_items, d_noise_var, d_ignored_noise_var);
    for (const auto& segment : segments) {
        d_batches.run(segment.begin, segment.end, [&](int first, int count) {
            const auto report = d_detector.detect_qr(items + first * floats_per_item,
                                                     count,
                                                     segment.noise_var,
                                                     llr + first * llrs_per_item);
            for (const auto& tag : d_erasures.record(report, nitems_written(0) + first))
                add_item_tag(0, tag);
        });
    }
    return d_batches.finish(noutput_items);
}

} // namespace mimo_gpu
} // namespace gr
