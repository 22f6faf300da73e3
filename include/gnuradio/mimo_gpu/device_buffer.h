/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_DEVICE_BUFFER_H
#define INCLUDED_MIMO_GPU_DEVICE_BUFFER_H

#include <gnuradio/buffer_single_mapped.h>
#include <gnuradio/buffer_type.h>
#include <gnuradio/mimo_gpu/api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace gr {
namespace mimo_gpu {

/// A block that reads device memory where its upstream gives it (a GPU block
/// in device-buffer mode). device_buffer asks its readers: when every reader
/// says yes, the items stay on the device.
class MIMO_GPU_API device_stream_reader
{
public:
    virtual ~device_stream_reader() = default;
    virtual bool reads_device_memory() const = 0;
};

/// Why `writer`'s device-buffer outputs would stall, or "" when they will not:
/// in GNU Radio 3.10.5 a block with several single-mapped (custom) outputs
/// whose readers include a block with history stalls (GNU Radio's own
/// host_buffer crashes in that shape). A GPU block calls this on its first
/// work() and ends its stream with the message instead of hanging; with
/// ordinary (host) outputs the shape works.
MIMO_GPU_API std::string device_outputs_stall(const gr::block& writer);

/// Whether a copy or move of one of `writer`'s device-buffer outputs failed;
/// the writer then ends its stream.
MIMO_GPU_API bool device_outputs_failed(const gr::block& writer);

/// A GNU Radio stream buffer in GPU memory (GNU Radio 3.10's custom buffers: a
/// buffer_single_mapped subclass) on the output of a GPU block, so that the
/// items between GPU blocks stay on the device.
///
/// Only outputs name it: GNU Radio 3.10.5 replaces an upstream block's buffer
/// when a downstream *input* names a custom type, and on a fan-out it replaces
/// it again for the next reader, leaving the first reader on a buffer nobody
/// writes (a hang). So GPU blocks keep ordinary input types and say with
/// device_stream_reader that they read device memory; they check at run time
/// where each input pointer lies and stage pageable host memory themselves.
///
/// The writer writes device memory. When every reader reads device memory,
/// that is all; otherwise the buffer keeps a host copy (page-locked in place
/// when the system allows; made untouched at the start, so an all-GPU chain
/// never pays for it), copies each
/// work() call's new items across (post_work), and every reader gets the host
/// copy (GPU readers reach it over PCIe by unified addressing).
/// GPU blocks that write it finish their kernels before work() returns, so the
/// items are complete when GNU Radio hands them on.
///
/// Copies and moves of device memory finish before they return (the blocks'
/// kernels run on non-blocking streams that would not wait for them).
///
/// A GPU block of another module can name device_buffer::type on its outputs
/// and implement device_stream_reader to exchange device-resident items with
/// this module's blocks.
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
    /// GNU Radio's sizing (buffer_single_mapped), except where aligning the end
    /// with both the writer's and the readers' granularities would more than
    /// quadruple the buffer: then with the readers' alone (see the .cc).
    bool allocate_buffer(int nitems) override;
    bool do_allocate_buffer(size_t final_nitems, size_t sizeof_item) override;
    void* write_pointer() override;
    const void* _read_pointer(unsigned int read_index) override;
    bool input_blocked_callback(int items_required,
                                int items_avail,
                                unsigned read_index) override;
    bool output_blocked_callback(int output_multiple, bool force) override;

    /// Whether the readers read the device side (known once the flowgraph runs).
    bool read_on_device();
    /// A copy or move failed outside work() (it was logged): the writer ends its
    /// stream (device_outputs_failed), as an exception there would hang GNU Radio.
    bool failed() const;

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

    /// The readers are connected before the first item is written: decided then.
    void decide_readers_side();
    void decide_readers_side_once();
    char* reader_side() const { return m_readers_on_device ? m_device : m_host; }
    void copy(char* dst, const char* src, size_t bytes, bool dst_device, bool src_device);

    const bool m_simulated;
    size_t m_bytes = 0;
    char* m_host = nullptr;     // ordinary memory, page-locked for host readers
    bool m_host_locked = false; // lock_host_memory succeeded (undone at the end)
    char* m_device = nullptr;   // device memory
    char* m_scratch = nullptr;  // device memory for overlapping moves, made on the first
    gr::mem_func_t device_move();
    std::once_flag m_decided;
    bool m_readers_on_device = false;
    std::atomic<bool> m_failed{ false };
};

} // namespace mimo_gpu
} // namespace gr

#endif
