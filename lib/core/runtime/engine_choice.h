// The one place that turns a requested backend into a CPU or CUDA engine.
#pragma once

#include <mimo_gpu/backend.h>

#include <memory>

namespace mimo_gpu {
namespace detail {

/// resolve_backend(requested), then make_cuda() or make_cpu(). In a build
/// without CUDA, resolve_backend throws for backend::cuda (and never picks
/// it), and make_cuda is never called.
template <typename MakeCpu, typename MakeCuda>
auto choose_engine(backend requested, MakeCpu make_cpu, MakeCuda make_cuda)
    -> decltype(make_cpu())
{
    const backend chosen = resolve_backend(requested);
#ifdef MIMO_GPU_HAVE_CUDA
    if (chosen == backend::cuda)
        return make_cuda();
#else
    (void)chosen;
    (void)make_cuda;
#endif
    return make_cpu();
}

} // namespace detail
} // namespace mimo_gpu
