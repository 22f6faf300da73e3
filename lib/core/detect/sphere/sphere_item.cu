// The sphere decoders' first kernel: the ordering and QR of a batch, a
// thread per problem (sphere_item::prepare), for FSD, SFSD and K-best alike.
#include "../../runtime/cuda_check.h"
#include "sphere_item.h"

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_prepare_threads = 64;

/// A thread per problem. The block's H and y come in through shared memory
/// (coalesced reads, also over PCIe when they are pinned host memory; problems
/// interleaved so that each thread reads its own without bank conflicts), and
/// its items go out the same way.
template <int NR, int NT>
__global__ void __launch_bounds__(k_prepare_threads)
    sphere_prepare_kernel(const float* __restrict__ H,
                          const float* __restrict__ y,
                          size_t batch,
                          int full,
                          sphere_item<NT>* __restrict__ items,
                          fault_sink faults)
{
    constexpr int P = k_prepare_threads, PITCH = P + 1, h_floats = 2 * NR * NT,
                  y_floats = 2 * NR;
    constexpr int item_floats = sizeof(sphere_item<NT>) / sizeof(float);
    __shared__ float sH[PITCH * h_floats], sy[PITCH * y_floats];
    __shared__ unsigned int sout[P * item_floats]; // items as words: perm holds ints
    const size_t first = size_t(blockIdx.x) * P;
    const int n = int(first + P <= batch ? P : batch - first);
    for (int i = threadIdx.x; i < n * h_floats; i += blockDim.x)
        sH[(i % h_floats) * PITCH + i / h_floats] = H[first * h_floats + i];
    for (int i = threadIdx.x; i < n * y_floats; i += blockDim.x)
        sy[(i % y_floats) * PITCH + i / y_floats] = y[first * y_floats + i];
    __syncthreads();
    if (int(threadIdx.x) < n) {
        sphere_item<NT> item;
        const problem_fault fault =
            item.template prepare<NR, PITCH>(sH + threadIdx.x, sy + threadIdx.x, full);
        if (fault != problem_fault::none)
            faults.report(first + threadIdx.x, fault);
        const unsigned int* from = reinterpret_cast<const unsigned int*>(&item);
        MIMO_UNROLL
        for (int i = 0; i < item_floats; ++i)
            sout[threadIdx.x * item_floats + i] = from[i];
    }
    __syncthreads();
    unsigned int* out = reinterpret_cast<unsigned int*>(items + first);
    for (int i = threadIdx.x; i < n * item_floats; i += blockDim.x)
        out[i] = sout[i];
}

} // namespace

size_t sphere_item_bytes(int nt)
{
    switch (nt) {
    case 1:
        return sizeof(sphere_item<1>);
    case 2:
        return sizeof(sphere_item<2>);
    case 3:
        return sizeof(sphere_item<3>);
    case 4:
        return sizeof(sphere_item<4>);
    }
    throw std::invalid_argument("mimo_gpu: the sphere decoders take nt <= 4");
}

void launch_sphere_prepare(mimo_shape shape,
                           int full,
                           const cfloat* d_H,
                           const cfloat* d_y,
                           size_t batch,
                           void* d_items,
                           fault_sink faults,
                           cuda_stream_t stream)
{
    if (batch == 0)
        return;
    dispatch_sphere_shape(shape.nr, shape.nt, [&](auto nr_c, auto nt_c) {
        constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
        sphere_prepare_kernel<NR, NT>
            <<<unsigned((batch + k_prepare_threads - 1) / k_prepare_threads),
               k_prepare_threads,
               0,
               stream>>>(reinterpret_cast<const float*>(d_H),
                         reinterpret_cast<const float*>(d_y),
                         batch,
                         full,
                         static_cast<sphere_item<NT>*>(d_items),
                         faults);
    });
    MIMO_CUDA_CHECK_LAUNCH("sphere_prepare_kernel");
}

} // namespace detail
} // namespace mimo_gpu
