"""Parse confidence from data (query/calibrate.py): votes -> one logistic calibration, stored with the package."""
import json

import numpy as np
import pytest

from directme.errors import InvalidInputError
from directme.query.calibrate import FEATURES, RULES_ONLY, Calibration, Votes, default_calibration, fit, fit_logistic, load
from directme.query.intent import parse_question


def test_fit_logistic_recovers_a_known_slope():
    rng = np.random.default_rng(0)
    x = rng.normal(size=4000)
    X = np.stack([np.ones_like(x), x], axis=1)
    y = (rng.random(4000) < 1 / (1 + np.exp(-(0.5 + 2.0 * x)))).astype(float)
    w = fit_logistic(X, y, l2=1e-3)
    assert w == pytest.approx([0.5, 2.0], abs=0.2)


def test_fit_gives_rules_that_are_right_high_and_meaning_that_is_wrong_low():
    scores = (("ego_direction", 0.6), ("open", 0.4))
    rule = Votes("ego_direction", "rule", "where", ("ego_direction",), scores)
    meaning = Votes("ego_direction", "meaning", "", (), scores)
    cal = fit([(rule, True)] * 40 + [(meaning, False)] * 10, fitted="test")
    assert cal.probability(rule) > 0.9 > 0.5 > cal.probability(meaning)
    no_model = Votes("ego_direction", "rule", "where", ("ego_direction",))  # rules only: the other weights
    assert cal.probability(no_model) > 0.9
    with pytest.raises(InvalidInputError):
        fit([])


def test_calibration_file_round_trips_and_refuses_other_features(tmp_path):
    cal = Calibration(tuple(range(len(FEATURES))), tuple(range(len(RULES_ONLY))), "by hand")
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(cal.to_json()))
    assert load(path) == cal
    path.write_text(json.dumps(cal.to_json() | {"features": ["bias"]}))
    with pytest.raises(InvalidInputError, match="refit"):
        load(path)
    assert "labelled questions" in default_calibration().fitted  # the packaged one says how it was fitted


def test_parse_confidence_is_the_calibrations():
    hi = Calibration((5.0,) * len(FEATURES), (5.0,) * len(RULES_ONLY))
    lo = Calibration((-5.0,) * len(FEATURES), (-5.0,) * len(RULES_ONLY))
    q = "Which side of me is the fridge on?"
    sure, unsure = parse_question(q, use_model=False, calibration=hi), parse_question(q, use_model=False, calibration=lo)
    assert sure.kind == unsure.kind == "ego_direction" and sure.votes.decider == "rule"
    assert sure.answerable() and not unsure.answerable() and "not_understood" in unsure.flags
