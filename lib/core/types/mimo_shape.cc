#include <mimo_gpu/types.h>

#include <stdexcept>
#include <string>

namespace mimo_gpu {

void mimo_shape::validate() const
{
    if (nt < 1 || nr < 1 || nt > nr || nr > k_largest_shape)
        throw std::invalid_argument(
            "mimo_gpu: unsupported MIMO shape nr=" + std::to_string(nr) +
            ", nt=" + std::to_string(nt) +
            " (need 1 <= nt <= nr <= " + std::to_string(k_largest_shape) + ")");
}

void mimo_shape::validate_small() const
{
    validate();
    if (nr > k_max_antennas)
        throw std::invalid_argument(
            "mimo_gpu: nr=" + std::to_string(nr) + " is more than the " +
            std::to_string(k_max_antennas) +
            " receive antennas the small-MIMO kernels are compiled for");
}

} // namespace mimo_gpu
