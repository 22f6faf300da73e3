// Batched modified Gram-Schmidt QR of the real-valued (MRVD) MIMO model,
// for several detection orders at once (paper: nway-mimo-detector-gpu, Alg. 1).
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/types.h>

#include <memory>

namespace mimo_gpu {

/// Layout of one QR item (one problem), used by qr_decomposition and nway_detector.
///
/// MRVD real model: y~ = [Re y0, Im y0, Re y1, ...], s~ = [Re s0, Im s0, Re s1, ...],
/// so H~ is 2nr x 2nt and the real and imaginary parts of one symbol are neighbours.
/// Detection order o (0 <= o < orders) rotates H's columns circularly: position j
/// of the permuted model holds original stream (j + o) % nt, so the last stream
/// detected (fully expanded by the N-way search) is stream (nt - 1 + o) % nt.
/// For each order the item holds E = [R | Q^T y~]: 2nt rows of 2nt + 1 floats,
/// row-major, R upper triangular with a positive diagonal. The item is `orders`
/// such blocks, order 0 first.
struct qr_layout {
    int nt = 0;
    int orders = 1;
    int rows() const { return 2 * nt; }
    int cols() const { return 2 * nt + 1; }
    int floats_per_order() const { return rows() * cols(); }
    int floats_per_item() const { return orders * floats_per_order(); }
    /// Original stream at permuted position j for order o.
    static constexpr int stream_at(int position, int order, int nt) { return (position + order) % nt; }
};

class qr_engine; // implementation interface (CPU or CUDA), lib/core/qr/

/// Computes the QR items of a batch of (H, y) problems.
/// Inputs are checked: a non-finite H or y, or a rank-deficient H, throws
/// std::invalid_argument naming the first bad problem; the batch output is then not valid.
class qr_decomposition
{
public:
    /// orders: 1..nt. Throws std::invalid_argument on a bad shape or order count,
    /// std::runtime_error when backend::cuda is asked for and unavailable.
    qr_decomposition(mimo_shape shape, int orders, backend requested = backend::automatic);
    ~qr_decomposition();
    qr_decomposition(qr_decomposition&&) noexcept;
    qr_decomposition& operator=(qr_decomposition&&) noexcept;

    const mimo_shape& shape() const { return m_shape; }
    qr_layout layout() const { return m_layout; }
    backend active_backend() const;

    /// Host memory: H batch*nr*nt, y batch*nr, items batch*layout().floats_per_item().
    void run(const cfloat* H, const cfloat* y, size_t batch, float* items);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else std::logic_error).
    /// Input errors are reported by the next synchronising call on this object
    /// (check_device_status), since the kernel finds them.
    void run_device(const cfloat* d_H, const cfloat* d_y, size_t batch, float* d_items, cuda_stream_t stream);
    /// Waits for `stream` and throws the input error found by the last run_device, if any.
    void check_device_status(cuda_stream_t stream);

private:
    mimo_shape m_shape;
    qr_layout m_layout;
    std::unique_ptr<qr_engine> m_engine;
};

} // namespace mimo_gpu
