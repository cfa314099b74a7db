"""Counts with uncertainty (answerers/counting.py): the Poisson-binomial distribution over presence
probabilities, duplicates counted once, label shares, and how the geometric answerer uses it."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from snapshot_builders import obj

from directme.answerers.counting import class_probabilities, count_of_probabilities, poisson_binomial


def count_belief(nodes, duplicate_radius_m, min_p=0.02, asked=None, label_vote_logodds=3.0, carried=None):
    """The count over ``nodes`` as the geometric answerer makes it: their class probabilities, then the count."""
    return count_of_probabilities(class_probabilities(nodes, asked, label_vote_logodds), duplicate_radius_m, min_p,
                                  carried)


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


def _voted(node_id, label, votes, xy=(0.0, 0.0)):
    n = obj(node_id, label, xy)
    return type(n)(**{**n.__dict__, "label_votes": votes})


def test_a_confused_label_counts_with_the_posterior_of_the_asked_class():
    mostly_apple = _voted("m", "Apple", {"Apple": 3.0, "Orange": 1.0})
    _, used = count_belief([mostly_apple], duplicate_radius_m=0.4, asked=lambda lab: lab == "Apple")
    # two units of vote more for "apple": exp(-6) odds against; the vote share would have said 0.75
    assert abs(used[0][1] - 0.98 / (1.0 + np.exp(-6.0))) < 1e-9
    mostly_orange = _voted("o", "Orange", {"Apple": 1.0, "Orange": 3.0})
    belief, used = count_belief([mostly_orange], duplicate_radius_m=0.4, asked=lambda lab: lab == "Apple")
    assert not used and belief.most_likely == 0  # below min_p: it does not count at all
    # the node's own label is asked when no class is given
    _, used = count_belief([mostly_orange], duplicate_radius_m=0.4)
    assert used[0][1] > 0.97


def test_one_stray_vote_does_not_make_a_chair_a_backpack():
    chair = _voted("c", "Chair", {"Chair": 16.0, "Bench": 2.3, "Backpack": 0.5})
    backpack = _voted("b", "Backpack", {"Backpack": 4.0}, xy=(3.0, 0.0))
    belief, used = count_belief([chair, backpack], duplicate_radius_m=0.4, asked=lambda lab: lab == "Backpack")
    assert belief.most_likely == 1 and [n.node_id for n, _ in used] == ["b"]


def test_equal_votes_split_the_probability_and_a_stronger_vote_weight_sharpens_it():
    tie = _voted("t", "Basket", {"Basket": 1.0, "Trash bin Can": 1.0})
    _, used = count_belief([tie], duplicate_radius_m=0.4, asked=lambda lab: lab == "Basket")
    assert abs(used[0][1] - 0.98 * 0.5) < 1e-9
    lean = _voted("l", "Basket", {"Basket": 1.5, "Trash bin Can": 1.0})
    soft = count_belief([lean], 0.4, asked=lambda lab: lab == "Basket", label_vote_logodds=1.0)[1][0][1]
    sharp = count_belief([lean], 0.4, asked=lambda lab: lab == "Basket", label_vote_logodds=6.0)[1][0][1]
    assert 0.49 < soft < sharp < 0.98


def test_an_old_node_and_the_node_it_was_carried_to_are_one_object_at_one_of_two_places():
    """Carried away with chance 0.44 (the new node's probability): the old node counts 0.27 x 0.56; counted together
    they are one term (0.44 + 0.15: one basket, P(1) = 0.59), not two independent ones (P(0) = 0.48 > P(1))."""
    old = type(obj("old", "Basket", (0.0, 0.0)))(**{**obj("old", "Basket", (0.0, 0.0)).__dict__, "presence_p": 0.27})
    new = type(old)(**{**obj("new", "Basket", (5.0, 0.0), n_obs=1).__dict__, "presence_p": 0.44})
    belief, used = count_belief([old, new], 0.4, carried={"old": (0.44, "new")})
    assert dict((n.node_id, round(p, 4)) for n, p in used) == {"new": 0.44, "old": round(0.27 * 0.56, 4)}
    assert len(belief.pmf) == 2 and abs(belief.p(1) - (0.44 + 0.27 * 0.56)) < 1e-9 and belief.most_likely == 1
    alone, _ = count_belief([old], 0.4, carried={"old": (0.44, "new")})  # a room count without the new node
    assert abs(alone.p(1) - 0.27 * 0.56) < 1e-9 and alone.most_likely == 0
    independent, _ = count_belief([old, new], 0.4)
    assert len(independent.pmf) == 3 and abs(independent.p(1) - (0.27 * 0.56 + 0.73 * 0.44)) < 1e-9
