// Batched modified Gram-Schmidt QR of the real-valued (MRVD) MIMO model,
// for several detection orders at once (paper: nway-mimo-detector-gpu, Alg. 1).
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/erasures.h>
#include <mimo_gpu/types.h>

#include <memory>

namespace mimo_gpu {

/// Layout of one QR item (one problem), used by batched_qr and nway_ssfe_detector.
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
    static constexpr int stream_at(int position, int order, int nt)
    {
        return (position + order) % nt;
    }
};

class qr_engine; // implementation interface (CPU or CUDA), lib/core/qr/

/// Computes the QR items of a batch of (H, y) problems.
/// A problem with a non-finite H or y, or a rank-deficient H, gets an item of
/// NaNs (which nway_ssfe_detector::detect_qr erases) and is reported; under the
/// `stop` policy (the default) the call then throws std::invalid_argument
/// naming the first bad problem (erasures.h).
class batched_qr
{
public:
    /// orders: 1..nt. Throws std::invalid_argument on a bad shape or order count,
    /// std::runtime_error when backend::cuda is asked for and unavailable.
    batched_qr(mimo_shape shape, int orders, backend requested = backend::automatic);
    ~batched_qr();
    batched_qr(batched_qr&&) noexcept;
    batched_qr& operator=(batched_qr&&) noexcept;

    const mimo_shape& shape() const { return m_shape; }
    qr_layout layout() const { return m_layout; }
    backend active_backend() const;

    void set_bad_problem_policy(bad_problem_policy policy) { m_policy = policy; }
    bad_problem_policy bad_problems() const { return m_policy; }

    /// Host memory: H batch*nr*nt, y batch*nr, items batch*layout().floats_per_item().
    detection_report run(const cfloat* H, const cfloat* y, size_t batch, float* items);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else
    /// std::logic_error). Input errors are reported by the next synchronising call on
    /// this object (check_device_status), since the kernel finds them.
    void run_device(const cfloat* d_H,
                    const cfloat* d_y,
                    size_t batch,
                    float* d_items,
                    cuda_stream_t stream);
    /// Waits for `stream`; the report of the run_device calls since the last check
    /// (throws for the first bad problem under `stop`).
    detection_report check_device_status(cuda_stream_t stream);

private:
    detection_report apply_policy(detection_report report) const;

    mimo_shape m_shape;
    qr_layout m_layout;
    bad_problem_policy m_policy = bad_problem_policy::stop;
    std::unique_ptr<qr_engine> m_engine;
};

} // namespace mimo_gpu
