#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""mimo_gpu.core's LTE turbo code on numpy arrays: encoder, QPP, CRC, rate
matching, decoder (fixed and mixed K), transport blocks, and ValueError on bad
shapes."""
import numpy as np
from gnuradio import gr_unittest

from gnuradio import mimo_gpu

core = mimo_gpu.core


def bits_of(shape, seed):
    return np.random.default_rng(seed).integers(0, 2, shape, dtype=np.uint8)


def bpsk_llr(bits, seed=0, sigma=0.5):
    noise = np.random.default_rng(seed).normal(0.0, sigma, np.shape(bits))
    return (8.0 * (1.0 - 2.0 * np.asarray(bits, dtype=np.float32)) + noise).astype(np.float32)


class qa_turbo_core_api(gr_unittest.TestCase):

    def test_block_sizes_and_qpp(self):
        sizes = core.code_block_sizes()
        self.assertEqual((len(sizes), sizes[0], sizes[-1]), (188, 40, 6144))
        for K in (40, 1008, 6144):
            pi = core.qpp_permutation(K)
            self.assertEqual(pi.dtype, np.int32)
            np.testing.assert_array_equal(np.sort(pi), np.arange(K))
        # K = 40: f1 = 3, f2 = 10 (table 5.1.3-3).
        i = np.arange(40)
        np.testing.assert_array_equal(core.qpp_permutation(40), (3 * i + 10 * i * i) % 40)

    def test_crc(self):
        bits = bits_of(100, 1)
        for crc, L in (("crc24a", 24), ("crc24b", 24), ("crc16", 16), ("crc8", 8)):
            with_crc = core.crc_attach(bits, crc)
            self.assertEqual(with_crc.size, 100 + L)
            np.testing.assert_array_equal(with_crc[:100], bits)
            self.assertTrue(core.crc_check(with_crc, crc))
            with_crc[3] ^= 1
            self.assertFalse(core.crc_check(with_crc, crc))

    def test_encoder_is_systematic_and_decodes(self):
        for K in (40, 512, 6144):
            bits = bits_of(K, K)
            d = core.turbo_encode(bits)
            self.assertEqual((d.shape, d.dtype), ((3, K + 4), np.uint8))
            np.testing.assert_array_equal(d[0, :K], bits)
            decoded, results = core.turbo_decode(bpsk_llr(d)[None], backend="cpu")
            self.assertEqual(decoded.shape, (1, K))
            np.testing.assert_array_equal(decoded[0], bits)
            self.assertEqual(len(results), 1)
            self.assertIsNone(results[0]["crc_ok"])  # no CRC was checked: None, not False

    def test_mixed_k_batch_with_crc_and_app_llrs(self):
        sizes = [40, 6144, 1024, 40]
        blocks = [core.crc_attach(bits_of(k - 24, k + 1), "crc24b") for k in sizes]
        llr = [bpsk_llr(core.turbo_encode(b), seed=n) for n, b in enumerate(blocks)]
        decoded, results, app = core.turbo_decode(llr, crc="crc24b", app_llr=True, backend="cpu")
        self.assertEqual([d.size for d in decoded], sizes)
        for b, d, a, r in zip(blocks, decoded, app, results):
            np.testing.assert_array_equal(d, b)
            np.testing.assert_array_equal(a < 0, b == 1)
            self.assertTrue(r["crc_ok"])
            self.assertLessEqual(r["iterations"], 6)

    def test_rate_matching_round_trip(self):
        K, E = 1024, 2000
        bits = bits_of(K, 3)
        d = core.turbo_encode(bits)
        for rv in range(4):
            e = core.rate_match(d, E, rv)
            self.assertEqual(e.shape, (E,))
            dematched = core.rate_dematch(bpsk_llr(e, rv), K, rv)
            self.assertEqual((dematched.shape, dematched.dtype), ((3, K + 4), np.float32))
            decoded, _ = core.turbo_decode(dematched[None], backend="cpu")
            np.testing.assert_array_equal(decoded[0], bits)

    def test_transport_blocks(self):
        A, G, Qm = 7000, 24000, 4
        seg = core.segmentation(A + 24)
        self.assertEqual(seg["C"], 2)
        self.assertEqual(len(seg["K"]), 2)
        a = bits_of((3, A), 5)
        f = core.tb_encode(a, A, G, Qm)
        self.assertEqual(f.shape, (3, G))
        np.testing.assert_array_equal(core.tb_encode(a[1], A, G, Qm), f[1])
        llr = bpsk_llr(f, 6)
        llr[2] = -llr[2]
        decoded, results = core.tb_decode(llr, A, G, Qm, backend="cpu")
        self.assertEqual(decoded.shape, (3, A))
        np.testing.assert_array_equal(decoded[:2], a[:2])
        self.assertEqual([r["crc_ok"] for r in results], [True, True, False])
        self.assertEqual(results[0]["code_blocks"], 2)
        self.assertEqual(results[0]["code_blocks_crc_ok"], 2)

    def test_no_pass_without_information(self):
        # All-zero LLRs decode to zeros, whose CRC passes: not a pass.
        decoded, results = core.turbo_decode(np.zeros((2, 3, 1028), np.float32), crc="crc24b",
                                             iterations=3, backend="cpu")
        np.testing.assert_array_equal(decoded, 0)
        self.assertEqual(results, [{"iterations": 3, "crc_ok": False, "no_information": True}] * 2)
        # K - 1 non-zero LLRs: still no information; every LLR: a pass. K spread
        # thinly leave some bits ties (APP exactly 0): a pass only without any.
        for non_zero in (1023, 1024, 3 * 1028):
            llr = np.zeros(3 * 1028, np.float32)
            llr[[(3 * i) % llr.size + (3 * i) // llr.size for i in range(non_zero)]] = 4.0
            _, results = core.turbo_decode(llr.reshape(1, 3, 1028), crc="crc24b", backend="cpu")
            self.assertEqual(results[0]["crc_ok"], not results[0]["no_information"], non_zero)
            if non_zero < 1024:
                self.assertTrue(results[0]["no_information"])
            if non_zero == 3 * 1028:
                self.assertTrue(results[0]["crc_ok"])
        A, G, Qm = 7000, 18000, 2
        a, results = core.tb_decode(np.zeros(G, np.float32), A, G, Qm, iterations=2, backend="cpu")
        np.testing.assert_array_equal(a, 0)
        self.assertEqual(results, [{"crc_ok": False, "code_blocks": 2, "code_blocks_crc_ok": 0,
                                    "code_blocks_no_information": 2, "iterations": 2}])

    def test_huge_llrs_and_windows_are_bounded(self):
        bits = core.crc_attach(bits_of(1000, 12), "crc24b")  # K = 1024
        sign = 1.0 - 2.0 * core.turbo_encode(bits).astype(np.float32)
        ref, ref_results, ref_app = core.turbo_decode((1.0e4 * sign)[None], crc="crc24b", app_llr=True,
                                                      backend="cpu")
        decoded, results, app = core.turbo_decode((3.0e38 * sign)[None], crc="crc24b", app_llr=True,
                                                  backend="cpu")
        np.testing.assert_array_equal(decoded[0], bits)
        self.assertTrue(np.all(np.isfinite(app)))
        np.testing.assert_array_equal(app, ref_app)  # saturated to +-1e4: the same decoding
        self.assertEqual(results, ref_results)
        self.assertTrue(results[0]["crc_ok"])
        llr = bpsk_llr(core.turbo_encode(bits), seed=4, sigma=1.0)[None]
        one, _, one_app = core.turbo_decode(llr, window=1024, app_llr=True, backend="cpu")
        big, _, big_app = core.turbo_decode(llr, window=2**31 - 1, app_llr=True, backend="cpu")
        np.testing.assert_array_equal(big, one)
        np.testing.assert_array_equal(big_app, one_app)
        np.testing.assert_array_equal(big[0], bits)
        with self.assertRaisesRegex(ValueError, "smallest G for this A, Qm = 2 and NL = 1 is 124"):
            core.tb_decode(np.zeros(2, np.float32), 100, 2, 2)

    def test_bad_input_raises_value_error(self):
        with self.assertRaises(ValueError):
            core.turbo_encode(np.zeros(41, np.uint8))
        with self.assertRaises(ValueError):
            core.turbo_encode(np.zeros((2, 40), np.uint8))
        with self.assertRaises(ValueError):
            core.qpp_permutation(6145)
        with self.assertRaises(ValueError):
            core.turbo_decode(np.zeros((2, 3, 45), np.float32))  # K = 41
        with self.assertRaises(ValueError):
            core.turbo_decode(np.zeros((2, 132), np.float32))  # not (B, 3, K+4)
        with self.assertRaises(ValueError):
            core.turbo_decode([np.zeros((3, 44), np.float32), np.zeros((2, 44), np.float32)])
        nan = np.zeros((1, 3, 44), np.float32)
        nan[0, 1, 5] = np.nan
        with self.assertRaises(ValueError):
            core.turbo_decode(nan)
        with self.assertRaises(ValueError):
            core.turbo_decode(np.zeros((1, 3, 44), np.float32), algorithm="bcjr")
        with self.assertRaises(ValueError):
            core.turbo_decode(np.zeros((1, 3, 44), np.float32), crc="crc32")
        with self.assertRaises(ValueError):
            core.rate_match(np.zeros((2, 44), np.uint8), 100, 0)
        with self.assertRaises(ValueError):
            core.rate_match(np.zeros((3, 44), np.uint8), 100, 4)  # rv
        with self.assertRaises(ValueError):
            core.rate_dematch(np.zeros((2, 50), np.float32), 40)
        with self.assertRaises(ValueError):
            core.crc_attach(np.zeros((2, 5), np.uint8), "crc24a")
        with self.assertRaises(ValueError):
            core.tb_encode(np.zeros(99, np.uint8), 100, 600, 2)
        with self.assertRaises(ValueError):
            core.tb_encode(np.full(100, 2, np.uint8), 100, 600, 2)
        with self.assertRaises(ValueError):
            core.tb_decode(np.zeros((2, 599), np.float32), 100, 600, 2)
        with self.assertRaises(ValueError):
            core.tb_decode(np.zeros((2, 600), np.float32), 100, 600, 3)  # Qm


if __name__ == "__main__":
    gr_unittest.run(qa_turbo_core_api)
