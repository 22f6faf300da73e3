/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "plumbing/block_parameters.h"
#include "qr_decomposition_impl.h"

#include <gnuradio/io_signature.h>

#include <stdexcept>

namespace gr {
namespace mimo_gpu {

namespace {
gr::io_signature::sptr items_signature(int nr, int nt, int orders)
{
    checked_shape(nr, nt);
    if (orders < 1 || orders > nt)
        throw std::invalid_argument("orders must be in 1..nt (" + std::to_string(nt) +
                                    "), got " + std::to_string(orders));
    ::mimo_gpu::qr_layout layout;
    layout.nt = nt;
    layout.orders = orders;
    return gr::io_signature::make(1, 1, layout.floats_per_item() * sizeof(float));
}
} // namespace

qr_decomposition::sptr qr_decomposition::make(int nr,
                                              int nt,
                                              int orders,
                                              const std::string& backend,
                                              int max_batch,
                                              const std::string& policy)
{
    return gnuradio::make_block_sptr<qr_decomposition_impl>(
        nr, nt, orders, backend, max_batch, policy);
}

qr_decomposition_impl::qr_decomposition_impl(int nr,
                                             int nt,
                                             int orders,
                                             const std::string& backend,
                                             int max_batch,
                                             const std::string& policy)
    : gr::sync_block(
          "qr_decomposition", channel_signature(nr, nt), items_signature(nr, nt, orders)),
      d_qr(checked_shape(nr, nt), orders, ::mimo_gpu::backend_from_string(backend)),
      d_batches(checked_max_batch(max_batch), d_logger),
      d_erasures(d_logger)
{
    d_qr.set_bad_problem_policy(::mimo_gpu::parse_bad_problem_policy(policy));
    request_batch_sized_output_buffers(*this, max_batch);
    d_logger->info("{}x{} QR for {} detection order(s) on backend {}",
                   nr,
                   nt,
                   orders,
                   active_backend());
}

std::string qr_decomposition_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_qr.active_backend());
}

int qr_decomposition_impl::work(int noutput_items,
                                gr_vector_const_void_star& input_items,
                                gr_vector_void_star& output_items)
{
    const auto H = static_cast<const gr_complex*>(input_items[0]);
    const auto y = static_cast<const gr_complex*>(input_items[1]);
    auto items = static_cast<float*>(output_items[0]);
    const auto shape = d_qr.shape();
    const size_t floats_per_item = d_qr.layout().floats_per_item();

    if (!d_batches.start(nitems_read(0)))
        return WORK_DONE;
    d_batches.run(0, noutput_items, [&](int first, int count) {
        const auto report = d_qr.run(H + size_t(first) * shape.nr * shape.nt,
                                     y + size_t(first) * shape.nr,
                                     count,
                                     items + size_t(first) * floats_per_item);
        for (const auto& tag : d_erasures.record(report, nitems_written(0) + first))
            add_item_tag(0, tag);
    });
    return d_batches.finish(noutput_items);
}

} // namespace mimo_gpu
} // namespace gr
