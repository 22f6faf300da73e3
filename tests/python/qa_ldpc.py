#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""mimo_gpu.core's NR LDPC functions on numpy arrays (issue 27, in progress):
encoder and decoder round trips, the transport-block chain, HARQ soft buffers
kept by the caller, bad input."""

import numpy as np
from gnuradio import gr_unittest

from gnuradio import mimo_gpu

core = mimo_gpu.core


def bpsk_llr(bits, snr_db, rng):
    """BPSK (0 -> +1) over AWGN of variance 10^(-snr/10): LLRs 2 y / sigma^2."""
    sigma2 = 10.0 ** (-snr_db / 10.0)
    y = 1.0 - 2.0 * bits + rng.normal(0.0, np.sqrt(sigma2), bits.shape)
    return (2.0 * y / sigma2).astype(np.float32)


class qa_ldpc(gr_unittest.TestCase):

    def test_encode_decode_round_trip(self):
        rng = np.random.default_rng(5)
        for bg, zc in ((1, 8), (2, 20)):
            K = (22 if bg == 1 else 10) * zc
            c = rng.integers(0, 2, (3, K), dtype=np.uint8)
            x = core.ldpc_encode(c, bg, zc, full=True)
            d = core.ldpc_encode(c, bg, zc)
            self.assertEqual(x.shape, (3, (68 if bg == 1 else 52) * zc))
            np.testing.assert_array_equal(x[:, :K], c)       # systematic
            np.testing.assert_array_equal(d, x[:, 2 * zc:])  # the first 2 Zc not sent
            llr = np.where(x == 0, 6.0, -6.0).astype(np.float32)
            llr[:, :2 * zc] = 0.0                            # punctured
            for algorithm in ("normalized-min-sum", "offset-min-sum", "sum-product"):
                bits, results = core.ldpc_decode(llr, bg, zc, algorithm=algorithm,
                                                  backend="cpu")
                np.testing.assert_array_equal(bits, c)
                self.assertTrue(all(r["parity_ok"] and r["iterations"] == 1
                                    for r in results))
        self.assertEqual(len(core.ldpc_lifting_sizes()), 51)

    def test_transport_block_chain_and_harq(self):
        rng = np.random.default_rng(11)
        seg = core.nr_segmentation(8456, 16896, Qm=4)
        self.assertEqual((seg["C"], seg["Zc"], seg["K"], seg["F"]), (2, 208, 4576, 312))
        self.assertEqual(sum(seg["E"]), 16896)
        a = rng.integers(0, 2, (2, 8456), dtype=np.uint8)
        g = core.nr_tb_encode(a, 8456, 16896, Qm=4)
        self.assertEqual(g.shape, (2, 16896))
        out, results = core.nr_tb_decode(bpsk_llr(g, 10.0, rng), 8456, 16896, Qm=4,
                                         backend="cpu")
        np.testing.assert_array_equal(out, a)
        self.assertTrue(all(r["crc_ok"] and r["code_blocks_crc_ok"] == 2 for r in results))
        # HARQ at rate 0.92 and 3 dB: one transmission fails, rv 2 added into the
        # caller's soft buffers recovers the blocks.
        A, G, count = 3840, 4224, 6
        seg = core.nr_segmentation(A, G, base_graph=1)
        soft = np.zeros(count * seg["soft_buffer"], np.float32)
        a = rng.integers(0, 2, (count, A), dtype=np.uint8)
        ok = []
        for rv in (0, 2):
            g = core.nr_tb_encode(a, A, G, rv=rv, base_graph=1)
            out, results = core.nr_tb_decode(bpsk_llr(g, 3.0, rng), A, G, rv=rv,
                                             base_graph=1, soft=soft, backend="cpu")
            ok.append(sum(r["crc_ok"] and np.array_equal(out[i], a[i])
                          for i, r in enumerate(results)))
        self.assertLess(ok[0], count // 2)
        self.assertEqual(ok[1], count)
        self.assertTrue(np.any(soft != 0.0))

    def test_bad_input_raises(self):
        with self.assertRaises(ValueError):
            core.ldpc_encode(np.zeros(100, np.uint8), 1, 8)       # not K bits
        with self.assertRaises(ValueError):
            core.ldpc_encode(np.full(176, 2, np.uint8), 1, 8)     # not bits
        with self.assertRaises(ValueError):
            core.ldpc_encode(np.zeros(176, np.uint8), 1, 17)      # no such Zc
        with self.assertRaises(ValueError):
            core.ldpc_decode(np.zeros(544, np.float32), 1, 8, algorithm="viterbi")
        bad = np.zeros(544, np.float32)
        bad[9] = np.nan
        with self.assertRaises(ValueError):
            core.ldpc_decode(bad, 1, 8, backend="cpu")
        with self.assertRaises(ValueError):
            core.nr_tb_encode(np.zeros(100, np.uint8), 100, 601)  # G not whole symbols
        with self.assertRaises(ValueError):                     # soft buffer of the wrong size
            core.nr_tb_decode(np.zeros(600, np.float32), 100, 600,
                              soft=np.zeros(10, np.float32), backend="cpu")
        with self.assertRaises(ValueError):                     # soft buffer of the wrong type
            core.nr_tb_decode(np.zeros(600, np.float32), 100, 600,
                              soft=np.zeros(1000), backend="cpu")
        # All-zero LLRs: no information, never a CRC pass.
        _, results = core.nr_tb_decode(np.zeros(600, np.float32), 100, 600, backend="cpu")
        self.assertFalse(results[0]["crc_ok"])
        self.assertEqual(results[0]["code_blocks_no_information"], 1)


if __name__ == "__main__":
    gr_unittest.run(qa_ldpc)
