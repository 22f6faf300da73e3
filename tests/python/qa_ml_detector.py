#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
import numpy as np
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import as_array, noise_var_tag, random_bits, run_with_timeout


class qa_ml_detector(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_ml(self, H, y, nt, mod, q, noise_var, y_tags=(), max_batch=8400):
        nr = H.shape[1]
        detector = mimo_gpu.ml_detector(nr, nt, mod, noise_var, "auto", max_batch)
        sink = blocks.vector_sink_f(nt * q)
        self.tb.connect(blocks.vector_source_c(H.ravel().tolist(), False, nr * nt), (detector, 0))
        self.tb.connect(blocks.vector_source_c(y.ravel().tolist(), False, nr, list(y_tags)), (detector, 1))
        self.tb.connect(detector, sink)
        run_with_timeout(self.tb)
        return as_array(sink, np.float32, nt * q), detector

    def test_llr_signs_are_the_bits_at_30_db(self):
        bits = random_bits(1001, 2 * 4)
        H, y = mimo_gpu.core.simulate(bits, 2, 2, "16qam", 30.0, 4)
        llr, detector = self.run_ml(H, y, 2, "16qam", 4, 1e-3, max_batch=99)
        self.assertEqual(llr.shape[0], 1001)
        self.assertEqual(int(np.sum((llr < 0) != bits)), 0)
        np.testing.assert_allclose(llr, mimo_gpu.core.ml_detect(H, y, "16qam", 1e-3), rtol=1e-5, atol=1e-3)

    def test_noise_var_tag_on_y_rescales_llrs(self):
        bits = random_bits(600, 2 * 2)
        H, y = mimo_gpu.core.simulate(bits, 2, 2, "qpsk", 8.0, 2)
        reference = mimo_gpu.core.ml_detect(H, y, "qpsk", 0.5)
        llr, detector = self.run_ml(H, y, 2, "qpsk", 2, 0.5, [noise_var_tag(250, 1.0)], max_batch=64)
        np.testing.assert_allclose(llr[:250], reference[:250], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(llr[250:], reference[250:] / 2, rtol=1e-5, atol=1e-5)
        self.assertAlmostEqual(detector.noise_var(), 1.0)

    def test_loopback_with_the_channel_block(self):
        nr, nt, mod, q = 4, 2, "64qam", 6
        bits = random_bits(1001, nt * q, seed=12)
        src = blocks.vector_source_b(bits.ravel().tolist(), False, nt * q)
        channel = mimo_gpu.mimo_channel(nr, nt, mod, 30.0, 13)
        detector = mimo_gpu.ml_detector(nr, nt, mod, 1.0)
        counter = mimo_gpu.ber_counter(nt * q)
        self.tb.connect(src, channel)
        self.tb.connect((channel, 0), (detector, 0))
        self.tb.connect((channel, 1), (detector, 1))
        self.tb.connect(detector, (counter, 1))
        self.tb.connect(src, (counter, 0))
        run_with_timeout(self.tb)
        self.assertEqual(counter.bits(), 1001 * nt * q)
        self.assertEqual(counter.errors(), 0)

    def test_non_finite_y_ends_the_stream_without_hanging(self):
        bits = random_bits(500, 4)
        H, y = mimo_gpu.core.simulate(bits, 2, 2, "qpsk", 10.0, 2)
        y[123, 0] = np.inf
        llr, _ = self.run_ml(H, y, 2, "qpsk", 2, 0.1, max_batch=10)
        self.assertLessEqual(llr.shape[0], 123)

    def test_bad_parameters_raise(self):
        with self.assertRaises(ValueError):
            mimo_gpu.ml_detector(4, 4, "256qam", 0.1)  # 2^32 candidates
        with self.assertRaises(ValueError):
            mimo_gpu.ml_detector(2, 3, "qpsk", 0.1)  # nt > nr
        with self.assertRaises(ValueError):
            mimo_gpu.ml_detector(2, 2, "qpsk", 0.0)
        with self.assertRaises(ValueError):
            mimo_gpu.ml_detector(2, 2, "bpsk", 0.1)


if __name__ == "__main__":
    gr_unittest.run(qa_ml_detector)
