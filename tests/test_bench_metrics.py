"""Benchmark metrics against values computed by hand on tiny cases."""
from __future__ import annotations

import math

import pytest

from directme.bench import metrics as M


def test_accuracy_table_groups_and_unscored():
    recs = [{"correct": True, "category": "a", "qtype": "X"}, {"correct": False, "category": "a", "qtype": "Y"},
            {"correct": True, "category": "b", "qtype": "X"}, {"correct": None, "category": "b", "qtype": "Y"}]
    t = M.accuracy_table(recs, ("category", "qtype"))
    assert t["overall"] == {"accuracy": 2 / 3, "correct": 2, "total": 3, "unscored": 1, "abstained": 0,
                            "random_weights": 0}
    assert t["per_category"]["a"]["accuracy"] == 0.5 and t["per_category"]["b"]["accuracy"] == 1.0
    assert t["per_qtype"]["Y"] == {"accuracy": 0.0, "correct": 0, "total": 1, "unscored": 1, "abstained": 0,
                                   "random_weights": 0}


def test_accuracy_table_counts_answers_from_random_weights():
    recs = [{"correct": True, "flags": ["random_weights"], "qtype": "X"}, {"correct": False, "flags": [], "qtype": "X"},
            {"correct": None, "flags": ["random_weights", "abstained"], "qtype": "Y"}, {"correct": True, "qtype": "Y"}]
    t = M.accuracy_table(recs, ("qtype",))
    assert t["overall"]["random_weights"] == 2  # unscored ones too: the run's answers are meaningless either way
    assert t["per_qtype"]["X"]["random_weights"] == 1 and t["per_qtype"]["Y"]["random_weights"] == 1


def test_real_time_accuracy_window():
    assert M.real_time_correct(True, 4.9, 5.0)
    assert M.real_time_correct(True, 5.0, 5.0)
    assert not M.real_time_correct(True, 5.1, 5.0)  # right, but too late
    assert not M.real_time_correct(False, 0.1, 5.0)


def test_memory_persistence_and_censoring():
    assert M.memory_persistence_s(False, []) == (0.0, False)
    assert M.memory_persistence_s(True, [True, True, False, True]) == (120.0, False)  # 2 recalls then a miss
    assert M.memory_persistence_s(True, [False]) == (0.0, False)
    assert M.memory_persistence_s(True, [True] * 10) == (600.0, True)  # survived every round: a lower bound
    assert M.memory_persistence_s(True, [True] * 3) == (180.0, True)  # stream ended after 3 rounds: censored
    assert M.memory_persistence_s(True, [True] * 12, max_rounds=10) == (600.0, True)


def test_phostream_response_windows():
    # forward item: evidence at t_p = 42, window 2 s
    assert M.classify_response(42, 41, 2.0) == M.EARLY
    assert M.classify_response(42, 42, 2.0) == M.ON_TIME
    assert M.classify_response(42, 44, 2.0) == M.ON_TIME
    assert M.classify_response(42, 45, 2.0) == M.LATE
    assert M.classify_response(42, None, 2.0) == M.NO_RESPONSE
    rates = M.response_rates([M.EARLY, M.ON_TIME, M.ON_TIME, M.NO_RESPONSE])
    assert rates == {M.ON_TIME: 0.5, M.EARLY: 0.25, M.NO_RESPONSE: 0.25, M.LATE: 0.0}


def test_tiou_and_recall_at_5():
    assert M.tiou((0, 10), (5, 15)) == pytest.approx(5 / 15)
    assert M.tiou((0, 10), (10, 20)) == 0.0
    gt = [(10, 20), (100, 110)]
    # (12, 22): inter 8, union 12 -> 0.667 hit; (100, 140): inter 10, union 40 -> 0.25 miss
    assert M.recall_at_k([(12, 22), (100, 140)], gt, k=5, threshold=0.3) == 0.5
    # the hit for the second span is ranked 6th: outside the top 5
    ranked = [(12, 22), (0, 1), (0, 1), (0, 1), (0, 1), (101, 109)]
    assert M.recall_at_k(ranked, gt, k=5, threshold=0.3) == 0.5
    assert M.recall_at_k(ranked, gt, k=6, threshold=0.3) == 1.0
    # (0, 13) vs (10, 20): inter 3, union 20 -> 0.15, a miss; (0, 10) vs (0, 3): exactly 0.3, a hit
    assert M.recall_at_k([(0, 13)], [(10, 20)]) == 0.0
    assert M.recall_at_k([(0, 10)], [(0, 3)]) == 1.0


def test_option_confidence_entropy_and_slope():
    conf, ent, p = M.option_confidence({"A": 2.0, "B": 1.0, "C": 1.0, "D": 0.0})
    assert conf == 0.5 and p == {"A": 0.5, "B": 0.25, "C": 0.25, "D": 0.0}
    assert ent == pytest.approx(-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    assert M.option_confidence(None) == (None, None, {})
    # confidence 0.9, 0.7, 0.5 over steps 0, 1, 2 -> slope -0.2 per step
    assert M.slope([0, 1, 2], [0.9, 0.7, 0.5]) == pytest.approx(-0.2)
    # least squares over noisy points: x = 0,1,2,3 ; y = 1,3,2,4 -> slope 0.8
    assert M.slope([0, 1, 2, 3], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert M.slope([1, 1], [0.2, 0.4]) is None


def test_text_helpers():
    assert M.relation_terms("It is to your front-left and rear-left.") == {"front-left", "behind-left"}
    assert M.relation_terms("It is on your left.") == {"left"}
    assert M.relation_terms("It is behind you right now") == {"behind"}
    assert M.relation_terms("It's on your left front.") == {"front-left"}
    assert M.parse_letters("B, A and B", "ABCD") == ["B", "A"]
    assert M.token_overlap_correct("to get the phone charger", "I went to get my charger")
    assert not M.token_overlap_correct("to get the phone charger", "no idea")
    assert M.pairwise_order_accuracy(["B", "A", "C"], ["A", "B", "C"]) == pytest.approx(2 / 3)


def test_empty_group_values_give_no_nameless_rows():
    from directme.bench.parallel import metrics_markdown

    recs = [{"correct": True, "category": "", "qtype": "A"}, {"correct": False, "qtype": ""}]
    t = M.accuracy_table(recs, ("category", "qtype"))
    assert "per_category" not in t  # no record has a category: no table
    assert set(t["per_qtype"]) == {"A", M.NO_VALUE} and t["per_qtype"][M.NO_VALUE]["total"] == 1
    md = metrics_markdown({"benchmark": "x", "finished": 1, "episodes": 1, "failed": [], "metrics": t})
    assert "per_category." not in md and "| per_qtype. |" not in md and f"per_qtype.{M.NO_VALUE}" in md


def test_seed_interval_resamples_seeds_not_questions():
    same = [(16, 20)] * 6  # every seed alike: no spread between runs
    assert M.seed_interval(same) == pytest.approx((0.8, 0.8))
    spread = [(12, 20), (20, 20), (15, 20), (19, 20), (14, 20), (18, 20)]
    lo, hi = M.seed_interval(spread)
    pooled = sum(c for c, _ in spread) / sum(n for _, n in spread)
    assert lo < pooled < hi and 0.6 <= lo and hi <= 1.0
    assert M.seed_interval(spread) == (lo, hi)  # fixed resampling seed: the same figures every run
    narrow = M.seed_interval(spread, level=0.5)
    assert lo <= narrow[0] <= narrow[1] <= hi
    # pooled, not a mean of per-seed accuracies: a big episode weighs more
    assert M.seed_interval([(0, 1), (90, 100)], resamples=4000)[1] == pytest.approx(0.9, abs=1e-9)
    assert M.seed_interval([(3, 4), (0, 0)]) == pytest.approx((0.75, 0.75))  # a seed without questions adds nothing


@pytest.mark.parametrize("bad, kw", [([], {}), ([(0, 0)], {}), ([(5, 4)], {}), ([(-1, 4)], {}), ([(1, 2)], {"level": 1.0})])
def test_seed_interval_refuses_bad_input(bad, kw):
    with pytest.raises(ValueError):
        M.seed_interval(bad, **kw)
