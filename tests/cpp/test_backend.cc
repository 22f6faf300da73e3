#include <mimo_gpu/backend.h>
#include <mimo_gpu/nway_ssfe_detector.h>

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mimo_gpu;

TEST(backend, names_parse_and_unknown_names_are_rejected)
{
    EXPECT_EQ(backend_from_string("auto"), backend::automatic);
    EXPECT_EQ(backend_from_string("CPU"), backend::cpu);
    EXPECT_EQ(backend_from_string("cuda"), backend::cuda);
    EXPECT_THROW(backend_from_string("opencl"), std::invalid_argument);
}

TEST(backend, automatic_follows_availability_and_the_environment)
{
    unsetenv("MIMO_GPU_BACKEND");
    EXPECT_EQ(resolve_backend(backend::automatic),
              cuda_available() ? backend::cuda : backend::cpu);
    EXPECT_EQ(resolve_backend(backend::cpu), backend::cpu);
    setenv("MIMO_GPU_BACKEND", "cpu", 1);
    EXPECT_EQ(resolve_backend(backend::automatic), backend::cpu);
    setenv("MIMO_GPU_BACKEND", "tpu", 1);
    EXPECT_THROW(resolve_backend(backend::automatic), std::invalid_argument);
    unsetenv("MIMO_GPU_BACKEND");
}

TEST(backend, demanding_cuda_without_a_gpu_is_a_clear_error)
{
    if (cuda_available())
        GTEST_SKIP() << "a CUDA device is present";
    EXPECT_FALSE(cuda_unavailable_reason().empty());
    try {
        nway_ssfe_detector det({ { 2, 2 }, modulation::qpsk, 1, 0.0f }, backend::cuda);
        FAIL() << "CUDA backend granted without a device";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
    }
}
