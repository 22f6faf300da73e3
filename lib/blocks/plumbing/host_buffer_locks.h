/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_HOST_BUFFER_LOCKS_H
#define INCLUDED_MIMO_GPU_HOST_BUFFER_LOCKS_H

#include <gnuradio/block.h>

#include <string>
#include <vector>

namespace gr {
namespace mimo_gpu {

/// Page-locks a GPU block's ordinary (host) stream buffers where GNU Radio made
/// them, so that its copies to and from the GPU run at full PCIe speed with no
/// staging copy; device buffers are left as they are. Call once the flowgraph
/// runs (the buffers exist then) and unlock in stop(), before GNU Radio frees
/// them. A buffer between two GPU blocks is locked by both: the locks are
/// counted process-wide, and the last holder's unlock unlocks it (GNU Radio
/// stops each block when it finishes, the writer maybe while its reader still
/// copies from the buffer).
class host_buffer_locks
{
public:
    host_buffer_locks() = default;
    host_buffer_locks(const host_buffer_locks&) = delete;
    host_buffer_locks& operator=(const host_buffer_locks&) = delete;
    ~host_buffer_locks() { unlock(); }

    /// Locks the block's input and/or output buffers; "" or why they could not
    /// be (then none is locked: copies stage through the driver, slower).
    std::string lock(gr::block& b, bool inputs, bool outputs);
    void unlock();

private:
    std::string lock_buffer(const gr::buffer_sptr& buffer);
    std::vector<void*> m_locked;
};

} // namespace mimo_gpu
} // namespace gr

#endif
