#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""SUMIS from Python: a-priori LLRs in (shape checked), extrinsic LLRs out;
with the whole space as subspace (ns = 2 nt) its LLRs are the exact log-MAP
ones, computed here with numpy by enumerating every transmitted vector."""
import itertools

import numpy as np
from gnuradio import gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import random_bits

core = mimo_gpu.core


def exact_log_map(H, y, n0, points, Q, prior=None):
    """Exact log-MAP LLRs (ln P0/P1) of one problem, extrinsic when prior is given."""
    nt = H.shape[1]
    M = len(points)
    metrics, labels = [], []
    for idx in itertools.product(range(M), repeat=nt):
        s = points[list(idx)]
        m = -np.sum(np.abs(y - H @ s) ** 2) / n0
        bits = [(i >> (Q - 1 - k)) & 1 for i in idx for k in range(Q)]
        if prior is not None:
            m += sum(-np.logaddexp(0, a if b else -a) for a, b in zip(prior, bits))
        metrics.append(m)
        labels.append(bits)
    metrics, labels = np.array(metrics), np.array(labels)
    llr = np.array([np.logaddexp.reduce(metrics[labels[:, i] == 0]) - np.logaddexp.reduce(metrics[labels[:, i] == 1])
                    for i in range(nt * Q)])
    return llr - (prior if prior is not None else 0)


class qa_sumis_detector(gr_unittest.TestCase):
    NR, NT, MOD, Q, C = 2, 2, "16qam", 4, 6

    def test_whole_space_with_priors_is_exact_log_map(self):
        bits = random_bits(self.C, self.NT * self.Q, seed=4)
        H, y = core.simulate(bits, self.NR, self.NT, self.MOD, 6.0, 4)
        n0 = core.noise_variance_from_snr_db(6.0)
        rng = np.random.default_rng(5)
        priors = rng.normal(0, 2, (self.C, self.NT * self.Q)).astype(np.float32)
        det = core.detector("sumis", self.NR, self.NT, self.MOD, backend="cpu", ns=2 * self.NT)
        llr = det.detect(H, y, n0, priors=priors)
        points = np.asarray(core.constellation_points(self.MOD), dtype=np.complex128)  # by label
        for c in range(self.C):
            want = exact_log_map(H[c].astype(np.complex128), y[c].astype(np.complex128), n0, points, self.Q, priors[c])
            np.testing.assert_allclose(llr[c], want, rtol=1e-4, atol=1e-4)

    def test_bad_priors(self):
        bits = random_bits(self.C, self.NT * self.Q, seed=6)
        H, y = core.simulate(bits, self.NR, self.NT, self.MOD, 10.0, 6)
        det = core.detector("sumis", self.NR, self.NT, self.MOD, backend="cpu")
        with self.assertRaises(ValueError):  # wrong length
            det.detect(H, y, 0.1, priors=np.zeros((self.C, self.NT * self.Q - 1), np.float32))
        priors = np.zeros((self.C, self.NT * self.Q), np.float32)
        priors[2, 1] = np.nan
        with self.assertRaises(ValueError):  # the core's default policy: stop, naming the problem
            det.detect(H, y, 0.1, priors=priors)
        with self.assertRaises(ValueError):  # ns beyond 2 nt
            core.detector("sumis", self.NR, self.NT, self.MOD, ns=5)
        with self.assertRaises(ValueError):  # a family that takes no priors
            core.detector("mmse_cg", 4, 2, self.MOD).detect(np.zeros((1, 4, 2), np.complex64),
                                                         np.zeros((1, 4), np.complex64), 0.1,
                                                         priors=np.zeros((1, 8), np.float32))


if __name__ == "__main__":
    gr_unittest.run(qa_sumis_detector)
