#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The one MIMO detector block (every registered family) and the core's
detector objects (mimo_gpu.core.detector)."""
import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import as_array, noise_var_tag, random_bits, run_with_timeout

core = mimo_gpu.core


class qa_mimo_detector(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_block(self, algorithm, H, y, nt, mod, q, noise_var, parameters="", S=1, y_tags=(),
                  max_batch=8400):
        nr = H.shape[1]
        det = mimo_gpu.mimo_detector(algorithm, nr, nt, mod, parameters, noise_var, S, "auto", max_batch)
        sink = blocks.vector_sink_f(nt * q)
        self.tb.connect(blocks.vector_source_c(H.ravel().tolist(), False, nr * nt), (det, 0))
        self.tb.connect(blocks.vector_source_c(y.ravel().tolist(), False, nr, list(y_tags)), (det, 1))
        self.tb.connect(det, sink)
        run_with_timeout(self.tb)
        return as_array(sink, np.float32, nt * q), det

    def test_every_family_in_the_block_equals_its_core_object(self):
        bits = random_bits(501, 2 * 4)
        H, y = core.simulate(bits, 2, 2, "16qam", 12.0, 4)
        for name in mimo_gpu.mimo_detector.algorithms():
            self.tb = gr.top_block()
            llr, det = self.run_block(name, H, y, 2, "16qam", 4, 0.05, max_batch=77)
            self.assertEqual(det.algorithm(), name)
            reference = core.detector(name, 2, 2, "16qam").detect(H, y, 0.05)
            np.testing.assert_allclose(llr, reference, rtol=1e-6, atol=1e-6, err_msg=name)

    def test_parameters_reach_the_family_and_a_settable_one_changes(self):
        bits = random_bits(300, 4 * 4)
        H, y = core.simulate(bits, 4, 4, "16qam", 10.0, 5)
        llr, det = self.run_block("nway", H, y, 4, "16qam", 4, 0.1, "passes=2,llr_clip=3")
        self.assertEqual(det.parameter("passes"), 2)
        self.assertLessEqual(float(np.max(np.abs(llr))), 3.0)
        np.testing.assert_allclose(llr, core.nway_detect(H, y, "16qam", 2, 0.1, 3.0), rtol=1e-6, atol=1e-6)
        det.set_parameter("llr_clip", 5.0)
        self.assertEqual(det.parameter("llr_clip"), 5.0)
        with self.assertRaises(ValueError):
            det.set_parameter("passes", 3)

    def test_noise_var_tag_applies_from_its_channel(self):
        bits = random_bits(600, 2 * 2)
        H, y = core.simulate(bits, 2, 2, "qpsk", 8.0, 2)
        reference = core.detector("mtt", 2, 2, "qpsk").detect(H, y, 0.5)
        llr, det = self.run_block("mtt", H, y, 2, "qpsk", 2, 0.5, y_tags=[noise_var_tag(250, 1.0)], max_batch=64)
        np.testing.assert_allclose(llr[:250], reference[:250], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(llr[250:], reference[250:] / 2, rtol=1e-5, atol=1e-5)
        self.assertAlmostEqual(det.noise_var(), 1.0)

    def test_symbols_sharing_a_channel(self):
        S, C = 4, 90
        bits = random_bits(C * S, 2 * 4, seed=3)
        H_all, y = core.simulate(bits, 2, 2, "16qam", 15.0, 6)
        H = H_all[::S].copy()  # y was made with other matrices: compare with the core, not with the bits
        llr, _ = self.run_block("ot", H, y, 2, "16qam", 4, 0.05, S=S, max_batch=50)
        self.assertEqual(llr.shape, (C * S, 8))
        det = core.detector("ot", 2, 2, "16qam")
        shared = det.detect(H, y.reshape(C, S, 2), 0.05)
        self.assertEqual(shared.shape, (C, S, 8))
        np.testing.assert_allclose(llr, shared.reshape(-1, 8), rtol=1e-6, atol=1e-6)
        repeated = det.detect(np.repeat(H, S, axis=0), y, 0.05)
        np.testing.assert_array_equal(shared.reshape(-1, 8), repeated)

    def test_noise_var_tag_inside_a_channel_applies_from_its_first_symbol(self):
        S, C = 4, 30
        bits = random_bits(C * S, 2 * 2, seed=4)
        H_all, y = core.simulate(bits, 2, 2, "qpsk", 6.0, 7)
        H = H_all[::S].copy()
        det = mimo_gpu.mimo_detector("mtt", 2, 2, "qpsk", "", 0.5, S, "auto", 40)
        sink = blocks.vector_sink_f(4)
        self.tb.connect(blocks.vector_source_c(H.ravel().tolist(), False, 4), (det, 0))
        self.tb.connect(blocks.vector_source_c(y.ravel().tolist(), False, 2, [noise_var_tag(10, 1.0)]), (det, 1))
        self.tb.connect(det, sink)
        run_with_timeout(self.tb)
        llr = as_array(sink, np.float32, 4)
        reference = core.detector("mtt", 2, 2, "qpsk").detect(H, y.reshape(C, S, 2), 0.5).reshape(-1, 4)
        # The tag at y item 10 falls in channel 2 (items 8..11): N0 = 1 from item 8 on.
        np.testing.assert_allclose(llr[:8], reference[:8], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(llr[8:], reference[8:] / 2, rtol=1e-5, atol=1e-5)
        # y's tags reach the output at their own offsets; H's are not copied.
        self.assertEqual([t.offset for t in sink.tags()], [10])

    def test_bad_noise_var_tags_are_ignored_and_the_last_good_value_kept(self):
        # 1e-50 and 1e300 are fine doubles but not usable floats; a string is no number.
        bits = random_bits(400, 2 * 2, seed=8)
        H, y = core.simulate(bits, 2, 2, "qpsk", 8.0, 3)
        tags = [noise_var_tag(100, 1.0), noise_var_tag(200, 1e-50), noise_var_tag(250, 1e300)]
        bad = gr.tag_t()
        bad.offset, bad.key, bad.value = 300, pmt.intern("noise_var"), pmt.intern("abc")
        llr, det = self.run_block("mtt", H, y, 2, "qpsk", 2, 0.5, y_tags=tags + [bad], max_batch=64)
        self.assertEqual(llr.shape, (400, 4))  # the stream went on
        reference = core.detector("mtt", 2, 2, "qpsk").detect(H, y, 0.5)
        np.testing.assert_allclose(llr[:100], reference[:100], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(llr[100:], reference[100:] / 2, rtol=1e-5, atol=1e-5)
        self.assertAlmostEqual(det.noise_var(), 1.0)

    def test_bad_problems_are_erased_tagged_and_counted(self):
        bits = random_bits(500, 2 * 4, seed=9)
        H, y = core.simulate(bits, 2, 2, "16qam", 12.0, 8)
        H[10, 0, 1] = np.nan
        H[20] = 0
        y[30, 1] = np.inf
        for name in mimo_gpu.mimo_detector.algorithms():
            expected = [(10, "non_finite_input"), (20, "singular_channel"), (30, "non_finite_input")]
            if not core.detector(name, 2, 2, "16qam").capabilities["erases_rank_deficient"]:
                expected.remove((20, "singular_channel"))  # regularised (MMSE): H = 0 is detected
            self.tb = gr.top_block()
            det = mimo_gpu.mimo_detector(name, 2, 2, "16qam", "", 0.05, 1, "auto", 64)  # policy erase
            sink = blocks.vector_sink_f(8)
            self.tb.connect(blocks.vector_source_c(H.ravel().tolist(), False, 4), (det, 0))
            self.tb.connect(blocks.vector_source_c(y.ravel().tolist(), False, 2), (det, 1))
            self.tb.connect(det, sink)
            run_with_timeout(self.tb)
            llr = as_array(sink, np.float32, 8)
            self.assertEqual(llr.shape, (500, 8), name)
            self.assertEqual(det.erased_problems(), len(expected), name)
            tags = sorted((t.offset, pmt.symbol_to_string(t.value)) for t in sink.tags()
                          if pmt.symbol_to_string(t.key) == "erasure")
            self.assertEqual(tags, expected, name)
            core_det = core.detector(name, 2, 2, "16qam", policy="erase")
            reference, report = core_det.detect(H, y, 0.05, report=True)
            self.assertEqual(report["erased"], len(expected))
            self.assertEqual(report["first_erased"], expected)
            np.testing.assert_array_equal(llr[[item for item, _ in expected]], 0.0)
            # Erased or not, H = 0 carries no information: LLRs (near) 0 all the same.
            np.testing.assert_allclose(llr[20], 0.0, atol=1e-3, err_msg=name)
            np.testing.assert_allclose(llr, reference, rtol=1e-6, atol=1e-6, err_msg=name)
            core_det.policy = "stop"
            with self.assertRaises(ValueError):
                core_det.detect(H, y, 0.05)

    def test_bad_block_arguments_raise_value_error(self):
        for args in (("sphere", 2, 2, "qpsk"), ("ml", 2, 2, "qpsk", "passes=2"), ("nway", 2, 2, "qpsk", "passes=3"),
                     ("mtt", 2, 2, "256qam"), ("mtt", 16, 16, "qpsk"), ("nway", 2, 2, "qpsk", "passes"),
                     ("mtt", 2, 2, "qpsk", "", 1.0, 0), ("mtt", 2, 2, "qpsk", "", 1e-50)):
            with self.assertRaises(ValueError, msg=str(args)):
                mimo_gpu.mimo_detector(*args)
        for args, text in ((("nway", 2, 2, "qpsk", "", 0.1, 2**31 - 1), "symbols_per_channel must be 1..1048576"),
                           (("nway", 2, 2, "qpsk", "passes=2,passes=2"), "'passes' is given twice")):
            with self.assertRaises(ValueError, msg=str(args)) as caught:
                mimo_gpu.mimo_detector(*args)
            self.assertIn(text, str(caught.exception))
        try:
            mimo_gpu.mimo_detector("sphere", 2, 2, "qpsk")
        except ValueError as e:
            for name in mimo_gpu.mimo_detector.algorithms():
                self.assertIn(name, str(e))


class qa_core_detector(gr_unittest.TestCase):

    def test_objects_keep_state_and_describe_themselves(self):
        det = core.detector("nway", 4, 4, "16qam", passes=2)
        self.assertEqual((det.name, det.nr, det.nt, det.modulation), ("nway", 4, 4, "16qam"))
        self.assertEqual(det.parameters, {"passes": 2.0, "llr_clip": 8.0})
        self.assertIn(det.backend, ("cpu", "cuda"))
        self.assertEqual(det.llrs_per_problem, 16)
        bits = random_bits(200, 16)
        H, y = core.simulate(bits, 4, 4, "16qam", 30.0, 1)
        for _ in range(3):  # the same object, many calls
            llr = det.detect(H, y, 1e-3)
            self.assertEqual(int(np.sum((llr < 0) != bits)), 0)
        names = [f["name"] for f in core.detector_families()]
        self.assertEqual(names, core.detector_names())
        for family in ("nway", "ml", "mtt", "ot"):
            self.assertIn(family, names)
        mtt = [f for f in core.detector_families() if f["name"] == "mtt"][0]
        self.assertEqual(mtt["capabilities"]["modulations"], ["qpsk", "16qam", "64qam"])

    def test_mtt_two_streams_equal_ml(self):
        bits = random_bits(300, 2 * 6, seed=8)
        H, y = core.simulate(bits, 2, 2, "64qam", 14.0, 9)
        np.testing.assert_allclose(core.detector("mtt", 2, 2, "64qam").detect(H, y, 0.04),
                                   core.ml_detect(H, y, "64qam", 0.04), rtol=1e-4, atol=1e-3)

    def test_int8_output_has_the_stated_scale(self):
        bits = random_bits(100, 4)
        H, y = core.simulate(bits, 2, 2, "qpsk", 5.0, 2)
        det = core.detector("ml", 2, 2, "qpsk")
        llr = det.detect(H, y, 0.3)
        q = det.detect(H, y, 0.3, int8_scale=4.0)
        self.assertEqual(q.dtype, np.int8)
        np.testing.assert_array_equal(q, np.clip(np.rint(llr * 4.0), -127, 127).astype(np.int8))

    def test_bad_input_raises_value_error(self):
        det = core.detector("mtt", 2, 2, "qpsk")
        bits = random_bits(10, 4)
        H, y = core.simulate(bits, 2, 2, "qpsk", 5.0, 2)
        with self.assertRaises(ValueError):
            core.detector("mtt", 2, 2, "qpsk", passes=2)  # no such parameter
        with self.assertRaises(ValueError):
            core.detector("sphere", 2, 2, "qpsk")  # no such family
        with self.assertRaises(ValueError):
            det.detect(H, y, 0.1, priors=np.zeros((10, 4), np.float32))  # takes no priors
        with self.assertRaises(ValueError):
            det.detect(H[:5], y, 0.1)  # C differs
        with self.assertRaises(ValueError):
            det.detect(H, y[:, :1], 0.1)  # nr differs
        with self.assertRaises(ValueError):
            det.detect(H, y, 0.0)
        with self.assertRaises(ValueError):
            det.detect(H, y, 1e-50)
        H[3, 0, 0] = np.nan
        with self.assertRaisesRegex(ValueError, "problem 3"):
            det.detect(H, y, 0.1)


if __name__ == "__main__":
    gr_unittest.run(qa_mimo_detector)  # unittest's main runs both test classes of this file
