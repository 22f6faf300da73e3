/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_DEVICE_BUFFER_H
#define INCLUDED_MIMO_GPU_DEVICE_BUFFER_H

#include <gnuradio/buffer_single_mapped.h>
#include <gnuradio/buffer_type.h>

#include <memory>

namespace gr {
namespace mimo_gpu {

/// A GNU Radio stream buffer in GPU memory (GNU Radio 3.10's custom buffers: a
/// buffer_single_mapped subclass named in a block's io_signature), so that the
/// items between two GPU blocks stay on the device.
///
/// Where an ordinary block meets it, the buffer keeps a page-locked host copy
/// and moves the items across itself after each work() call (post_work):
///  - written by an ordinary block, read by GPU blocks: host -> device;
///  - written by a GPU block, read by ordinary blocks: device -> host.
/// When GPU and ordinary blocks read the same buffer, every reader gets the
/// host copy (GPU blocks reach page-locked memory through unified addressing,
/// over PCIe: correct, slower; a warning says so).
/// GPU blocks that write it finish their kernels before work() returns, so
/// the items are complete when GNU Radio hands them on.
class device_buffer : public gr::buffer_single_mapped
{
public:
    static gr::buffer_type type;

    static gr::buffer_sptr make_buffer(int nitems,
                                       size_t sizeof_item,
                                       uint64_t downstream_lcm_nitems,
                                       uint32_t downstream_max_out_mult,
                                       gr::block_sptr link = gr::block_sptr(),
                                       gr::block_sptr buf_owner = gr::block_sptr());
    ~device_buffer() override;

    void post_work(int nitems) override;
    bool do_allocate_buffer(size_t final_nitems, size_t sizeof_item) override;
    void* write_pointer() override;
    const void* _read_pointer(unsigned int read_index) override;
    bool input_blocked_callback(int items_required,
                                int items_avail,
                                unsigned read_index) override;
    bool output_blocked_callback(int output_multiple, bool force) override;

private:
    device_buffer(int nitems,
                  size_t sizeof_item,
                  uint64_t downstream_lcm_nitems,
                  uint32_t downstream_max_out_mult,
                  gr::block_sptr link,
                  gr::block_sptr buf_owner);

    /// Where the writer writes and the readers read, decided once the flowgraph
    /// is connected (the first write_pointer() call, before any item exists).
    void decide_sides();
    char* writer_side() const { return m_writer_on_device ? m_device : m_host; }
    char* reader_side() const { return m_readers_on_device ? m_device : m_host; }

    char* m_host = nullptr;   // page-locked
    char* m_device = nullptr; // device memory
    bool m_sides_decided = false;
    bool m_writer_on_device = false;
    bool m_readers_on_device = false;
};

/// Whether port `port` of `block` (an input when `input`) names device_buffer.
bool uses_device_buffer(const gr::block& block, int port, bool input);

} // namespace mimo_gpu
} // namespace gr

#endif
