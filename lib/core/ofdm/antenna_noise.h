// Noise per receive antenna, written once for the CPU receiver and the CUDA
// kernels. Each antenna's share of the delay profile (its pilot combs of every
// transmit antenna and pilot symbol) has noise-only bins beside the channel's
// span like the frame's sum: their mean is that antenna's LS noise. Radio
// chains differ (a noise figure, a gain setting, interference on one antenna);
// the detectors take one N0 a frame, so where the antennas differ clearly the
// receiver whitens: antenna r's y and its row of H are scaled by
// sqrt(N0 / N0_r), after which every row has the frame's N0 (the antennas'
// mean), and ML, MMSE and the LLRs weigh each antenna by its own SNR.
#pragma once

#include "../runtime/host_device.h"
#include "delay_profile.h"

#include <math.h>

#include <algorithm>
#include <vector>

namespace mimo_gpu {
namespace detail {

/// The antennas' noise must differ by more than this ratio (largest over
/// smallest, 1.5 dB) before the receiver whitens: below it a mismatch costs
/// less than 0.05 dB of SNR, and frames whose antennas are alike keep H and y
/// as measured (the estimate's own spread on the shortest combs, lte1.4 2x2,
/// is ~10 %).
constexpr float k_antenna_noise_ratio = 1.41f;

/// Receive antennas a receiver takes at most (ofdm_receiver's nr).
constexpr int k_max_receive_antennas = 256;

/// One antenna's LS noise per pilot from the sum and count of its noise-only
/// bins' powers: its profiles hold 1/nr of the frame's window energy; -1
/// where too few bins.
MIMO_HD float
antenna_ls_noise(const delay_profile_geometry& g, float sum, int bins, int nr)
{
    return delay_profile_ls_noise(g, sum * float(nr), bins);
}

/// Where the antennas' LS noise (antenna_ls_noise: nr values, all measured)
/// differs by the whitening rule's ratio, the delay profile is searched again
/// with each antenna's profiles weighted by mean / its noise: the noise of
/// the sum is then alike across antennas, so a noisy antenna's floor no longer
/// hides the weak paths the others show (which then read as noise on them:
/// 1.7x on the quiet antennas beside one 20 dB noisier, nr20 4x4 EPA).
/// Returns whether to search again, and then weight[r] (left as it is where
/// not, so that the profile last searched stays the one weighted).
MIMO_HD bool antenna_profile_weights(const float* antenna_ls_noise, int nr, float* weight)
{
    float lo = antenna_ls_noise[0], hi = antenna_ls_noise[0], mean = 0;
    for (int r = 0; r < nr; ++r) {
        lo = fminf(lo, antenna_ls_noise[r]);
        hi = fmaxf(hi, antenna_ls_noise[r]);
        mean += antenna_ls_noise[r] / float(nr);
    }
    const bool apart = isfinite(hi) && lo > 0 && hi > k_antenna_noise_ratio * lo;
    for (int r = 0; r < nr && apart; ++r)
        weight[r] = mean / antenna_ls_noise[r];
    return apart;
}

/// Whether the frame's antennas are whitened, and each antenna's scale
/// (sqrt(n0 / antenna_n0[r]) if so, else 1). n0: the frame's N0 (the mean of
/// antenna_n0). Not where an antenna shows no noise or a non-finite one.
MIMO_HD bool antenna_whitening(const float* antenna_n0, int nr, float n0, float* scale)
{
    float lo = antenna_n0[0], hi = antenna_n0[0];
    for (int r = 1; r < nr; ++r) {
        lo = fminf(lo, antenna_n0[r]);
        hi = fmaxf(hi, antenna_n0[r]);
    }
    const bool whiten = isfinite(lo) && isfinite(hi) && isfinite(n0) && lo > 0 &&
                        n0 > 0 && hi > k_antenna_noise_ratio * lo;
    for (int r = 0; r < nr; ++r)
        scale[r] = whiten ? sqrtf(n0 / antenna_n0[r]) : 1.0f;
    return whiten;
}

/// (host) A frame's noise per antenna as the receiver reports it: measured (nr
/// values) or, where null, the frame's n0 at each; the whitening scales
/// (scale resized to nr) and whether the frame is whitened.
inline bool report_antenna_noise(int nr,
                                 float n0,
                                 const float* measured,
                                 std::vector<float>& antenna_n0,
                                 std::vector<float>& scale)
{
    antenna_n0.assign(size_t(nr), n0);
    if (measured)
        std::copy(measured, measured + nr, antenna_n0.begin());
    scale.resize(size_t(nr));
    return antenna_whitening(antenna_n0.data(), nr, n0, scale.data());
}

} // namespace detail
} // namespace mimo_gpu
