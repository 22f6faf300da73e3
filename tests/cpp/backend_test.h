// What the core and block tests share about backends and data: the skip of a
// CUDA test where no GPU is usable (with the reason), the fixture of a test
// run on each backend, and random bits.
#pragma once

#include <mimo_gpu/backend.h>

#include <gtest/gtest.h>

#include <type_traits>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

/// Skips a test where no GPU is usable, with the reason.
#define MIMO_GPU_REQUIRE_CUDA()      \
    if (!mimo_gpu::cuda_available()) \
    GTEST_SKIP() << "no usable CUDA device: " << mimo_gpu::cuda_unavailable_reason()

/// A test run on each backend (the parameter: "cpu" or "cuda"); the "cuda"
/// runs skip, with the reason, where no GPU is usable.
class backend_test : public ::testing::TestWithParam<std::string>
{
protected:
    void SetUp() override
    {
        if (backend() == "cuda") {
            MIMO_GPU_REQUIRE_CUDA();
        }
    }
    std::string backend() const { return GetParam(); }
};

/// n fair random bits (0 or 1) from `rng` (a generator; an integer is a seed, below).
template <typename Rng, typename = std::enable_if_t<!std::is_integral_v<Rng>>>
std::vector<uint8_t> random_bits(size_t n, Rng& rng)
{
    std::vector<uint8_t> bits(n);
    for (auto& b : bits)
        b = uint8_t(rng() & 1u);
    return bits;
}

/// n fair random bits from a generator seeded with `seed`.
inline std::vector<uint8_t> random_bits(size_t n, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    return random_bits(n, rng);
}
