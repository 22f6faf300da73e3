#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
import numpy as np
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import as_array, random_bits, run_with_timeout


class qa_nway_receiver(gr_unittest.TestCase):
    NR, NT, MOD, Q, PASSES = 4, 4, "64qam", 6, 4

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_loopback_equals_the_core_and_has_no_errors_at_30_db(self):
        bits = random_bits(1001, self.NT * self.Q, seed=21)
        src = blocks.vector_source_b(bits.ravel().tolist(), False, self.NT * self.Q)
        channel = mimo_gpu.mimo_channel(self.NR, self.NT, self.MOD, 30.0, 22)
        receiver = mimo_gpu.nway_receiver(self.NR, self.NT, self.MOD, self.PASSES, 1.0, 0.0, "auto", 77)
        llr_sink = blocks.vector_sink_f(self.NT * self.Q)
        counter = mimo_gpu.ber_counter(self.NT * self.Q)
        self.tb.connect(src, channel)
        self.tb.connect((channel, 0), (receiver, 0))
        self.tb.connect((channel, 1), (receiver, 1))
        self.tb.connect(receiver, llr_sink)
        self.tb.connect(receiver, (counter, 1))
        self.tb.connect(src, (counter, 0))
        run_with_timeout(self.tb)
        self.assertEqual(counter.bits(), 1001 * self.NT * self.Q)
        self.assertEqual(counter.errors(), 0)
        # The hierarchy is qr_decomposition -> nway_detector, N0 from the channel's tag.
        H, y = mimo_gpu.core.simulate(bits, self.NR, self.NT, self.MOD, 30.0, 22)
        n0 = mimo_gpu.core.noise_variance_from_snr_db(30.0)
        expected = mimo_gpu.core.nway_detect(H, y, self.MOD, self.PASSES, n0)
        llr = as_array(llr_sink, np.float32, self.NT * self.Q)
        np.testing.assert_allclose(llr, expected, rtol=1e-4, atol=1e-2)

    def test_setters_and_bad_parameters(self):
        receiver = mimo_gpu.nway_receiver(2, 2, "qpsk", 1, 0.1)
        receiver.set_noise_var(0.2)
        receiver.set_llr_clip(4.0)
        with self.assertRaises(ValueError):
            receiver.set_noise_var(-1.0)
        with self.assertRaises(ValueError):
            mimo_gpu.nway_receiver(2, 2, "qpsk", 3, 0.1)  # passes > nt
        with self.assertRaises(ValueError):
            mimo_gpu.nway_receiver(2, 2, "qam7", 1, 0.1)


if __name__ == "__main__":
    gr_unittest.run(qa_nway_receiver)
