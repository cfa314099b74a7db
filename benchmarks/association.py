"""Object association against simulator ground truth: duplicates and wrong merges per episode.

    python benchmarks/association.py [--seeds 0 1 2] [--minutes 3 6 10] [--noise realistic] [--max-yaw-deg 6]
                                     [--exact-poses] [--only-relocalised] [--jobs 2]
                                     [--heading-from-structure 0|1] [--set FIELD=VALUE ...]

``--exact-poses`` keeps every other noise of the preset but gives the memory the true camera poses (no
odometry drift): what is left is the association's own error.

For each (seed, minutes) the episode streams through oracle perception into a SpatialMemory, with and
without landmark relocalisation; prints one line per run and, last, ``error_rate=<number>`` (duplicates
plus wrong merges over GT objects, pooled over all runs with relocalisation on). ``--only-relocalised`` skips
the runs without relocalisation; ``--jobs N`` streams N episodes at a time (lines still in order).
"""
from __future__ import annotations

import argparse
import dataclasses
from contextlib import nullcontext
from multiprocessing import Pool

import numpy as np

from directme.memory import MemoryConfig
from directme.sim.oracle import get_preset
from directme.sim import generate_episode
from directme.sim.scoring import association_score, stream_episode


def ego_error_m(ep, mem) -> float:
    """Mean distance between the memory's ego positions and the true camera positions."""
    T = mem.ego.T.view()
    return float(np.mean([np.linalg.norm(T[i][:3, 3] - f.T_world_cam.t) for i, f in enumerate(ep.frames())]))


def run_one(run: tuple) -> tuple[str, int, int]:
    """Stream one episode; (printed line, duplicates + merges, GT objects)."""
    seed, minutes, reloc, noise, extra = run
    ep = generate_episode(seed=seed, minutes=minutes)
    mem, votes = stream_episode(ep, noise, seed, relocalisation__enabled=reloc, **extra)
    s = association_score(mem, votes)
    line = (f"seed={seed} minutes={minutes:g} relocalize={int(reloc)} gt_objects={s.n_gt} "
            f"duplicates={s.duplicates} merges={s.merges} error_rate={s.error_rate:.3f} "
            f"relocalisations={len(mem.pose.relocalisation.corrections)} "
            f"heading_corrections={len(mem.pose.heading.corrections)} "
            f"ego_error_mean_m={ego_error_m(ep, mem):.2f}")
    return line, s.duplicates + s.merges, s.n_gt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--minutes", type=float, nargs="+", default=[3.0, 6.0, 10.0])
    ap.add_argument("--noise", default="realistic")
    ap.add_argument("--max-yaw-deg", type=float, default=None, help="MemoryConfig.relocalisation.max_yaw_deg (default: off)")
    ap.add_argument("--min-baseline-m", type=float, default=None, help="MemoryConfig.relocalisation.min_baseline_m")
    ap.add_argument("--heading-from-structure", type=int, choices=(0, 1), default=None,
                    help="MemoryConfig.heading.enabled (default: the config's)")
    ap.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE",
                    help="other MemoryConfig fields (numbers; 0/1 for flags), e.g. --set heading.noise_deg=2")
    ap.add_argument("--exact-poses", action="store_true", help="no pose drift (the preset's other noise kept)")
    ap.add_argument("--only-relocalised", action="store_true", help="skip the runs without relocalisation")
    ap.add_argument("--jobs", type=int, default=1, help="episodes streamed in parallel (processes)")
    a = ap.parse_args()
    noise = get_preset(a.noise)
    if a.exact_poses:
        noise = dataclasses.replace(noise, heading_drift_deg_per_min=0.0, translation_drift_frac=0.0)
    extra = {k: v for k, v in (("relocalisation__max_yaw_deg", a.max_yaw_deg),
                               ("relocalisation__min_baseline_m", a.min_baseline_m),
                               ("heading__enabled", None if a.heading_from_structure is None
                                else bool(a.heading_from_structure))) if v is not None}
    defaults = MemoryConfig()
    for item in a.set:
        key, _, value = item.partition("=")
        section, _, name = key.partition(".")
        if not hasattr(getattr(defaults, section, None), name):
            ap.error(f"--set {item}: MemoryConfig has no field {key!r} (SECTION.FIELD, e.g. heading.noise_deg)")
        default = getattr(getattr(defaults, section), name)
        extra[f"{section}__{name}"] = type(default)(float(value))  # int / bool / float as the field is
    runs = [(seed, minutes, reloc, noise, extra) for seed in a.seeds for minutes in a.minutes
            for reloc in ((True,) if a.only_relocalised else (False, True))]
    pooled = {True: [0, 0], False: [0, 0]}
    with Pool(a.jobs, maxtasksperchild=1) if a.jobs > 1 else nullcontext() as pool:
        results = pool.imap(run_one, runs) if pool is not None else map(run_one, runs)
        for (seed, minutes, reloc, *_), (line, errors, n_gt) in zip(runs, results):
            pooled[reloc][0] += errors
            pooled[reloc][1] += n_gt
            print(line, flush=True)
    if not a.only_relocalised:
        print(f"error_rate_without_relocalisation={pooled[False][0] / max(pooled[False][1], 1):.3f}")
    print(f"error_rate={pooled[True][0] / max(pooled[True][1], 1):.3f}")


if __name__ == "__main__":
    main()
