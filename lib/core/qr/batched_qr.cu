// CUDA engine of batched_qr: one thread per (problem, order), running the
// same mgs_qr_order as the CPU engine. Host memory is read and written in place
// when pinned (cuda_staging.h).
#include "../runtime/cuda_staging.h"
#include "../runtime/device_faults.h"
#include "../runtime/shape_dispatch.h"
#include "mgs_qr.h"
#include "qr_engine.h"
#include "qr_kernels.h"

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_qr_threads = 64; // 8400 problems fill 132 SMs with one block each

/// One thread per (problem, order). The block's inputs and outputs are
/// contiguous in global memory, so they pass through shared memory to make
/// every global access coalesced (a thread's own item is 288 bytes for 4x4,
/// which would otherwise scatter each warp store over 32 segments).
template <int NR, int NT>
__global__ void __launch_bounds__(k_qr_threads) mgs_qr_kernel(const float* __restrict__ H,
                                                              const float* __restrict__ y,
                                                              size_t batch,
                                                              int orders,
                                                              float* __restrict__ items,
                                                              fault_sink faults)
{
    constexpr int h_floats = 2 * NR * NT, y_floats = 2 * NR,
                  per_order = 2 * NT * (2 * NT + 1);
    extern __shared__ float stage[];
    const size_t first_idx = size_t(blockIdx.x) * k_qr_threads;
    const size_t idx_end = min(first_idx + k_qr_threads, batch * orders);
    const size_t first_p = first_idx / orders, end_p = (idx_end - 1) / orders + 1;
    const int n_problems = int(end_p - first_p);
    float* sH = stage;
    float* sy = sH + (k_qr_threads + 1) * h_floats;
    float* sE = sy + (k_qr_threads + 1) * y_floats;

    for (int i = threadIdx.x; i < n_problems * h_floats; i += k_qr_threads)
        sH[i] = H[first_p * h_floats + i];
    for (int i = threadIdx.x; i < n_problems * y_floats; i += k_qr_threads)
        sy[i] = y[first_p * y_floats + i];
    __syncthreads();

    const size_t idx = first_idx + threadIdx.x;
    if (idx < idx_end) {
        const size_t p = idx / orders;
        const int local = int(p - first_p);
        const problem_fault fault = mgs_qr_order<NR, NT>(sH + local * h_floats,
                                                         sy + local * y_floats,
                                                         int(idx % orders),
                                                         sE + threadIdx.x * per_order);
        if (fault != problem_fault::none)
            faults.report(p, fault);
    }
    __syncthreads();
    const int n_out = int(idx_end - first_idx) * per_order;
    for (int i = threadIdx.x; i < n_out; i += k_qr_threads)
        items[first_idx * per_order + i] = sE[i];
}

template <int NR, int NT>
constexpr size_t qr_shared_bytes()
{
    return sizeof(float) * ((k_qr_threads + 1) * (2 * NR * NT + 2 * NR) +
                            k_qr_threads * 2 * NT * (2 * NT + 1));
}

} // namespace

void launch_mgs_qr(mimo_shape shape,
                   int orders,
                   const cfloat* d_H,
                   const cfloat* d_y,
                   size_t batch,
                   float* d_items,
                   fault_sink faults,
                   cudaStream_t stream)
{
    if (batch == 0)
        return;
    const size_t threads = batch * orders;
    const unsigned blocks = unsigned((threads + k_qr_threads - 1) / k_qr_threads);
    dispatch_shape(shape.nr, shape.nt, [&](auto nr_c, auto nt_c) {
        constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
        constexpr size_t shared = qr_shared_bytes<NR, NT>();
        if constexpr (shared > 48 * 1024) // 8x8: opt in to more than the default 48 KB
            MIMO_CUDA_CHECK(
                cudaFuncSetAttribute(mgs_qr_kernel<NR, NT>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     int(shared)));
        mgs_qr_kernel<NR, NT><<<blocks, k_qr_threads, shared, stream>>>(
            reinterpret_cast<const float*>(d_H),
            reinterpret_cast<const float*>(d_y),
            batch,
            orders,
            d_items,
            faults);
    });
    MIMO_CUDA_CHECK_LAUNCH("mgs_qr_kernel");
}

namespace {

class cuda_qr_engine final : public qr_engine
{
public:
    cuda_qr_engine(mimo_shape shape, int orders)
        : m_shape(shape), m_layout{ shape.nt, orders }
    {
    }
    backend kind() const override { return backend::cuda; }

    detection_report
    run(const cfloat* H, const cfloat* y, size_t batch, float* items) override
    {
        const cudaStream_t s = m_stream.get();
        launch_mgs_qr(m_shape,
                      m_layout.orders,
                      m_H.device_view(H, batch * m_shape.nr * m_shape.nt),
                      m_y.device_view(y, batch * m_shape.nr),
                      batch,
                      m_items.device_view(items, batch * m_layout.floats_per_item()),
                      m_host_faults.sink(batch, s),
                      s);
        const detection_report report = m_host_faults.collect(s, &m_flags);
        m_items.finish();
        erase_problems(report,
                       m_flags.data(),
                       items,
                       m_layout.floats_per_item(),
                       k_erased_item_value);
        return report;
    }

    void run_device(const cfloat* d_H,
                    const cfloat* d_y,
                    size_t batch,
                    float* d_items,
                    cuda_stream_t stream) override
    {
        if (batch == 0)
            return;
        launch_mgs_qr(m_shape,
                      m_layout.orders,
                      d_H,
                      d_y,
                      batch,
                      d_items,
                      m_faults.sink(batch, stream),
                      stream);
        m_faults.erase(d_items, m_layout.floats_per_item(), k_erased_item_value, stream);
    }

    detection_report check_device_status(cuda_stream_t stream) override
    {
        return m_faults.collect(stream);
    }

private:
    mimo_shape m_shape;
    qr_layout m_layout;
    cuda_stream m_stream;
    host_input<cfloat> m_H, m_y;
    host_output<float> m_items;
    device_faults m_host_faults;     // run()'s, apart from run_device calls still pending
    device_faults m_faults;          // run_device's, collected by check_device_status
    std::vector<fault_word> m_flags; // every flag of a batch with many erasures
};

} // namespace

std::unique_ptr<qr_engine> make_cuda_qr_engine(mimo_shape shape, int orders)
{
    return std::make_unique<cuda_qr_engine>(shape, orders);
}

} // namespace detail
} // namespace mimo_gpu
