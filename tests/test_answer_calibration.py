"""Answer confidence as the probability of being right: per-kind logistic maps fitted on known truth."""
import numpy as np
import pytest

from directme.answerers.calibration import (ConfidenceCalibration, KindMap, fit_calibration, load_calibration,
                                            packaged_calibration)
from directme.answerers.geometric import build
from directme.errors import InvalidInputError


def _records(kind, slope, intercept, n, seed=0):
    """Answers whose chance of being right is sigmoid(slope * logit(c) + intercept)."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.05, 0.999, n)
    z = slope * np.log(c / (1 - c)) + intercept
    right = rng.random(n) < 1 / (1 + np.exp(-z))
    return [(kind, float(ci), bool(ri)) for ci, ri in zip(c, right)]


def test_fit_recovers_the_map_that_made_the_answers_and_keeps_the_order():
    cal = fit_calibration(_records("count", 0.5, 1.0, 4000), prior_weight=1.0)
    m = cal.kinds["count"]
    assert m.slope == pytest.approx(0.5, abs=0.1) and m.intercept == pytest.approx(1.0, abs=0.15)
    assert m.answers == 4000
    outs = [cal("count", c) for c in np.linspace(0.01, 1.0, 50)]
    assert all(b >= a for a, b in zip(outs, outs[1:]))  # monotone: the ranking of answers is kept


def test_overconfident_answers_are_brought_down_and_unsure_right_ones_up():
    cal = fit_calibration(_records("ego_direction", 0.3, 0.0, 3000) + _records("recall", 1.0, 2.0, 3000, seed=1))
    assert cal("ego_direction", 0.999) < 0.95  # right far less often than 99.9 %
    assert cal("recall", 0.5) > 0.8  # a coin-flip score that is nearly always right


def test_kinds_without_enough_answers_zero_and_unknown_kinds_are_left_alone():
    cal = fit_calibration(_records("count", 0.5, 1.0, 10), min_answers=30)
    assert cal.kinds == {}
    cal = ConfidenceCalibration({"count": KindMap(0.5, 1.0, 100)})
    assert cal("count", 0.0) == 0.0  # no evidence stays no evidence
    assert cal("reachability", 0.73) == 0.73


def test_a_fitted_file_round_trips_and_a_damaged_one_is_refused(tmp_path):
    cal = fit_calibration(_records("count", 0.5, 1.0, 500), fitted_on="test")
    path = tmp_path / "cal.json"
    path.write_text(cal.to_json())
    again = load_calibration(path)
    assert again.kinds == cal.kinds and again.fitted_on == "test"
    path.write_text('{"kinds": {"count": {"slope": -1, "intercept": 0}}}')
    with pytest.raises(InvalidInputError, match="slope >= 0"):
        load_calibration(path)
    path.write_text("[1, 2")
    with pytest.raises(InvalidInputError, match="--fit"):
        load_calibration(path)
    with pytest.raises(InvalidInputError, match="packaged"):
        load_calibration(tmp_path / "missing.json")


def test_the_geometric_answerer_takes_a_calibration_by_name_or_path(tmp_path):
    assert build({"calibration": "none"}).calibration.kinds == {}
    assert build().calibration == packaged_calibration()
    path = tmp_path / "cal.json"
    path.write_text(ConfidenceCalibration({"count": KindMap(2.0, 0.0, 50)}).to_json())
    assert build({"calibration": str(path)}).calibration("count", 0.8) > 0.9
    with pytest.raises(InvalidInputError, match="calibration"):
        build({"calibration": 3})
