"""The wearer's metric path from poses alone: distance walked, start in the ego frame, turns."""
import numpy as np
import pytest
from snapshot_builders import snapshot

from directme.query.path import metric_path


def _track(points, headings=None, dt=1.0):
    headings = headings if headings is not None else [0.0] * len(points)
    return [(i * dt, float(x), float(y), float(h), None) for i, ((x, y), h) in enumerate(zip(points, headings))]


def test_l_shaped_walk():
    pts = [(x, 0) for x in range(5)] + [(4, y) for y in range(1, 4)]
    path = metric_path(snapshot(7.0, [], _track(pts, [0] * 5 + [90] * 3)))
    assert path.walked_m == pytest.approx(7.0) and path.net_m == pytest.approx(5.0)
    assert np.allclose(path.start_ego, [-3.0, 4.0])  # facing +y at (4, 3): start is 3 m behind, 4 m left
    assert [(t, round(a)) for t, a in path.turns] == [(4.0, 90)]
    assert path.heading_change_deg == pytest.approx(90.0)


def test_jitter_is_not_a_turn_and_u_turns_are_named():
    rng = np.random.default_rng(0)
    there = [(0.5 * i, rng.normal(0, 0.03)) for i in range(11)]
    back = [(5 - 0.5 * i, 0.4 + rng.normal(0, 0.03)) for i in range(1, 11)]
    path = metric_path(snapshot(20.0, [], _track(there + back, [0] * 11 + [180] * 10)))
    (t, angle), = path.turns  # 5 m out, 0.4 m aside, 5 m back: one U-turn at the far end
    assert t == 10.0 and abs(angle) > 135 and "1 turn: U-turn at 10 s" in path.describe()
    straight = metric_path(snapshot(10.0, [], _track(there)))
    assert straight.turns == () and "no sharp turns" in straight.describe()


def test_time_window_and_standing_still():
    pts = [(x, 0) for x in range(6)]
    late = metric_path(snapshot(5.0, [], _track(pts)), t_from=3.0)
    assert late.t_from == 3.0 and late.walked_m == pytest.approx(2.0) and np.allclose(late.start_ego, [-2, 0])
    still = metric_path(snapshot(5.0, [], _track([(1, 1)] * 6)))
    assert still.walked_m == 0.0 and still.describe().startswith("You stayed about where you were")
    assert metric_path(snapshot(5.0, [], [])) is None
