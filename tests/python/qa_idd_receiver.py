#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The idd_receiver block: a coded 4x4 16-QAM chain (tb_source -> channel ->
idd_receiver) decodes what was sent, more passes fail fewer blocks, every block
is tagged with its passes, a stream that ends mid-block counts the rest, and
bad parameters raise."""

from gnuradio import blocks, gr, gr_unittest

from mimo_flowgraph import run_with_timeout

from gnuradio import mimo_gpu

A, G = 1000, 2048          # rate 0.49; 4x4 16-QAM: 16 coded bits a received vector
VECTORS = G // 16          # received vectors per transport block


class qa_idd_receiver(gr_unittest.TestCase):

    def run_chain(self, snr_db, outer, blocks_sent=12, head=None, algorithm="mmse",
                  code="turbo", decoder_iterations=6):
        tb = gr.top_block()
        source = mimo_gpu.tb_source(A, G, 4, 4, 0, 7, 16, blocks_sent, "cpu", False,
                                    code=code)
        channel = mimo_gpu.mimo_channel_source(4, 4, "16qam", snr_db, 3, 1, 0, "cpu",
                                               4096, False, G)
        receiver = mimo_gpu.idd_receiver(algorithm, 4, 4, "16qam", A, G,
                                         outer_iterations=outer,
                                         turbo_iterations=decoder_iterations,
                                         backend="cpu", code=code)
        sent, got = blocks.vector_sink_b(A), blocks.vector_sink_b(A)
        tb.connect((source, 0), (channel, 0))
        tb.connect((channel, 0), (receiver, 0))
        if head is None:
            tb.connect((channel, 1), (receiver, 1))
        else:
            cut = blocks.head(gr.sizeof_gr_complex * 4, head)
            tb.connect((channel, 1), cut, (receiver, 1))
        tb.connect((source, 1), sent)
        tb.connect(receiver, got)
        run_with_timeout(tb)
        return receiver, sent, got

    def test_high_snr_decodes_every_block_in_one_pass(self):
        receiver, sent, got = self.run_chain(20.0, 3)
        self.assertEqual(receiver.blocks(), 12)
        self.assertEqual(receiver.crc_failures(), 0)
        self.assertEqual(receiver.passes(), 12)  # every CRC passed at once
        self.assertEqual(list(got.data()), list(sent.data()))
        tags = [t for t in got.tags() if str(t.key) == "idd_iterations"]
        self.assertEqual(sorted(t.offset for t in tags), list(range(12)))
        self.assertTrue(all(gr.pmt.to_long(t.value) == 1 for t in tags))
        self.assertEqual(receiver.active_backend(), "cpu")
        self.assertEqual(receiver.algorithm(), "mmse")

    def test_more_passes_fail_fewer_blocks(self):
        # 6 dB: one pass of soft MMSE fails about a third of the blocks; the
        # decoder's extrinsics as priors (MMSE-PIC) recover most of them.
        one, _, _ = self.run_chain(6.0, 1, blocks_sent=30)
        four, sent, got = self.run_chain(6.0, 4, blocks_sent=30)
        self.assertEqual(one.passes(), 30)
        self.assertGreater(one.crc_failures(), 3)
        self.assertLess(four.crc_failures(), one.crc_failures())
        self.assertGreater(four.passes(), 30)
        failed = {t.offset for t in got.tags() if str(t.key) == "crc_ok"}
        self.assertEqual(len(failed), four.crc_failures())
        sent, got = list(sent.data()), list(got.data())
        for b in range(30):  # a block that passed its CRC carries the sent bits
            if b not in failed:
                self.assertEqual(got[b * A:(b + 1) * A], sent[b * A:(b + 1) * A])

    def test_ldpc_transport_blocks(self):
        # code="ldpc": NR transport blocks (tb_source and the receiver alike),
        # 10 layered iterations; clean at 20 dB, and more passes fail fewer
        # blocks at 6 dB, every CRC pass carrying the sent bits.
        receiver, sent, got = self.run_chain(20.0, 3, code="ldpc", decoder_iterations=10)
        self.assertEqual(receiver.crc_failures(), 0)
        self.assertEqual(list(got.data()), list(sent.data()))
        one, _, _ = self.run_chain(6.0, 1, blocks_sent=30, code="ldpc", decoder_iterations=10)
        four, sent, got = self.run_chain(6.0, 4, blocks_sent=30, code="ldpc",
                                         decoder_iterations=10)
        self.assertGreater(one.crc_failures(), 3)
        self.assertLess(four.crc_failures(), one.crc_failures())
        failed = {t.offset for t in got.tags() if str(t.key) == "crc_ok"}
        sent, got = list(sent.data()), list(got.data())
        for b in range(30):
            if b not in failed:
                self.assertEqual(got[b * A:(b + 1) * A], sent[b * A:(b + 1) * A])
        with self.assertRaises(ValueError):
            mimo_gpu.idd_receiver("mmse", 4, 4, "16qam", A, G, backend="cpu", code="polar")

    def test_a_stream_that_ends_mid_block_counts_the_rest(self):
        receiver, _, got = self.run_chain(20.0, 2, blocks_sent=5, head=3 * VECTORS + 11)
        self.assertEqual(receiver.blocks(), 3)
        self.assertEqual(receiver.dropped_vectors(), 11)
        self.assertEqual(len(got.data()), 3 * A)

    def test_setters_and_bad_parameters(self):
        r = mimo_gpu.idd_receiver("kbest", 4, 4, "16qam", A, G, "k=8", backend="cpu")
        r.set_outer_iterations(5)
        self.assertEqual(r.outer_iterations(), 5)
        r.set_noise_var(0.25)
        self.assertEqual(r.noise_var(), 0.25)
        with self.assertRaises(ValueError):
            r.set_outer_iterations(0)
        with self.assertRaises(ValueError):
            r.set_noise_var(-1.0)
        with self.assertRaises(ValueError):  # takes no priors
            mimo_gpu.idd_receiver("nway", 4, 4, "16qam", A, G, backend="cpu")
        with self.assertRaises(ValueError):  # G not whole received vectors
            mimo_gpu.idd_receiver("mmse", 4, 4, "16qam", A, 2040, backend="cpu")
        with self.assertRaises(ValueError):  # a block is not whole channels
            mimo_gpu.idd_receiver("mmse", 4, 4, "16qam", A, G, symbols_per_channel=7,
                                  backend="cpu")
        with self.assertRaises(ValueError):
            mimo_gpu.idd_receiver("mmse", 4, 4, "16qam", A, G, outer_iterations=17,
                                  backend="cpu")
        with self.assertRaises(ValueError):
            mimo_gpu.idd_receiver("mmse", 4, 4, "16qam", A, G, parameters="bogus=1",
                                  backend="cpu")


if __name__ == "__main__":
    gr_unittest.run(qa_idd_receiver)
