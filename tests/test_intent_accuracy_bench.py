"""benchmarks/intent_accuracy.py --cv: folds stratified by kind, equal texts in one fold, and every fold parsed
with a calibration fitted on the other folds alone (rules only here: no sentence model is loaded)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from directme.query.intent import parse_question

_SPEC = importlib.util.spec_from_file_location(
    "intent_accuracy", Path(__file__).resolve().parents[1] / "benchmarks" / "intent_accuracy.py")
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)

ROWS = [{"question": q, "kind": k, "targets": t} for q, k, t in [
    ("Which side is the whiteboard on right now?", "ego_direction", ["whiteboard"]),
    ("which side is the whiteboard on right now", "ego_direction", ["whiteboard"]),
    ("Which side of me is the lamp on?", "ego_direction", ["lamp"]),
    ("Where is the kettle?", "ego_direction", ["kettle"]),
    ("How many chairs are there?", "count", ["chair"]),
    ("How many cups are on the table?", "count", ["cup"]),
    ("What colour is the sofa?", "open", []),
    ("What is written on the sign?", "open", []),
    ("Why is the door open?", "open", []),
    ("Which room is the plant in?", "place", ["plant"]),
]]


def test_folds_stratify_and_keep_equal_texts_together():
    folds = bench.folds(ROWS, 3)
    assert sorted(i for f in folds for i in f) == list(range(len(ROWS)))
    assert any(0 in f and 1 in f for f in folds)  # the same question twice: one fold
    for kind in ("open", "count"):
        per_fold = [sum(ROWS[i]["kind"] == kind for i in f) for f in folds]
        assert max(per_fold) - min(per_fold) <= 1


def test_each_fold_is_parsed_with_a_calibration_fitted_on_the_others():
    intents = [parse_question(r["question"], use_model=False) for r in ROWS]
    seen = []

    def parse(row, cal):
        seen.append((row["question"], cal.fitted))
        return parse_question(row["question"], use_model=False, calibration=cal)

    cv = bench.cross_validate(ROWS, intents, 3, 1.0, parse)
    assert [it.question for it in cv] == [r["question"] for r in ROWS]
    for fold in bench.folds(ROWS, 3):
        fitted = {f for q, f in seen if q in {ROWS[i]["question"] for i in fold}}
        assert fitted == {f"L2-penalised logistic regression (l2=1.0) on {len(ROWS) - len(fold)} labelled questions"}
    res = bench.score(ROWS, cv, 0.5)
    assert res["kind_accuracy"] == 1.0 and res["open_geometric_over_0.5"] == 0
