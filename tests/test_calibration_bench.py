"""benchmarks/calibration.py: expected calibration error and the reliability table on hand-checkable cases,
and one short episode end to end (its unanswerable questions are mostly declined)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "calibration", Path(__file__).resolve().parents[1] / "benchmarks" / "calibration.py")
calibration = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(calibration)


def test_ece_and_reliability_rows_by_hand():
    pairs = [("count", c, ok) for c, ok in
             [(0.95, True), (0.95, True), (0.95, False), (0.95, True), (0.55, True), (0.55, False)]]
    ece, rows = calibration.reliability(pairs, bins=10)
    assert rows == [pytest.approx((0.5, 0.6, 2, 0.55, 0.5)), pytest.approx((0.9, 1.0, 4, 0.95, 0.75))]
    assert ece == pytest.approx(2 / 6 * 0.05 + 4 / 6 * 0.20)
    assert calibration.reliability([("count", 1.0, True)], bins=10)[1] == [pytest.approx((0.9, 1.0, 1, 1.0, 1.0))]


@pytest.mark.slow  # a one-minute episode streamed twice over
def test_one_short_episode_end_to_end():
    answered, n_abstained, hard = calibration.episode_records(seed=7, minutes=1.0, noise="none")
    assert answered and all(0.0 <= c <= 1.0 for _, c, _ in answered)
    assert len(hard) == 3 * len(calibration.unanswerable("x", "garage", "chair"))
    declined = sum(h.abstained or "missing_object" in h.flags for h in hard)
    assert declined >= 0.8 * len(hard)
