#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The SNR at which a curve reaches a target (apps/mimo_gpu_plot.py), including a
curve that steps from errors to zero errors between two points (issue 24)."""

import importlib.util
import os
import unittest

_spec = importlib.util.spec_from_file_location(
    "mimo_gpu_plot", os.path.join(os.path.dirname(__file__), "..", "..", "apps", "mimo_gpu_plot.py"))
plot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plot)


def pts(rows, count=200):
    """(snr, rate) rows -> (snr, rate, count, errors) points."""
    return [(s, r, count, round(r * count)) for s, r in rows]


class qa_snr_at_target(unittest.TestCase):

    def test_crossing_between_points_with_errors(self):
        found = plot.snr_at_ber(pts([(5, 0.5), (6, 0.05), (7, 0.005)]), 0.1)
        self.assertFalse(found[1])
        # log-linear: 0.5 -> 0.05 is one decade, 0.1 is log10(5) = 0.699 of it
        self.assertAlmostEqual(found[0], 5.69897, places=4)
        self.assertEqual(plot.snr_text(found), "5.70")

    def test_step_to_zero_errors_is_interpolated_against_one_error(self):
        # BLER 0.235 at 6 dB, no error in 200 blocks at 7 dB: one error would be 0.005.
        found = plot.snr_at_ber(pts([(5, 0.9), (6, 0.235), (7, 0.0)]), 0.1)
        self.assertIsNotNone(found)
        self.assertTrue(found[1])
        t = (-1 - plot.math.log10(0.235)) / (plot.math.log10(0.005) - plot.math.log10(0.235))
        self.assertAlmostEqual(found[0], 6 + t, places=6)
        self.assertTrue(plot.snr_text(found).startswith("<= "))

    def test_too_few_samples_to_say(self):
        # Zero errors in 5 blocks: one error would be 0.2, above the target.
        found = plot.snr_at_ber([(5, 0.6, 5, 3), (6, 0.0, 5, 0)], 0.1)
        self.assertIsNone(found)
        self.assertEqual(plot.snr_text(found), "not reached")

    def test_never_falls_to_the_target(self):
        self.assertIsNone(plot.snr_at_ber(pts([(5, 0.9), (6, 0.5), (7, 0.3)]), 0.1))


class qa_idd_result(unittest.TestCase):

    def test_receivers_become_curves_and_a_png(self):
        import contextlib
        import io
        import json
        import tempfile

        def receiver(detector, outer, errors):
            return {"detector": detector, "outer_iterations": outer,
                    "points": [{"snr_db": s, "bler": e / 100, "errors": e, "passes": 100}
                               for s, e in zip((5, 6, 7), errors)]}
        data = {"program": "mimo_gpu_idd", "A": 1000, "G": 2048, "modulation": "16qam",
                "nr": 4, "nt": 4, "backend": "cpu", "blocks_per_point": 100,
                "receivers": [receiver("mmse", 1, (90, 40, 5)), receiver("mmse", 3, (60, 8, 0)),
                              receiver("ml", 0, (70, 9, 0))]}
        table = plot.idd_curves(data)
        self.assertEqual(list(table), ["mmse x1", "mmse x3", "ml"])
        self.assertEqual(table["mmse x3"][1], (6, 0.08, 100, 8))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "idd.json")
            with open(path, "w") as f:
                json.dump(data, f)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                plot.main([path])
            self.assertTrue(os.path.getsize(os.path.join(d, "idd.png")) > 10000)
        text = out.getvalue()
        self.assertIn("mmse x1: 6.", text)
        self.assertIn("relative to ML", text)  # the one-shot ML is the reference


class qa_ldpc_fer_result(unittest.TestCase):

    def test_decoders_become_curves_and_a_png(self):
        import contextlib
        import io
        import json
        import tempfile

        def decoder(name, errors):
            return {"decoder": name, "points": [
                {"ebn0_db": e, "fer": n / 1000, "errors": n, "blocks": 1000,
                 "normal_approximation": 1e-12} for e, n in zip((1.0, 1.5, 2.0), errors)]}
        data = {"program": "mimo_gpu_ldpc_fer", "K_prime": 6144, "E": 12288, "base_graph": 1,
                "Zc": 288, "iterations": 10, "early_stop": False, "backend": "cpu",
                "target_fer": 0.01, "normal_approximation_ebn0_db": 0.4,
                "decoders": [decoder("sp", (900, 5, 0)), decoder("oms:0.5", (990, 60, 1))]}
        self.assertEqual(plot.fer_curves(data)["sp"][1], (1.5, 0.005, 1000, 5))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "fer.json")
            with open(path, "w") as f:
                json.dump(data, f)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                plot.main([path])
            self.assertTrue(os.path.getsize(os.path.join(d, "fer.png")) > 10000)
        self.assertIn("oms:0.5: 1.", out.getvalue())


if __name__ == "__main__":
    unittest.main()
