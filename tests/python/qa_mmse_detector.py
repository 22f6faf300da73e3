#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The soft MMSE families (mmse, mmse_cg) from Python: equalize() against a
numpy MMSE solve, and the detector block with channel reuse (S symbols per H)
against the core object."""
import numpy as np
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import as_array, random_bits, run_with_timeout

core = mimo_gpu.core


def numpy_mmse(H, y, n0):
    """x_hat = A^-1 H^H y with A = H^H H + N0 I, lambda_u = 1 - N0 (A^-1)_uu
    (x_hat_u = lambda_u x_u + error) and rho_u = lambda_u / (1 - lambda_u), in
    double precision. H (C, nr, nt), y (C, S, nr) -> x_hat, lambda, rho (C, S, nt)."""
    H = H.astype(np.complex128)
    y = y.astype(np.complex128)
    nt = H.shape[2]
    Hh = np.conj(np.transpose(H, (0, 2, 1)))
    A_inv = np.linalg.inv(Hh @ H + n0 * np.eye(nt))
    x_hat = np.einsum("cij,cjk,csk->csi", A_inv, Hh, y)
    lam = 1.0 - n0 * np.real(np.diagonal(A_inv, axis1=1, axis2=2))
    rho = lam / (1.0 - lam)
    S = y.shape[1]
    return x_hat, np.repeat(lam[:, None, :], S, axis=1), np.repeat(rho[:, None, :], S, axis=1)


class qa_mmse_detector(gr_unittest.TestCase):
    NR, NT, MOD, Q, S, C = 16, 4, "16qam", 4, 3, 67

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def problems(self, snr_db=8.0, seed=3):
        bits = random_bits(self.C * self.S, self.NT * self.Q, seed=seed)
        H, y = core.simulate(bits, self.NR, self.NT, self.MOD, snr_db, seed, symbols_per_channel=self.S)
        self.assertEqual(H.shape, (self.C, self.NR, self.NT))
        self.assertEqual(y.shape, (self.C, self.S, self.NR))
        return bits, H, y, core.noise_variance_from_snr_db(snr_db)

    def test_equalize_is_the_numpy_mmse_solve(self):
        _, H, y, n0 = self.problems()
        det = core.detector("mmse", self.NR, self.NT, self.MOD, backend="cpu")
        z, sinr = det.equalize(H, y, n0)
        self.assertEqual(z.shape, (self.C, self.S, self.NT))
        self.assertEqual(z.dtype, np.complex64)
        self.assertEqual(sinr.shape, (self.C, self.S, self.NT))
        self.assertEqual(sinr.dtype, np.float32)
        x_hat, lam, rho = numpy_mmse(H, y, n0)
        # z = x_hat / lambda: z * lambda is the MMSE estimate itself.
        np.testing.assert_allclose(z * lam, x_hat, rtol=1e-4, atol=2e-5)
        np.testing.assert_allclose(sinr, rho, rtol=1e-3)
        # The same problems as (C*S, nr) with symbols_per_channel, and per symbol with H repeated.
        z2, sinr2 = det.equalize(H, y.reshape(-1, self.NR), n0, symbols_per_channel=self.S)
        self.assertEqual(z2.shape, (self.C * self.S, self.NT))
        np.testing.assert_array_equal(z2, z.reshape(-1, self.NT))
        np.testing.assert_array_equal(sinr2, sinr.reshape(-1, self.NT))
        z3, _ = det.equalize(np.repeat(H, self.S, axis=0), y.reshape(-1, self.NR), n0)
        np.testing.assert_allclose(z3, z2, rtol=1e-5, atol=1e-6)

    def test_conjugate_gradients_with_nt_iterations_solve_the_same_system(self):
        _, H, y, n0 = self.problems(snr_db=15.0, seed=8)
        cg = core.detector("mmse_cg", self.NR, self.NT, self.MOD, backend="cpu", iterations=self.NT)
        z, _ = cg.equalize(H, y, n0)
        exact, _ = core.detector("mmse", self.NR, self.NT, self.MOD, backend="cpu").equalize(H, y, n0)
        # U iterations solve the U x U system (in exact arithmetic): the symbols agree.
        np.testing.assert_allclose(z, exact, rtol=2e-3, atol=2e-3)

    def test_priors_give_mmse_pic_and_zero_priors_the_plain_llrs(self):
        bits, H, y, n0 = self.problems(snr_db=4.0, seed=5)
        det = core.detector("mmse", self.NR, self.NT, self.MOD, backend="cpu")
        plain = det.detect(H, y, n0)
        self.assertEqual(plain.shape, (self.C, self.S, self.NT * self.Q))
        sent = np.asarray(bits).reshape(plain.shape)
        np.testing.assert_array_equal(det.detect(H, y, n0, priors=np.zeros_like(plain)), plain)
        # Priors toward the sent bits (L > 0 means 0): a-posteriori = extrinsic + prior
        # decides fewer bits wrong than no priors.
        toward = np.where(sent == 0, 2.0, -2.0).astype(np.float32)
        ext = det.detect(H, y, n0, priors=toward)
        wrong = lambda llr: int(np.sum((llr < 0) != (sent == 1)))
        self.assertLess(wrong(ext + toward), wrong(plain))
        with self.assertRaises(ValueError):  # mmse_cg takes none
            core.detector("mmse_cg", self.NR, self.NT, self.MOD, backend="cpu").detect(
                H, y, n0, priors=np.zeros_like(plain))

    def test_equalize_refuses_other_families_and_bad_arrays(self):
        _, H, y, n0 = self.problems()
        with self.assertRaises(TypeError):
            core.detector("mtt", 2, 2, "qpsk").equalize(H[:, :2, :2], y[:, :, :2], 0.1)
        det = core.detector("mmse", self.NR, self.NT, self.MOD)
        with self.assertRaises(ValueError):
            det.equalize(H, y, n0, symbols_per_channel=2)  # y says S = 3
        with self.assertRaises(ValueError):
            det.equalize(H, y.reshape(-1, self.NR)[:-1], n0, symbols_per_channel=self.S)
        with self.assertRaises(ValueError):
            det.equalize(H[:, :, :3], y, n0)
        with self.assertRaises(ValueError):
            det.equalize(H, y, 0.0)
        with self.assertRaises(ValueError):
            det.equalize(H, y.reshape(-1, self.NR), n0, symbols_per_channel=0)

    def test_block_with_channel_reuse_gives_the_core_llrs(self):
        _, H, y, n0 = self.problems(snr_db=6.0, seed=5)
        for name in ("mmse", "mmse_cg"):
            self.tb = gr.top_block()
            # 40 received vectors per call: 13 channels of 3, so calls end mid-stream.
            det = mimo_gpu.mimo_detector(name, self.NR, self.NT, self.MOD, "", n0, self.S, "auto", 40)
            sink = blocks.vector_sink_f(self.NT * self.Q)
            self.tb.connect(blocks.vector_source_c(H.ravel().tolist(), False, self.NR * self.NT), (det, 0))
            self.tb.connect(blocks.vector_source_c(y.ravel().tolist(), False, self.NR), (det, 1))
            self.tb.connect(det, sink)
            run_with_timeout(self.tb)
            llr = as_array(sink, np.float32, self.NT * self.Q)
            self.assertEqual(llr.shape, (self.C * self.S, self.NT * self.Q))
            reference = core.detector(name, self.NR, self.NT, self.MOD).detect(H, y, n0)
            self.assertEqual(reference.shape, (self.C, self.S, self.NT * self.Q))
            np.testing.assert_allclose(llr, reference.reshape(-1, self.NT * self.Q), rtol=1e-5, atol=1e-5,
                                       err_msg=name)

    def test_channel_and_detector_with_reuse_have_no_errors_at_high_snr(self):
        nr, nt, S, C = 32, 8, 4, 101
        bits = random_bits(C * S, nt * self.Q, seed=11)
        channel = mimo_gpu.mimo_channel(nr, nt, self.MOD, 25.0, 2, S)
        det = mimo_gpu.mimo_detector("mmse", nr, nt, self.MOD, "", 1.0, S)  # N0 from the channel's tag
        errors = mimo_gpu.ber_counter(nt * self.Q)
        source = blocks.vector_source_b(bits.ravel().tolist(), False, nt * self.Q)
        self.tb.connect(source, channel)
        self.tb.connect((channel, 0), (det, 0))
        self.tb.connect((channel, 1), (det, 1))
        self.tb.connect(det, (errors, 1))
        self.tb.connect(source, (errors, 0))
        run_with_timeout(self.tb)
        self.assertEqual(errors.bits(), bits.size)
        self.assertEqual(errors.errors(), 0)
        self.assertAlmostEqual(det.noise_var(), core.noise_variance_from_snr_db(25.0), places=7)


if __name__ == "__main__":
    gr_unittest.run(qa_mmse_detector)
