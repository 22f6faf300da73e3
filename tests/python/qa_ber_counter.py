#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
import numpy as np
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import random_bits, run_with_timeout


class qa_ber_counter(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_counts_the_flipped_decisions(self):
        bits = random_bits(1001, 6)
        llr = np.where(bits == 0, 3.0, -3.0).astype(np.float32)  # positive LLR means 0
        flipped = [(0, 0), (17, 5), (1000, 3)]
        for item, bit in flipped:
            llr[item, bit] = -llr[item, bit]
        counter = mimo_gpu.ber_counter(6)
        self.tb.connect(blocks.vector_source_b(bits.ravel().tolist(), False, 6), (counter, 0))
        self.tb.connect(blocks.vector_source_f(llr.ravel().tolist(), False, 6), (counter, 1))
        run_with_timeout(self.tb)
        self.assertEqual(counter.bits(), 6006)
        self.assertEqual(counter.errors(), 3)
        self.assertAlmostEqual(counter.ber(), 3 / 6006)
        counter.reset()
        self.assertEqual(counter.bits(), 0)
        self.assertEqual(counter.ber(), 0.0)

    def test_hard_decisions_count_bits_and_items(self):
        sent = random_bits(50, 8)
        decided = sent.copy()
        decided[3, 0] ^= 1
        decided[3, 7] ^= 1
        decided[40, 2] ^= 1
        counter = mimo_gpu.ber_counter(8, False, "hard")
        self.tb.connect(blocks.vector_source_b(sent.ravel().tolist(), False, 8), (counter, 0))
        self.tb.connect(blocks.vector_source_b(decided.ravel().tolist(), False, 8), (counter, 1))
        run_with_timeout(self.tb)
        self.assertEqual(counter.errors(), 3)
        self.assertEqual(counter.items(), 50)
        self.assertEqual(counter.item_errors(), 2)

    def test_coded_chain_decodes_every_block(self):
        # tb_source -> channel (the coded bits in) -> detector -> tb_stream_decoder -> counter
        A, G = 200, 640  # 2x2 QPSK, two layers: 4 coded bits per received vector
        source = mimo_gpu.tb_source(A, G, 2, 2, 0, 5, 3, 9, "cpu", False)
        channel = mimo_gpu.mimo_channel_source(2, 2, "qpsk", 25.0, 5, 1, 0, "cpu", 1000, False, G)
        detector = mimo_gpu.mimo_detector("nway", 2, 2, "qpsk", backend="cpu")
        decoder = mimo_gpu.tb_stream_decoder(A, G, 2, 2, 0, 4, backend="cpu", max_blocks=4)
        counter = mimo_gpu.ber_counter(A, False, "hard")
        self.tb.connect((source, 0), (channel, 0))
        self.tb.connect((channel, 0), (detector, 0))
        self.tb.connect((channel, 1), (detector, 1))
        self.tb.connect((detector, 0), (decoder, 0))
        self.tb.connect((source, 1), (counter, 0))
        self.tb.connect((decoder, 0), (counter, 1))
        run_with_timeout(self.tb)
        self.assertEqual(decoder.blocks(), 9)
        self.assertEqual(decoder.crc_failures(), 0)
        self.assertEqual(decoder.dropped_llrs(), 0)
        self.assertEqual(counter.items(), 9)
        self.assertEqual(counter.item_errors(), 0)
        decoder.set_rv(2)
        self.assertEqual(decoder.rv(), 2)
        decoder.set_max_wait_ms(3)
        self.assertEqual(decoder.max_wait_ms(), 3)
        self.assertEqual(source.active_backend(), "cpu")

    def test_bad_parameters_raise(self):
        with self.assertRaises(ValueError):
            mimo_gpu.ber_counter(0)
        with self.assertRaises(ValueError):
            mimo_gpu.ber_counter(8, False, "soft")
        with self.assertRaises(ValueError):
            mimo_gpu.tb_source(200, 640, 2, 2, 0, 1, 0)
        with self.assertRaises(ValueError):
            mimo_gpu.tb_stream_decoder(200, 640, 2, 2, 0, 7)
        with self.assertRaises(ValueError):
            mimo_gpu.mimo_channel_source(2, 2, "qpsk", 10.0, 1, 1, 0, "cpu", 100, False, 6)


if __name__ == "__main__":
    gr_unittest.run(qa_ber_counter)
