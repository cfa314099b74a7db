"""Counts with uncertainty (answerers/counting.py): the Poisson-binomial distribution over presence
probabilities, duplicates counted once, label shares, and how the geometric answerer uses it."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from snapshot_builders import obj

from directme.answerers.counting import count_belief, poisson_binomial


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), max_size=12))
def test_distribution_sums_to_one_and_has_the_expected_mean(ps):
    b = poisson_binomial(ps)
    assert len(b.pmf) == len(ps) + 1
    assert abs(sum(b.pmf) - 1.0) < 1e-9
    assert abs(b.expected - sum(ps)) < 1e-9


def test_exact_values_for_two_uncertain_objects():
    b = poisson_binomial([0.5, 0.8])
    assert np.allclose(b.pmf, [0.1, 0.5, 0.4])
    assert b.most_likely == 1 and abs(b.expected - 1.3) < 1e-12
    assert poisson_binomial([]).pmf == (1.0,) and poisson_binomial([1.0, 1.0]).most_likely == 2


def test_duplicates_count_once_and_absent_nodes_not_at_all():
    a = obj("a1", "Apple", (0.0, 0.0))
    twin = obj("a2", "Apple", (0.2, 0.0))  # within the duplicate radius of a1: the same apple seen twice
    far = obj("a3", "Apple", (3.0, 0.0))
    gone = obj("a4", "Apple", (6.0, 0.0), present=False)
    belief, used = count_belief([a, twin, far, gone], duplicate_radius_m=0.4, min_p=0.05)
    assert [n.node_id for n, _ in used] == ["a1", "a3"]  # a4's presence probability (0.02) is below min_p
    assert belief.most_likely == 2
    belief, used = count_belief([a, far, gone], duplicate_radius_m=0.4)  # kept, it adds its 2% to the spread
    assert len(used) == 3 and belief.most_likely == 2 and abs(belief.expected - 1.98) < 1e-9


def test_a_confused_label_counts_with_its_vote_share():
    mixed = obj("m", "Apple", (0.0, 0.0))
    mixed = type(mixed)(**{**mixed.__dict__, "label_votes": {"Apple": 1.0, "Orange": 3.0}})
    belief, used = count_belief([mixed], duplicate_radius_m=0.4)
    assert abs(used[0][1] - 0.98 * 0.25) < 1e-9 and belief.most_likely == 0
