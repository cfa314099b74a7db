"""benchmarks/count_errors.py: the census asks the same questions the accuracy benchmark does (same right
answers), and every cause it names for a wrong count is one the ground truth shows."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from directme.commands.demo import evaluate_episode
from directme.sim import generate_episode

_SPEC = importlib.util.spec_from_file_location(
    "count_errors", Path(__file__).resolve().parents[1] / "benchmarks" / "count_errors.py")
count_errors = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(count_errors)


def test_the_census_answers_as_the_accuracy_benchmark_and_names_a_cause_for_every_wrong_count():
    ep = generate_episode(seed=0, minutes=3)
    rows = count_errors.census(ep, "realistic", 0)
    full = [q for q in evaluate_episode(ep, "realistic", 0, baselines=False)["questions"]
            if q["subtask"] == count_errors.SUBTASK]
    assert len(rows) == len(full) > 0
    assert [r["right"] for r in rows] == [q["chosen"] == q["correct"] for q in full]
    assert any(not r["right"] for r in rows)  # seed 0 has a wrong count under realistic noise
    for r in rows:
        assert not r["causes"] if r["right"] else r["causes"] and set(r["causes"]) <= set(count_errors.MISSING + count_errors.EXTRA)
        assert (r["said"] == r["truth"]) == r["right"] or r["said"] is None


def test_with_perfect_perception_every_counted_object_was_reported():
    rows = count_errors.census(generate_episode(seed=0, minutes=3), "none", 0)
    causes = sum((r["causes"] for r in rows), count_errors.Counter())
    assert causes["never_reported"] == 0 and causes["false_detection"] == 0


def test_a_question_is_sorted_by_what_the_stream_can_hold_at_its_moment():
    ep = generate_episode(seed=2, minutes=10)
    put = next(e for e in ep.events if e.kind == "putdown")
    t_q = put.t_s + 1.0
    others = {o.object_id: -1.0 for o in ep.objects}  # no removal seen near the question
    assert count_errors.moment(ep, put.label, t_q, {}, others) == "put_down_unreported"
    assert count_errors.moment(ep, put.label, t_q, {put.object_id: [t_q]}, others) == "other"  # reported there since
    assert count_errors.moment(ep, put.label, put.t_s + count_errors.PUT_DOWN_S + 1.0, {}, others) == "other"
    removals = count_errors.removal_seen_s(ep)
    oid, t_seen = next(iter(removals.items()))
    gone = ep.object(oid)
    assert gone.present[-1][1] <= t_seen  # seen gone only after it left
    assert count_errors.moment(ep, gone.label, t_seen, {}, removals) in ("removal_first_view", "put_down_unreported")
    assert count_errors.moment(ep, gone.label, t_seen + 2.0 / ep.fps, {}, {oid: t_seen}) != "removal_first_view"
