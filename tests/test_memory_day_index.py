"""The day-scale indexes give what the full passes gave: the places' per-tag centre index picks the same place
as measuring every place of the tag; the timeline's kept per-object maxima give the same rows as a pass over
every log entry."""
from __future__ import annotations

import numpy as np
import pytest

from directme.memory import timeline as tl
from directme.memory.objects import State
from directme.memory.places import PlaceClusterer
from directme.memory.reference import nearby_full_pass, place_full_pass, rows_full_pass


def _reference(positions: np.ndarray, tags: list[str], eps_m: float) -> list[int]:
    sums, counts, ptags, out = [], [], [], []
    for p, tag in zip(positions, tags):
        best = place_full_pass(sums, counts, ptags, p, tag, eps_m)
        if best < 0:
            best = len(ptags)
            ptags.append(tag)
            sums.append(np.zeros(3))
            counts.append(0)
        sums[best] = sums[best] + p
        counts[best] += 1
        out.append(best)
    return out


def test_place_index_matches_measuring_every_place():
    rng = np.random.default_rng(0)
    walk = np.cumsum(rng.normal(0, 0.6, size=(3000, 3)) * [1, 1, 0], axis=0)  # wanders over many places
    jumps = np.repeat(rng.uniform(-200, 200, size=(30, 3)) * [1, 1, 0], 100, axis=0)  # and far away ones
    positions = walk + jumps + [0, 0, 1.6]
    tags = [str(t) for t in rng.choice(["kitchen", "office", "street", "shop"], size=len(positions))]
    tags[5:9] = [None, None, "", None]  # untagged frames share one tag
    places = PlaceClusterer(eps_m=1.5)
    got = [places.add(p, t) for p, t in zip(positions, tags)]
    assert got == _reference(positions, [t or "unknown" for t in tags], 1.5)
    assert len(set(got)) > 300
    again = PlaceClusterer(eps_m=1.5)  # restored from the per-frame log: the same index
    again.restore(np.array(got[:2000], np.int32), places.place_tag[: max(got[:2000]) + 1], positions[:2000])
    assert [again.add(p, t) for p, t in zip(positions[2000:], tags[2000:])] == got[2000:]


@pytest.mark.parametrize("every", [1, 7, 64])
def test_timeline_kept_maxima_match_a_full_pass(monkeypatch, every):
    monkeypatch.setattr(tl, "CHECKPOINT_EVERY", every)
    rng = np.random.default_rng(every)
    line, n_rec, t = tl.Timeline(), 0, 0.0
    for frame in range(400):
        t += 1.0
        for _ in range(int(rng.integers(0, 4))):
            rec = int(rng.integers(0, n_rec + 1)) if rng.random() < 0.9 else n_rec
            n_rec = max(n_rec, rec + 1)
            line.on_state(rec, State(t, tuple(rng.normal(size=3)), (0.1, 0.1, 0.1), 0, 0, True, float("nan"), 0, t),
                          False)
            line.on_observation(rec, frame)
    merged_t = np.where(rng.random(n_rec) < 0.1, rng.uniform(0, t, n_rec), np.inf)
    queries = [(float(q), int(q)) for q in rng.uniform(0, t + 2, 60)] + [(t + 1, 400), (0.5, 0)]
    for tq, nf in queries:  # in no particular order: kept copies are made on the way
        got = line.rows_at(tq, nf, merged_t)
        idx, rows, last_frame = rows_full_pass(line, tq, nf, merged_t)
        assert np.array_equal(got.index, idx) and np.array_equal(got.last_frame, last_frame)
        assert np.array_equal(got.position_w, line.st_pos.view()[rows])


def test_object_grid_finds_what_measuring_every_object_finds():
    from directme.memory import MemoryConfig
    from directme.memory.object_store import ObjectStore

    rng = np.random.default_rng(5)
    objs = ObjectStore(MemoryConfig())

    class Rec:  # what _sync reads of a record
        def __init__(self, i):
            self.index, self.merged_into, self.pres_l, self.belief = i, None, [], 0.0
            self.state = type("S", (), {"present": True})()

    recs = []
    for step in range(600):
        if not recs or rng.random() < 0.4:
            objs.new_record()  # grows the columns; the record is replaced by the stand-in below
            recs.append(Rec(len(objs.records) - 1))
            objs.records[-1] = recs[-1]
        rec = recs[int(rng.integers(len(recs)))]
        centre = rng.uniform(-30, 30, 3) * [1, 1, 0.05] if rng.random() < 0.97 else np.array([np.nan, 0, 0])
        rec.position, rec.extent = centre, rng.uniform(0.05, 2.5, 3)
        if rng.random() < 0.05:
            rec.merged_into = (1.0, recs[0])
        objs._sync(rec)
        for _ in range(3):
            p, r = rng.uniform(-35, 35, 3) * [1, 1, 0.05], float(rng.choice([0.3, 1.0, 4.0, 80.0]))
            assert [x.index for x in objs.nearby(p, r)] == nearby_full_pass(objs, p, r)
        pts = p + rng.uniform(-4, 4, (int(rng.integers(1, 5)), 3)) * [1, 1, 0.1]  # a frame's instances
        assert objs.nearby_each(pts, r) == [[x.index for x in objs.nearby(q, r)] for q in pts]
