#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
import numpy as np
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import as_array, noise_var_tag, random_bits, run_with_timeout


class qa_nway_detector(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_loopback_at_30_db_has_no_bit_errors(self):
        nr, nt, mod, q, passes = 4, 4, "16qam", 4, 2
        bits = random_bits(1001, nt * q)
        src = blocks.vector_source_b(bits.ravel().tolist(), False, nt * q)
        channel = mimo_gpu.mimo_channel(nr, nt, mod, 30.0, 11)
        qr = mimo_gpu.qr_decomposition(nr, nt, passes, "auto", 64)
        # N0 = 1 here on purpose: the channel's noise_var tag must set the real one.
        detector = mimo_gpu.nway_detector(nr, nt, mod, passes, 1.0, 0.0, "auto", 100)
        sink = blocks.vector_sink_f(nt * q)
        self.tb.connect(src, channel)
        self.tb.connect((channel, 0), (qr, 0))
        self.tb.connect((channel, 1), (qr, 1))
        self.tb.connect(qr, detector, sink)
        run_with_timeout(self.tb)
        llr = as_array(sink, np.float32, nt * q)
        self.assertEqual(llr.shape[0], 1001)
        self.assertEqual(int(np.sum((llr < 0) != bits)), 0)
        self.assertAlmostEqual(detector.noise_var(), 1e-3, places=7)

    def detect_items(self, items, noise_var, tags=(), llr_clip=0.0, max_batch=8400, nt=2, mod="qpsk", q=2):
        passes = items.shape[1]
        detector = mimo_gpu.nway_detector(nt, nt, mod, passes, noise_var, llr_clip, "auto", max_batch)
        src = blocks.vector_source_f(items.ravel().tolist(), False, items[0].size, list(tags))
        sink = blocks.vector_sink_f(nt * q)
        self.tb.connect(src, detector, sink)
        run_with_timeout(self.tb)
        return as_array(sink, np.float32, nt * q), detector

    def qr_items(self, count, snr_db=10.0):
        bits = random_bits(count, 4, seed=8)
        H, y = mimo_gpu.core.simulate(bits, 2, 2, "qpsk", snr_db, 9)
        return mimo_gpu.core.qr_decomposition(H, y, 2)

    def test_noise_var_tag_rescales_llrs_from_its_item_on(self):
        items = self.qr_items(1001)
        reference = mimo_gpu.core.nway_detect_qr(items, "qpsk", 0.1)
        # A tag doubling N0 at item 400: LLRs scale as 1/N0, so they halve from there.
        llr, detector = self.detect_items(items, 0.1, [noise_var_tag(400, 0.2)], max_batch=33)
        self.assertEqual(llr.shape[0], 1001)
        np.testing.assert_allclose(llr[:400], reference[:400], rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(llr[400:], reference[400:] / 2, rtol=1e-5, atol=1e-4)
        self.assertAlmostEqual(detector.noise_var(), 0.2, places=6)

    def test_llr_clip(self):
        items = self.qr_items(500, snr_db=25.0)
        llr, detector = self.detect_items(items, 0.01, llr_clip=2.5)
        self.assertEqual(llr.shape[0], 500)
        self.assertLessEqual(float(np.max(np.abs(llr))), 2.5)
        self.assertGreater(float(np.max(np.abs(llr))), 2.4)  # the clip is reached at 25 dB
        self.assertAlmostEqual(detector.llr_clip(), 2.5)

    def test_setters(self):
        detector = mimo_gpu.nway_detector(2, 2, "qpsk", 1, 0.5)
        self.assertAlmostEqual(detector.llr_clip(), 8.0)  # the default the decoder does well with
        detector.set_noise_var(0.25)
        self.assertAlmostEqual(detector.noise_var(), 0.25)
        detector.set_llr_clip(4.0)
        self.assertAlmostEqual(detector.llr_clip(), 4.0)
        with self.assertRaises(ValueError):
            detector.set_noise_var(0.0)
        with self.assertRaises(ValueError):
            detector.set_llr_clip(-1.0)
        self.assertIn(detector.active_backend(), ("cpu", "cuda"))

    def test_bad_parameters_raise(self):
        with self.assertRaises(ValueError):
            mimo_gpu.nway_detector(4, 2, "qpsk", 3, 0.1)  # passes > nt
        with self.assertRaises(ValueError):
            mimo_gpu.nway_detector(4, 2, "qpsk", 0, 0.1)
        with self.assertRaises(ValueError):
            mimo_gpu.nway_detector(2, 4, "qpsk", 1, 0.1)  # nt > nr
        with self.assertRaises(ValueError):
            mimo_gpu.nway_detector(4, 2, "32qam", 1, 0.1)
        with self.assertRaises(ValueError):
            mimo_gpu.nway_detector(4, 2, "qpsk", 1, -0.1)  # N0 <= 0


if __name__ == "__main__":
    gr_unittest.run(qa_nway_detector)
