"""The day-scale indexes against the full passes they replace, on a saved day's memory, in one process.

    python benchmarks/day_stream.py --hours 16 --keep /tmp/day16      # once: a 16-hour memory
    python benchmarks/day_index_ab.py /tmp/day16 [--calls 300]

For each index (directme/memory/reference.py has the full passes): the median microseconds per call of the
index and of the full pass, alternating call by call, and that they give the same result every time:
``Timeline.rows_at`` at random past times (kept per-object maxima vs every log entry), ``ObjectStore.nearby``
around the wearer's logged positions (grid cells vs every object), ``PlaceClusterer.add`` of the day's last
frames (a tag's centre array vs every place of the tag).
"""
from __future__ import annotations

import argparse
import copy
import time

import numpy as np

from directme.memory import SpatialMemory
from directme.memory.reference import nearby_full_pass, place_full_pass, rows_full_pass


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, (time.perf_counter() - t0) * 1e6


def report(name: str, new_us: list[float], old_us: list[float], extra: str = "") -> None:
    print(f"{name}: index_us={np.median(new_us):.1f} full_pass_us={np.median(old_us):.1f} "
          f"speedup={np.median(old_us) / np.median(new_us):.1f} calls={len(new_us)} same=yes{extra}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("memory", help="a saved memory (day_stream.py --keep)")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    mem = SpatialMemory.load(a.memory)
    rng = np.random.default_rng(a.seed)
    objs, ego = mem.objects, mem.ego
    n_rec, F = objs.n_records, len(ego.t)
    print(f"objects={len(mem.as_of(mem.latest_t_s).objects)} records={n_rec} ego_frames={F} "
          f"state_rows={len(objs.timeline.st_t)} observations={len(objs.timeline.obs_rec)} "
          f"places={len(mem.places.place_tag)}")

    new, old = [], []
    merged = objs.merged_t[:n_rec]
    for _ in range(a.calls):
        t = float(rng.uniform(0, mem.latest_t_s))
        n = ego.n_frames_at(t)
        got, us_new = timed(objs.timeline.rows_at, t, n, merged)
        (idx, rows, last_frame), us_old = timed(rows_full_pass, objs.timeline, t, n, merged)
        assert np.array_equal(got.index, idx) and np.array_equal(got.last_frame, last_frame)
        new.append(us_new)
        old.append(us_old)
    report("rows_at", new, old)

    new, old = [], []
    positions = ego.T.view()[:, :3, 3].astype(np.float64)
    radius = mem.cfg.association.max_reentry_m
    for _ in range(a.calls):
        p = positions[int(rng.integers(F))] + rng.normal(0, 1.0, 3) * [1, 1, 0] - [0, 0, 0.6]
        got, us_new = timed(objs.nearby, p, radius)
        ref, us_old = timed(nearby_full_pass, objs, p, radius)
        assert [r.index for r in got] == ref
        new.append(us_new)
        old.append(us_old)
    report("nearby", new, old, f" radius_m={radius}")

    places = mem.places
    tags = [ego.tag_of(i) or "unknown" for i in range(F - a.calls, F)]
    start = copy.deepcopy(places)
    start.restore(np.array(places.frame_place[: F - a.calls], np.int32),
                  places.place_tag[: max(places.frame_place[: F - a.calls]) + 1], positions[: F - a.calls])
    new, old = [], []
    for k, i in enumerate(range(F - a.calls, F)):
        ref, us_old = timed(place_full_pass, start._sums, start._counts, start.place_tag, positions[i], tags[k],
                            start.eps_m)
        got, us_new = timed(start.add, positions[i], tags[k])
        assert got == (ref if ref >= 0 else len(start.place_tag) - 1)
        new.append(us_new)
        old.append(us_old)
    report("places_add", new, old)


if __name__ == "__main__":
    main()
