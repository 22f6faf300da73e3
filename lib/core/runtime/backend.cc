#include <mimo_gpu/backend.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <stdexcept>

#ifdef MIMO_GPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mimo_gpu {

namespace {

std::string lower(std::string s)
{
    std::transform(
        s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// Probed once: the answer cannot change while the process runs.
const std::string& probe_cuda()
{
    static const std::string reason = [] {
#ifdef MIMO_GPU_HAVE_CUDA
        int count = 0;
        const cudaError_t err = cudaGetDeviceCount(&count);
        if (err != cudaSuccess) {
            cudaGetLastError(); // clear the sticky error so later calls start clean
            // Without a driver the runtime says "driver version is insufficient";
            // say what is true: no driver at all (its version reads 0), or one too old.
            int driver = 0, runtime = 0;
            cudaDriverGetVersion(&driver);
            cudaRuntimeGetVersion(&runtime);
            if (driver == 0 || err == cudaErrorNoDevice)
                return std::string("no NVIDIA GPU or driver was found");
            if (err == cudaErrorInsufficientDriver)
                return "the NVIDIA driver supports CUDA " +
                       std::to_string(driver / 1000) + "." +
                       std::to_string(driver % 1000 / 10) +
                       ", older than this build's CUDA " +
                       std::to_string(runtime / 1000) + "." +
                       std::to_string(runtime % 1000 / 10) +
                       " runtime: update the driver";
            return std::string("no usable CUDA device (") + cudaGetErrorString(err) + ")";
        }
        if (count == 0)
            return std::string("no NVIDIA GPU or driver was found");
        return std::string();
#else
        return std::string(
            "this build of mimo_gpu has no CUDA support (built with ENABLE_CUDA=OFF)");
#endif
    }();
    return reason;
}

} // namespace

bool cuda_available() { return probe_cuda().empty(); }

std::string cuda_unavailable_reason() { return probe_cuda(); }

backend backend_from_string(const std::string& name)
{
    const std::string n = lower(name);
    if (n == "auto" || n == "automatic" || n.empty())
        return backend::automatic;
    if (n == "cpu")
        return backend::cpu;
    if (n == "cuda" || n == "gpu")
        return backend::cuda;
    throw std::invalid_argument("mimo_gpu: unknown backend '" + name +
                                "' (expected auto, cpu or cuda)");
}

std::string to_string(backend b)
{
    switch (b) {
    case backend::cpu:
        return "cpu";
    case backend::cuda:
        return "cuda";
    default:
        return "auto";
    }
}

backend resolve_backend(backend requested)
{
    if (requested == backend::automatic) {
        if (const char* env = std::getenv("MIMO_GPU_BACKEND")) {
            const backend forced = backend_from_string(env);
            if (forced != backend::automatic)
                return resolve_backend(forced);
        }
        if (cuda_available())
            return backend::cuda;
        static std::once_flag logged;
        std::call_once(logged, [] {
            std::cerr << "mimo_gpu: " << cuda_unavailable_reason()
                      << ": running on the CPU\n";
        });
        return backend::cpu;
    }
    if (requested == backend::cuda && !cuda_available())
        throw std::runtime_error("mimo_gpu: the CUDA backend was requested but " +
                                 cuda_unavailable_reason());
    return requested;
}

} // namespace mimo_gpu
