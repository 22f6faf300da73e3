// CUDA engine of qr_decomposition: one thread per (problem, order), running the
// same mgs_qr_order as the CPU engine.
#include "../runtime/cuda_staging.h"
#include "../runtime/shape_dispatch.h"
#include "mgs_qr.h"
#include "qr_engine.h"
#include "qr_kernels.h"

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_qr_threads = 64; // 8400 problems fill 132 SMs with one block each

template <int NR, int NT>
__global__ void mgs_qr_kernel(const float* __restrict__ H, const float* __restrict__ y, size_t batch,
                              int orders, float* __restrict__ items, problem_status* status)
{
    constexpr int per_order = 2 * NT * (2 * NT + 1);
    const size_t idx = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= batch * orders)
        return;
    const size_t p = idx / orders;
    const int o = int(idx % orders);
    const problem_fault fault =
        mgs_qr_order<NR, NT>(H + p * 2 * NR * NT, y + p * 2 * NR, o, items + idx * per_order);
    if (fault != problem_fault::none)
        atomicMin(status, make_status(p, fault));
}

} // namespace

void launch_mgs_qr(mimo_shape shape, int orders, const cfloat* d_H, const cfloat* d_y, size_t batch,
                   float* d_items, problem_status* d_status, cudaStream_t stream)
{
    if (batch == 0)
        return;
    const size_t threads = batch * orders;
    const unsigned blocks = unsigned((threads + k_qr_threads - 1) / k_qr_threads);
    dispatch_shape(shape.nr, shape.nt, [&](auto nr_c, auto nt_c) {
        constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
        mgs_qr_kernel<NR, NT><<<blocks, k_qr_threads, 0, stream>>>(reinterpret_cast<const float*>(d_H),
                                                                 reinterpret_cast<const float*>(d_y), batch,
                                                                 orders, d_items, d_status);
    });
    MIMO_CUDA_CHECK_LAUNCH("mgs_qr_kernel");
}

namespace {

class cuda_qr_engine final : public qr_engine
{
public:
    cuda_qr_engine(mimo_shape shape, int orders) : m_shape(shape), m_layout{shape.nt, orders} {}
    backend kind() const override { return backend::cuda; }

    void run(const cfloat* H, const cfloat* y, size_t batch, float* items) override
    {
        const cudaStream_t s = m_stream.get();
        const cfloat* dH = m_H.upload(H, batch * m_shape.nr * m_shape.nt, s);
        const cfloat* dy = m_y.upload(y, batch * m_shape.nr, s);
        const size_t n_out = batch * m_layout.floats_per_item();
        launch_mgs_qr(m_shape, m_layout.orders, dH, dy, batch, m_items.device_output(n_out), m_status.reset(s), s);
        m_items.download(items, n_out, s);
        m_status.fetch(s);
        m_stream.synchronize();
        throw_if_bad("qr_decomposition", m_status.value());
        m_items.finish(items, n_out);
    }

    void run_device(const cfloat* d_H, const cfloat* d_y, size_t batch, float* d_items, cuda_stream_t stream) override
    {
        launch_mgs_qr(m_shape, m_layout.orders, d_H, d_y, batch, d_items, m_status.reset(stream), stream);
    }

    void check_device_status(cuda_stream_t stream) override
    {
        m_status.fetch(stream);
        MIMO_CUDA_CHECK(cudaStreamSynchronize(stream));
        throw_if_bad("qr_decomposition", m_status.value());
    }

private:
    mimo_shape m_shape;
    qr_layout m_layout;
    cuda_stream m_stream;
    upload_lane<cfloat> m_H, m_y;
    download_lane<float> m_items;
    device_status m_status;
};

} // namespace

std::unique_ptr<qr_engine> make_cuda_qr_engine(mimo_shape shape, int orders)
{
    return std::make_unique<cuda_qr_engine>(shape, orders);
}

} // namespace detail
} // namespace mimo_gpu
