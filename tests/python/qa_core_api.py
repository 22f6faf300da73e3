#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""mimo_gpu.core: the core library on numpy arrays, without a flowgraph."""
import numpy as np
from gnuradio import gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import random_bits

core = mimo_gpu.core


class qa_core_api(gr_unittest.TestCase):

    def test_map_and_hard_demap_round_trip(self):
        for mod, q in (("qpsk", 2), ("16qam", 4), ("64qam", 6), ("256qam", 8), ("1024qam", 10)):
            self.assertEqual(core.bits_per_symbol(mod), q)
            points = core.constellation_points(mod)
            self.assertEqual(points.shape, (2 ** q,))
            self.assertAlmostEqual(float(np.mean(np.abs(points) ** 2)), 1.0, places=5)
            bits = random_bits(300, q).ravel()
            symbols = core.map(bits, mod)
            self.assertEqual(symbols.dtype, np.complex64)
            np.testing.assert_array_equal(core.hard_demap(symbols, mod), bits)

    def test_qpsk_labels_follow_3gpp(self):
        # TS 36.211 7.1.2: b0 b1 = 00 -> (1 + 1j)/sqrt(2), 11 -> (-1 - 1j)/sqrt(2).
        symbols = core.map(np.array([0, 0, 1, 1, 0, 1], dtype=np.uint8), "qpsk")
        np.testing.assert_allclose(symbols, np.array([1 + 1j, -1 - 1j, 1 - 1j]) / np.sqrt(2), atol=1e-6)

    def test_simulate_shapes_and_determinism(self):
        bits = random_bits(50, 3 * 4)
        H, y = core.simulate(bits, 4, 3, "16qam", 20.0, 5)
        self.assertEqual(H.shape, (50, 4, 3))
        self.assertEqual(y.shape, (50, 4))
        H2, y2 = core.simulate(bits, 4, 3, "16qam", 20.0, 5)
        np.testing.assert_array_equal(H, H2)
        np.testing.assert_array_equal(y, y2)
        self.assertAlmostEqual(core.noise_variance_from_snr_db(20.0), 0.01, places=7)

    def test_qr_items_reconstruct_the_channel(self):
        bits = random_bits(20, 2 * 2)
        H, y = core.simulate(bits, 3, 2, "qpsk", 10.0, 1)
        items = core.qr_decomposition(H, y, orders=2)
        self.assertEqual(items.shape, (20, 2, 4, 5))
        # Order 0: R^T R equals H~^T H~ of the real-valued model (columns Re, Im per stream).
        R = items[:, 0, :, :4]
        Hr = np.zeros((20, 6, 4), dtype=np.float64)
        Hr[:, 0::2, 0::2] = H.real
        Hr[:, 1::2, 1::2] = H.real
        Hr[:, 0::2, 1::2] = -H.imag
        Hr[:, 1::2, 0::2] = H.imag
        np.testing.assert_allclose(np.einsum("bki,bkj->bij", R, R),
                                   np.einsum("bki,bkj->bij", Hr, Hr), atol=1e-4)
        np.testing.assert_allclose(np.tril(R, -1), 0, atol=1e-6)  # upper triangular

    def test_nway_with_all_passes_matches_ml_on_2x2_qpsk(self):
        bits = random_bits(2000, 4, seed=6)
        H, y = core.simulate(bits, 2, 2, "qpsk", 5.0, 7)
        n0 = core.noise_variance_from_snr_db(5.0)
        nway = core.nway_detect(H, y, "qpsk", 2, n0)
        ml = core.ml_detect(H, y, "qpsk", n0)
        self.assertEqual(nway.shape, (2000, 4))
        np.testing.assert_allclose(nway, ml, rtol=1e-3, atol=1e-2)

    def test_nway_detect_qr_equals_nway_detect(self):
        bits = random_bits(300, 3 * 4, seed=2)
        H, y = core.simulate(bits, 4, 3, "16qam", 15.0, 3)
        n0 = core.noise_variance_from_snr_db(15.0)
        items = core.qr_decomposition(H, y, 2)
        from_items = core.nway_detect_qr(items, "16qam", n0, nr=4)
        direct = core.nway_detect(H, y, "16qam", 2, n0)
        np.testing.assert_allclose(from_items, direct, rtol=1e-4, atol=1e-3)

    def test_llr_clip_and_zero_errors_at_high_snr(self):
        bits = random_bits(500, 4 * 6, seed=4)
        H, y = core.simulate(bits, 4, 4, "64qam", 30.0, 4)
        llr = core.nway_detect(H, y, "64qam", 2, core.noise_variance_from_snr_db(30.0), llr_clip=20.0)
        self.assertLessEqual(float(np.max(np.abs(llr))), 20.0)
        self.assertEqual(int(np.sum((llr < 0) != bits)), 0)

    def test_inputs_of_other_dtypes_are_converted(self):
        bits = random_bits(10, 4)
        H, y = core.simulate(bits, 2, 2, "qpsk", 20.0, 1)
        a = core.ml_detect(H.astype(np.complex128), y.astype(np.complex128), "qpsk", 0.01)
        b = core.ml_detect(H, y, "qpsk", 0.01)
        np.testing.assert_array_equal(a, b)

    def test_bad_shapes_raise_value_error(self):
        bits = random_bits(10, 4)
        H, y = core.simulate(bits, 2, 2, "qpsk", 20.0, 1)
        with self.assertRaisesRegex(ValueError, r"H must have shape \(B, nr, nt\)"):
            core.ml_detect(H.reshape(10, 4), y, "qpsk", 0.1)
        with self.assertRaisesRegex(ValueError, "y must have shape"):
            core.nway_detect(H, y[:9], "qpsk", 1, 0.1)
        with self.assertRaisesRegex(ValueError, "y must have shape"):
            core.qr_decomposition(H, y[:, :1])
        with self.assertRaisesRegex(ValueError, "bits must have shape"):
            core.simulate(bits[:, :3], 2, 2, "qpsk", 20.0, 1)
        with self.assertRaisesRegex(ValueError, "bits must have shape"):
            core.map(np.zeros(5, dtype=np.uint8), "qpsk")
        with self.assertRaisesRegex(ValueError, "items must have shape"):
            core.nway_detect_qr(np.zeros((3, 1, 4, 4), dtype=np.float32), "qpsk", 0.1)

    def test_bad_parameters_raise_value_error(self):
        bits = random_bits(10, 4)
        H, y = core.simulate(bits, 2, 2, "qpsk", 20.0, 1)
        with self.assertRaises(ValueError):
            core.nway_detect(H, y, "qpsk", 3, 0.1)  # passes > nt
        with self.assertRaises(ValueError):
            core.nway_detect(H, y, "qpsk", 1, 0.0)  # N0 <= 0
        with self.assertRaises(ValueError):
            core.ml_detect(H, y, "8psk", 0.1)
        with self.assertRaises(ValueError):
            core.qr_decomposition(H, y, orders=3)
        with self.assertRaises(ValueError):
            core.simulate(bits, 1, 2, "qpsk", 20.0, 1)  # nt > nr
        with self.assertRaises(ValueError):
            core.map(np.array([0, 2], dtype=np.uint8), "qpsk")  # not a bit
        H[3, 0, 0] = np.nan
        with self.assertRaises(ValueError):
            core.ml_detect(H, y, "qpsk", 0.1)

    def test_messages_say_what_is_wrong(self):
        # Issue 23: each of these was accepted, or failed with a message that said nothing.
        def message(f):
            with self.assertRaises(ValueError) as caught:
                f()
            return str(caught.exception)
        self.assertIn("parameter passes must be a number, got 'two'",
                      message(lambda: core.detector("nway", 2, 2, "qpsk", passes="two")))
        self.assertIn("policy must be 'erase' or 'stop'",
                      message(lambda: core.detector("nway", 2, 2, "qpsk", policy=3)))
        bits = np.zeros(40, dtype=np.uint8)
        bits[7] = 2
        self.assertIn("bits must be 0 or 1, got 2 at index 7", message(lambda: core.turbo_encode(bits)))
        symbols = np.array([0.7 + 0.7j, complex(np.nan, 0.0)], dtype=np.complex64)
        self.assertIn("symbol 1 is NaN", message(lambda: core.hard_demap(symbols, "qpsk")))

    def test_backends(self):
        self.assertEqual(core.resolve_backend("cpu"), "cpu")
        self.assertIn(core.resolve_backend("auto"), ("cpu", "cuda"))
        with self.assertRaises(ValueError):
            core.resolve_backend("tpu")
        if core.cuda_available():
            self.assertEqual(core.cuda_unavailable_reason(), "")
        else:
            self.assertNotEqual(core.cuda_unavailable_reason(), "")
            bits = random_bits(4, 4)
            H, y = core.simulate(bits, 2, 2, "qpsk", 20.0, 1)
            with self.assertRaises(RuntimeError):
                core.ml_detect(H, y, "qpsk", 0.1, backend="cuda")

    def test_tb_decode_extrinsic_points_to_the_sent_bits(self):
        A, G, Qm = 100, 600, 2
        a = random_bits(2, A)
        coded = core.tb_encode(a, A, G, Qm)
        llr = np.where(coded == 1, -2.0, 2.0).astype(np.float32)
        decoded, results, ext = core.tb_decode(llr, A, G, Qm, extrinsic=True)
        np.testing.assert_array_equal(decoded, a)
        self.assertEqual(ext.shape, llr.shape)
        self.assertTrue(all(r["crc_ok"] for r in results))
        toward = np.where(coded == 1, -ext, ext)
        self.assertTrue(np.all(toward >= 0))  # 0 for the tail bits
        self.assertGreater(np.mean(toward > 2.0), 0.8)
        self.assertEqual(len(core.tb_decode(llr, A, G, Qm)), 2)  # without: as before

    def test_idd_receive_one_pass_equals_detect_then_decode(self):
        A, G, mod = 1000, 2048, "16qam"
        a = random_bits(4, A)
        coded = core.tb_encode(a, A, G, 4)
        H, y = core.simulate(coded.reshape(-1, 16), 4, 4, mod, 12.0, seed=5)
        n0 = 10 ** (-12.0 / 10)
        bits, results = core.idd_receive("kbest", H, y, n0, A, G, mod,
                                         outer_iterations=1, backend="cpu", k=16)
        self.assertEqual(bits.shape, (4, A))
        det = core.detector("kbest", 4, 4, mod, backend="cpu", k=16, policy="erase")
        llr = det.detect(H, y, n0).reshape(4, G)
        want, want_results = core.tb_decode(llr, A, G, 4, backend="cpu")
        np.testing.assert_array_equal(bits, want)
        self.assertEqual([r["crc_ok"] for r in results], [r["crc_ok"] for r in want_results])
        self.assertTrue(all(r["outer_iterations"] == 1 for r in results))
        with self.assertRaises(ValueError):  # takes no priors
            core.idd_receive("nway", H, y, n0, A, G, mod, backend="cpu")

    def test_empty_batch(self):
        H = np.zeros((0, 2, 2), dtype=np.complex64)
        y = np.zeros((0, 2), dtype=np.complex64)
        self.assertEqual(core.nway_detect(H, y, "qpsk", 1, 0.1).shape, (0, 4))
        self.assertEqual(core.qr_decomposition(H, y).shape, (0, 1, 4, 5))


if __name__ == "__main__":
    gr_unittest.run(qa_core_api)
