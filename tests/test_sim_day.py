"""The simulator's day (sim/day.py): deterministic per seed, streamed lazily, ids unique across places."""
from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest

from directme.errors import InvalidInputError
from directme.sim.day import DAY_SUBTASKS, OBJECT_ID_STRIDE, DayConfig, DayStream

TINY = DayConfig(hours=0.02, new_visit_min=(0.3, 0.5), return_visit_min=(0.2, 0.3), travel_s=(5.0, 10.0), clutter=8)


def _digest(stream: DayStream) -> list:
    out = []
    for f in stream:
        p = f.perception
        out.append((p.frame.index, p.t_s, f.place, f.visit, p.scene_tag, p.frame.T_world_cam.matrix.round(9).tobytes(),
                    float(np.nansum(p.frame.depth_m)),
                    tuple((i.track_id, i.label, round(i.score, 9), int(i.mask.sum())) for i in p.instances)))
    return out


def test_day_is_deterministic_per_seed():
    a, b = _digest(DayStream(3, TINY, "realistic")), _digest(DayStream(3, TINY, "realistic"))
    assert a == b and len(a) > 20
    assert _digest(DayStream(4, TINY, "realistic")) != a


def test_day_streams_lazily_and_visits_places_again():
    stream = DayStream(0, DayConfig(hours=16.0))
    it = iter(stream)
    assert inspect.isgenerator(it)
    first = list(itertools.islice(it, 3))  # the first visit only is built, not the 16-hour day
    assert [f.perception.frame.index for f in first] == [0, 1, 2] and first[0].place == 0
    visits = list(stream.schedule())
    places = [p for _, p, *_ in visits]
    assert max(places) + 1 >= 50 and any(not new for _, _, new, _, _ in visits)
    starts = [t for *_, t, _ in visits]
    assert starts == sorted(starts) and starts[-1] < 16 * 3600


def test_day_ids_are_global_and_frames_are_in_the_world_frame():
    frames = list(DayStream(1, TINY))
    by_place: dict[int, set] = {}
    for f in frames:
        by_place.setdefault(f.place, set()).update(
            i.track_id // OBJECT_ID_STRIDE for i in f.perception.instances)
    assert len(by_place) >= 2
    for place, prefixes in by_place.items():
        assert prefixes <= {place}  # object ids carry their place
    idx = [f.perception.frame.index for f in frames]
    assert idx == list(range(len(frames)))
    t = [f.perception.t_s for f in frames]
    assert all(b > a for a, b in zip(t, t[1:]))


def test_day_config_rejects_bad_values():
    with pytest.raises(InvalidInputError):
        DayConfig(hours=0)
    with pytest.raises(InvalidInputError):
        DayConfig(width=8)


@pytest.mark.slow
def test_day_questions_are_the_place_kinds_at_day_times():
    cfg = DayConfig(hours=0.05, new_visit_min=(1.0, 1.2), return_visit_min=(0.5, 0.6), travel_s=(5.0, 10.0),
                    clutter=8)
    frames = list(DayStream(2, cfg, question_hours=((0.0, 1.0),)))
    asked = [(f.visit, f.perception.t_s, q) for f in frames for q in f.questions]
    assert asked and {q.subtask for *_, q in asked} <= set(DAY_SUBTASKS)
    ends = {}
    for f in frames:
        ends[f.visit] = f.perception.t_s
    for visit, t0, q in asked:  # asked during its own visit, at the day's clock
        assert t0 + 9.0 < q.t_s <= ends[visit] and q.answer in q.letters and q.meta["visit"] == visit
    again = [q.text for f in DayStream(2, cfg, question_hours=((0.0, 1.0),)) for q in f.questions]
    assert again == [q.text for *_, q in asked]
    assert not any(f.questions for f in DayStream(2, cfg))  # none unless asked for
