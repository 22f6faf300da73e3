// Interpolation in time across a frame's pilot symbols, written once for the
// CPU receiver and the CUDA kernels: each data symbol's channel is a weighted
// sum of the nearest pilot symbols' estimates (after the interpolation in
// frequency). Linear weights, or LMMSE for a Jakes (Clarke) Doppler spectrum:
// the correlation of the channel k symbols apart is J0(omega k), omega = 2 pi
// f_D T_symbol, with omega from the frame's own pilot symbols (the
// correlation of consecutive ones) and the noise the frequency filter leaves.
// Without Doppler the LMMSE weights average the pilot symbols (less noise than
// hold or linear); with it they follow the fading.
#pragma once

#include "comb_interpolation.h"
#include "pilot_layout.h"

#include <math.h>

namespace mimo_gpu {
namespace detail {

/// Pilot symbols a data symbol's estimate combines, at most.
constexpr int k_time_taps = 4;

/// J0, the Bessel function of the first kind of order 0 (float, host and device).
MIMO_HD float bessel_j0(float x) { return j0f(x); }

/// 1 - J0(x) for 0 <= x <= 2.405 by its series, sum over k >= 1 of
/// -(-x^2/4)^k / (k!)^2 (the terms fall below 1e-8 of it by k = 9): no
/// cancellation where x is small, and the same operations on the CPU and the
/// GPU (whose j0f differ in their last bits: near J0 = 1 a bit is ~0.3 % of a
/// slow channel's Doppler).
MIMO_HD float one_minus_bessel_j0(float x)
{
    const float t = 0.25f * x * x;
    float term = t, sum = t;
    for (int k = 2; k <= 10; ++k) {
        term *= -t / float(k * k);
        sum += term;
    }
    return sum;
}

/// omega k from the decorrelation 1 - rho of estimates k symbols apart (rho
/// their correlation): the x in [0, 2.405] (J0's first zero) with
/// 1 - J0(x) = 1 - rho; 1 - rho <= 0: 0, >= 1: 2.405. Given as 1 - rho: a slow
/// channel's rho lies within float's resolution of 1.
MIMO_HD float doppler_phase_from_decorrelation(float one_minus_rho)
{
    constexpr float first_zero = 2.404825f;
    if (!(one_minus_rho > 0.0f))
        return 0.0f;
    if (!(one_minus_rho < 1.0f))
        return first_zero;
    float lo = 0.0f, hi = first_zero; // 1 - J0 rises from 0 to 1 on [0, first_zero]
    for (int k = 0; k < 30; ++k) {
        const float mid = 0.5f * (lo + hi);
        if (one_minus_bessel_j0(mid) < one_minus_rho)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5f * (lo + hi);
}

/// The first of the `taps` consecutive pilot symbols (of `pilots` in the
/// frame, q = 0..pilots-1) nearest the data symbols after pilot symbol j
/// (-1: before the first): j and the next, then alternately one before and
/// one after.
MIMO_HD int time_window_first(int j, int pilots, int taps)
{
    int first = j - (taps - 1) / 2;
    if (first > pilots - taps)
        first = pilots - taps;
    return first < 0 ? 0 : first;
}

/// LMMSE weights of `taps` pilot symbols at times `pilot_time[q]` (symbols)
/// for a data symbol at `time`: r^T (R + s I)^-1, R and r from J0(omega dt);
/// s: the pilot estimates' noise relative to the channel power.
MIMO_HD void time_lmmse_weights(
    const float* pilot_time, int taps, float time, float omega, float s, float* w)
{
    if (!(s >= 1e-4f)) // at most 40 dB, as the frequency solve: keeps R (all ones
        s = 1e-4f;     // without Doppler) well conditioned in float
    float R[k_time_taps * k_time_taps], r[k_time_taps];
    for (int a = 0; a < taps; ++a) {
        r[a] = bessel_j0(omega * (time - pilot_time[a]));
        for (int b = 0; b <= a; ++b)
            R[a * taps + b] =
                bessel_j0(omega * (pilot_time[a] - pilot_time[b])) + (a == b ? s : 0.0f);
    }
    cholesky_solve<k_time_taps>(R, r, taps, w);
}

/// The frequency filter's noise gain (the noise left in an interpolated
/// estimate over the LS noise): about the model's share of the comb's delay
/// range for LMMSE, at least one over its window; 2/3 for linear.
MIMO_HD float frequency_noise_gain(bool lmmse, float spread_over_n, int nt, int window)
{
    if (!lmmse)
        return 2.0f / 3.0f;
    const float g = fmaxf(spread_over_n * float(nt), 1.0f / float(window));
    return g < 1.0f ? g : 1.0f;
}

/// omega (radians per symbol) from consecutive pilot symbols `lag` symbols
/// apart: |C| = |sum conj(H_j) H_j+1| and P = the sum of their mean powers,
/// over the same elements, `noise` of P being the estimates' noise. In double:
/// 1 - |C| / (P - noise) is ~1e-5 for a slow channel, which float sums and a
/// float ratio resolve to a few per cent only.
MIMO_HD float doppler_omega(double C, double P, double noise, float lag)
{
    const double signal = P - noise;
    const double one_minus_rho = signal > 0.0 ? (signal - C) / signal : 1.0;
    return doppler_phase_from_decorrelation(float(one_minus_rho)) / lag;
}

/// A frame's Jakes model for the time filter: the spectrum's half-width omega
/// (2 pi f_D T) and its shift theta (radians per symbol), and the pilot
/// symbols' estimates' noise over the channel power.
struct jakes_model {
    float omega = 0, theta = 0, noise = 1e-4f;
    float doppler = 0; ///< omega as measured (omega may be widened by the turn)
    float turn = 0;    ///< the pilot symbols' mean turn a symbol, as measured
    /// the interpolated estimates' noise per element (the LS noise times the
    /// frequency filter's gain)
    float estimate_noise = 0;
};

/// The spectrum's shift and width from the measured turn and Doppler. The
/// turn is the residual CFO's plus the power-weighted mean Doppler of this
/// channel's few paths, which the Doppler bounds. So the spectrum is shifted
/// only by the turn the Doppler cannot explain (a residual CFO; all of it
/// without fading) and widened by the rest, centred: shifting it by a mean
/// Doppler its paths straddle filtered half of them away (at 300 Hz on some
/// frames 10x linear's error).
MIMO_HD void split_turn(jakes_model& m)
{
    const float excess = fmaxf(0.0f, fabsf(m.turn) - m.doppler);
    m.theta = copysignf(excess, m.turn);
    m.omega = m.doppler + fminf(fabsf(m.turn), m.doppler);
}

/// The model from the sums over a frame's `pairs` pairs of pilot symbols'
/// estimates (slot_layout::doppler_pairs; `per_pilot` elements each): C = cx + j cy = sum
/// conj(H_j) H_j+1 and P = the sum of their mean powers; ls_noise: the LS noise per
/// pilot, relative_noise: it over the channel power, gain: the frequency filter's noise
/// gain (frequency_noise_gain). Pilot symbols `lag` symbols apart; no pair (one slot): no
/// Doppler, no turn.
MIMO_HD jakes_model jakes_model_of_frame(double cx,
                                         double cy,
                                         double P,
                                         int pairs,
                                         float per_pilot,
                                         float ls_noise,
                                         float relative_noise,
                                         float gain,
                                         int lag)
{
    jakes_model m;
    m.noise = relative_noise * gain;
    m.estimate_noise = ls_noise * gain;
    if (pairs > 0) {
        m.turn = atan2f(float(cy), float(cx)) / float(lag);
        m.doppler = doppler_omega(sqrt(cx * cx + cy * cy),
                                  P,
                                  double(m.estimate_noise) * per_pilot * pairs,
                                  float(lag));
        split_turn(m);
    }
    return m;
}

/// Whether a frame `gap` symbols after the one before is linked to it
/// (estimation across frames, below): where its own model says the channel
/// keeps a correlation of 0.9 over the gap (J0(omega gap) >= 0.9). Its own
/// Doppler reads too high where the channel is slow (below), so a slow
/// channel passes; a fast one is estimated alone.
MIMO_HD bool slow_enough_to_link(const jakes_model& own, float gap)
{
    return own.doppler * gap < 0.65f;
}

/// A linked frame's model: the frame's own, its Doppler measured again over
/// the frames' distance `gap`. A slow channel's correlation over a few
/// symbols lies within the noise's error of 1 (the frame's own Doppler reads
/// several times too high); over a frame it does not. Where the two frames'
/// channels correlate by less than a half over the gap (J0(omega gap) < 0.5:
/// faster than the frame's own model said, or a channel drawn anew), the
/// frame is not linked (false, the model as it was). C: the sum over the Q
/// pairs (the older frame's pilot symbol q turned onto this frame, this
/// frame's q) of |sum conj(A) B|, P their mean powers summed (per_pilot
/// elements each); the turn is then split again.
MIMO_HD bool
link_model(jakes_model& model, double C, double P, int pairs, float per_pilot, float gap)
{
    const float across =
        doppler_omega(C, P, double(model.estimate_noise) * per_pilot * pairs, gap);
    if (!(across * gap < 1.52f))
        return false;
    model.doppler = across;
    split_turn(model);
    return true;
}

/// Hz from omega (radians per symbol).
MIMO_HD float doppler_hz(float omega, float symbols_per_second)
{
    return omega / (2.0f * 3.14159265358979f) * symbols_per_second;
}

// Estimation across frames: a frame that follows the one before closely (a
// stream's next frame) may add that frame's pilot symbols to its time filter
// (`linked`): they are pilot symbols -Q .. -1 (Q a frame's), `gap` symbols
// earlier than their place in their own frame (the distance between the two
// frames' starts, in symbols). The Jakes model's J0 weighs them by how far the
// channel has moved since: a slow channel averages both frames' pilot
// symbols, a fast one hardly uses the older ones. Each older pilot symbol is
// first turned onto this frame's phase (its own CFO correction and timing,
// frame_link_turn), and by the model's shift theta as far as it lies before
// this frame's first pilot symbol.

/// Pilot symbols the LMMSE time filter combines in a frame of `pilots`
/// (linked: and the frame before's as many).
MIMO_HD int time_taps(int pilots, bool linked = false)
{
    const int available = linked ? 2 * pilots : pilots;
    return available < k_time_taps ? available : k_time_taps;
}

/// The first pilot symbol of data symbol s of slot j's LMMSE window (linked:
/// among -Q..Q-1).
MIMO_HD int time_window_of(const slot_layout& l, int j, int s, bool linked = false)
{
    const int Q = l.pilots(), older = linked ? Q : 0;
    return time_window_first(l.pilot_before(l.data_time(j, s)) + older,
                             Q + older,
                             time_taps(Q, linked)) -
           older;
}

/// Time (symbols from this frame's first slot) of pilot symbol i of a linked
/// frame: i < 0 the frame before's pilot symbol Q + i.
MIMO_HD float linked_pilot_time(const slot_layout& l, int i, float gap)
{
    return i < 0 ? float(l.pilot_time(l.pilots() + i)) - gap : float(l.pilot_time(i));
}

/// The LMMSE weights of data symbol s of slot j: time_taps complex weights,
/// w[2a] + j w[2a+1] (0 beyond them), of the pilot symbols from the returned
/// one on (time_window_of's consecutive ones around it); gap >= 0: of a frame
/// linked to the one before, `gap` symbols after it. theta: the shift of the
/// model's spectrum (jakes_model_of_frame: the part of the measured turn the
/// Doppler cannot explain, a residual CFO): R = D R0 D^H, so each real weight
/// turns by theta times its distance in time.
MIMO_HD int data_symbol_time_weights(const slot_layout& l,
                                     int j,
                                     int s,
                                     const jakes_model& model,
                                     float* w,
                                     float gap = -1.0f)
{
    const bool linked = gap >= 0.0f;
    const int taps = time_taps(l.pilots(), linked);
    const int time = l.data_time(j, s);
    const int first = time_window_of(l, j, s, linked);
    float pilot_time[k_time_taps], real[k_time_taps];
    for (int a = 0; a < taps; ++a)
        pilot_time[a] = linked_pilot_time(l, first + a, gap);
    time_lmmse_weights(pilot_time, taps, float(time), model.omega, model.noise, real);
    for (int a = 0; a < k_time_taps; ++a) {
        float sn = 0, cs = 0;
        if (a < taps)
            sincosf(model.theta * (float(time) - pilot_time[a]), &sn, &cs);
        w[2 * a] = a < taps ? real[a] * cs : 0.0f;
        w[2 * a + 1] = a < taps ? real[a] * sn : 0.0f;
    }
    return first;
}

/// How pilot symbol q of the frame before turns onto this frame's: by
/// `phase` plus `slope` times a subcarrier's frequency offset (a timing
/// difference between the frames' FFT windows), plus theta times its time
/// before this frame's first pilot symbol (where the model expects it).
struct frame_link_turn {
    float phase = 0, slope = 0;
};

/// The angle pilot symbol i (< 0) of the frame before turns by at a
/// subcarrier `offset` when it lies dt symbols from this frame's first pilot
/// symbol (negative: before it), for a model shifted by theta.
MIMO_HD float
frame_link_angle(const frame_link_turn& t, int offset, float theta, float dt)
{
    return t.phase + t.slope * float(offset) + theta * dt;
}

/// The slope of frame_link_turn from the sum over neighbouring subcarriers
/// (offsets one apart) of conj(u_c) u_c+1, u_c = d_c / |d_c|, d_c = the sum
/// over antenna pairs of conj(A) B at subcarrier c, A one older pilot symbol's estimates
/// and B this frame's first's. The frames' FFT windows lie whole samples apart (one
/// sample clock), so the slope is a multiple of 2 pi / N: the nearest to the sum's angle
/// (a noisy angle's error would turn the band's edges).
MIMO_HD float frame_link_slope(float step_re, float step_im, int fft_size)
{
    const float unit = 2.0f * 3.14159265358979f / float(fft_size);
    return unit * rintf(atan2f(step_im, step_re) / unit);
}

/// The turn's phase from centred = sum over subcarriers of d_c e^(-j slope
/// offset_c); false (not linked) where a sum is not finite or is zero.
MIMO_HD bool frame_link_of(float step_re,
                           float step_im,
                           float centred_re,
                           float centred_im,
                           float slope,
                           frame_link_turn& turn)
{
    const bool ok = isfinite(step_re) && isfinite(step_im) && isfinite(centred_re) &&
                    isfinite(centred_im) && (centred_re != 0.0f || centred_im != 0.0f);
    turn.slope = ok ? slope : 0.0f;
    turn.phase = ok ? atan2f(centred_im, centred_re) : 0.0f;
    return ok;
}

/// How a data symbol's channel is formed from the pilot symbols' estimates.
enum class time_filter_kind {
    hold,   ///< a channel a slot: the mean of the slot's pilot symbols'
    linear, ///< between the two pilot symbols around the data symbol
    lmmse   ///< the LMMSE weights of the nearest time_taps pilot symbols
};

/// A data symbol's channel: the sum over a < taps of (w[2a] + j w[2a+1]) times
/// pilot symbol first + a's estimate.
struct time_combination {
    int first = 0, taps = 0;
    float w[2 * k_time_taps] = {};
};

/// Data symbol s of slot j's combination, written once for the CPU receiver
/// and the CUDA kernel. lmmse_weights: data_symbol_time_weights's (LMMSE only;
/// linked: first then from -Q on).
MIMO_HD time_combination combine_in_time(const slot_layout& l,
                                         time_filter_kind kind,
                                         int j,
                                         int s,
                                         const float* lmmse_weights,
                                         bool linked = false)
{
    time_combination c;
    if (kind == time_filter_kind::lmmse) {
        c.first = time_window_of(l, j, s, linked);
        c.taps = time_taps(l.pilots(), linked);
        for (int a = 0; a < 2 * c.taps; ++a)
            c.w[a] = lmmse_weights[a];
    } else if (kind == time_filter_kind::hold) {
        c.first = j * l.P;
        c.taps = l.P;
        for (int a = 0; a < c.taps; ++a)
            c.w[2 * a] = 1.0f / float(l.P);
    } else { // the nearest pilot symbol held before the first and after the last
        const time_pair tp = linear_time_pair(l, l.data_time(j, s));
        c.first = tp.first;
        c.taps = tp.second > tp.first ? 2 : 1;
        c.w[0] = 1.0f - tp.a;
        c.w[2] = tp.a;
    }
    return c;
}

} // namespace detail
} // namespace mimo_gpu
