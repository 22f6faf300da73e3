/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_DEVICE_BUFFER_H
#define INCLUDED_MIMO_GPU_DEVICE_BUFFER_H

#include <gnuradio/buffer_single_mapped.h>
#include <gnuradio/buffer_type.h>
#include <gnuradio/mimo_gpu/api.h>

#include <memory>

namespace gr {
namespace mimo_gpu {

/// A GNU Radio stream buffer in GPU memory (GNU Radio 3.10's custom buffers: a
/// buffer_single_mapped subclass named in a block's io_signature), so that the
/// items between two GPU blocks stay on the device.
///
/// Where an ordinary block meets it, the buffer also keeps a page-locked host
/// copy and moves the items across itself after each work() call (post_work),
/// as GNU Radio's transfer type for the edge says: written by an ordinary block
/// and read by GPU blocks, host -> device; written by a GPU block and read by
/// ordinary blocks, device -> host. (GNU Radio 3.10 refuses, when the flowgraph
/// starts, a buffer read by GPU and ordinary blocks at once.) When the single
/// mapped buffer moves unread items to its start, both copies are kept equal.
/// GPU blocks that write it finish their kernels before work() returns, so the
/// items are complete when GNU Radio hands them on.
///
/// A GPU block of another module can name device_buffer::type in its
/// io_signature to take or give device-resident items to this module's blocks.
class MIMO_GPU_API device_buffer : public gr::buffer_single_mapped
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

    /// Tests without a GPU: "device" memory is ordinary host memory, so the
    /// buffer's bookkeeping (wrap-around, history, moves) runs in CI. Affects
    /// buffers made afterwards.
    static void simulate_device_memory(bool on);

private:
    device_buffer(int nitems,
                  size_t sizeof_item,
                  uint64_t downstream_lcm_nitems,
                  uint32_t downstream_max_out_mult,
                  gr::block_sptr link,
                  gr::block_sptr buf_owner);

    bool written_on_device() const;
    bool read_on_device() const;
    char* side(bool device) const { return device ? m_device : m_host; }
    /// After a move on one side: the same [0, write index) on the other.
    void mirror(bool from_device);
    void copy(char* dst, const char* src, size_t bytes, bool dst_device, bool src_device);

    const bool m_simulated;
    char* m_host = nullptr;   // page-locked
    char* m_device = nullptr; // device memory
};

} // namespace mimo_gpu
} // namespace gr

#endif
