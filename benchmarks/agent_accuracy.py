"""The agent's accuracy on simulator episodes through the Agent with oracle perception (noise ``none``
and ``realistic``), pooled over seeds, per episode length, beside the demo's baselines.

    python benchmarks/agent_accuracy.py [--seeds 0 1 2 3 4 5] [--minutes 10 [20 60]] [--noise none realistic]
                                        [--phrasings templates|dev|heldout] [--jobs 2]
                                        [--perception oracle truth-fed [--depth-pose PRESET] [--poses given]]

``--perception truth-fed`` adds a column "truth-fed": the model pipeline with each network's forward
replaced by a stand-in returning the ground truth in its own output format (directme.sim.truthfed);
``--perception truth-fed`` alone measures only that column.

Per episode length: one line per (seed, noise), a per-subtask table - each accuracy followed by its 95%
interval over seeds (bench.metrics.seed_interval: seeds resampled; six seeds leave a subtask of 20 questions
per episode several points either way) - then ``overall_<noise>=<acc>`` (and,
for the last length, the same lines again without a suffix as the summary), ``peak_rss_mb=`` of this
process (or of the largest worker with ``--jobs``: episodes streamed in parallel, the figures unchanged).
The default is 10-minute episodes on seeds 0-5. ``--phrasings`` asks the same questions in other
words (sim/questions.py): ``dev`` phrasings are for development; ``heldout`` phrasings are reserved for this
benchmark and only read in aggregate. Baselines (current frame, chance) are computed with noise ``none``.
"""
from __future__ import annotations

import argparse
import time
from contextlib import nullcontext
from typing import Optional
from multiprocessing import Pool

from directme.bench.memory_use import peak_rss_mb
from directme.bench.metrics import seed_interval
from directme.cli import configure_logging
from directme.commands.demo import evaluate_episode, summarise
from directme.sim import generate_episode

NOISES = ("none", "realistic")
TRUTH_FED = "truth-fed"  # the column of the truth-fed model pipeline


def run_seed(job: tuple[float, int, tuple[str, ...], str, dict]) -> dict[str, tuple[str, list]]:
    """One episode under each noise (or TRUTH_FED): noise -> (its progress line, its question records)."""
    minutes, seed, noises, phrasings, truth_fed, spatial = job
    t0 = time.perf_counter()
    ep = generate_episode(seed=seed, minutes=minutes, phrasings=phrasings, spatial_questions=spatial)
    out = {}
    for noise in noises:
        if noise == TRUTH_FED:
            r = evaluate_episode(ep, "none", seed, baselines=False, truth_fed=truth_fed)
        else:
            r = evaluate_episode(ep, noise, seed, baselines=noise == "none")
        out[noise] = (f"minutes={minutes:g} seed={seed} noise={noise} phrasings={phrasings} overall={r['overall']:.3f} "
                      f"questions={r['n_questions']} abstained={sum('abstained' in q['flags'] for q in r['questions'])} "
                      f"wall_s={time.perf_counter() - t0:.0f}", r["questions"])
    return out


def run_length(minutes: float, seeds: list[int], noises: list[str], phrasings: str, jobs: int = 1,
               truth_fed: Optional[dict] = None, spatial: bool = False) -> dict:
    """Pooled results per noise; ``jobs`` > 1 streams that many episodes at a time in worker processes (the
    figures do not depend on it: every episode is seeded; lines still come in seed order)."""
    runs: dict[str, list] = {n: [] for n in noises}
    per_seed: dict[str, dict[str, list[tuple[int, int]]]] = {n: {} for n in noises}  # noise -> subtask -> (correct, n)
    work = [(minutes, seed, tuple(noises), phrasings, truth_fed or {}, spatial) for seed in seeds]
    with Pool(jobs, maxtasksperchild=1) if jobs > 1 else nullcontext() as pool:
        for res in (pool.imap(run_seed, work) if pool is not None else map(run_seed, work)):
            for noise, (line, questions) in res.items():
                runs[noise].extend(questions)
                tally = summarise(questions)
                for s, n in tally["counts"].items():
                    per_seed[noise].setdefault(s, []).append((tally["correct"][s], n))
                per_seed[noise].setdefault("overall", []).append((sum(tally["correct"].values()), len(questions)))
                print(line, flush=True)
    out = {n: summarise(q) for n, q in runs.items()}
    for n in noises:
        out[n]["interval"] = {s: seed_interval(v) for s, v in per_seed[n].items()}
    return out


def print_table(minutes: float, res: dict) -> None:
    first = next(iter(res.values()))
    base = res["none"].get("baselines_per_subtask") if "none" in res else None
    head = " ".join(f"{n[:7]:>7s} {'95% over seeds':>13s}" for n in res)
    print(f"--- {minutes:g}-minute episodes")
    names = list(base or {})
    print(f"{'subtask':40s} {'n':>4s} {head}" + "".join(f" {b[:7]:>7s}" for b in names))
    for s in first["per_subtask"]:
        accs = " ".join(f"{r['per_subtask'].get(s, float('nan')):7.3f} {_interval(r, s):>13s}" for r in res.values())
        extra = "".join(f" {base[b][s]:7.3f}" for b in names)
        print(f"{s:40s} {first['counts'][s]:4d} {accs}{extra}")
    if "none" in res:
        for name, acc in res["none"]["baselines"].items():
            print(f"baseline_{name}_{minutes:g}min={acc:.3f}")
    for n, r in res.items():
        print(f"overall_{n}_{minutes:g}min={r['overall']:.3f} interval95_over_seeds={_interval(r, 'overall')}")


def _interval(r: dict, subtask: str) -> str:
    lo_hi = r.get("interval", {}).get(subtask)
    return "-" if lo_hi is None else f"{lo_hi[0]:.3f}-{lo_hi[1]:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    ap.add_argument("--minutes", type=float, nargs="+", default=[10.0], help="episode lengths (default 10)")
    ap.add_argument("--noise", nargs="+", default=list(NOISES), choices=NOISES)
    ap.add_argument("--jobs", type=int, default=1, help="episodes streamed in parallel (processes; default 1)")
    ap.add_argument("--phrasings", default="templates", choices=("templates", "dev", "heldout"),
                    help="the words the simulator asks its questions in (default %(default)s)")
    ap.add_argument("--perception", nargs="+", default=["oracle"], choices=("oracle", TRUTH_FED),
                    help="oracle (columns per --noise) and/or truth-fed (one more column; default oracle)")
    ap.add_argument("--depth-pose", default="default", help="truth-fed: the DA3 preset (default: the pipeline's)")
    ap.add_argument("--poses", default="none", choices=("none", "given"),
                    help="truth-fed: frames carry camera poses and intrinsics (given) or only RGB (none)")
    ap.add_argument("--spatial", action="store_true",
                    help="also ask the measurement kinds (sizes, room areas, appearance order, routes, closest-point "
                         "distances, counts in this room) on episodes whose instance sizes vary around their class "
                         "size; numeric answers score their mean relative accuracy (MRA, thresholds 0.50-0.95)")
    a = ap.parse_args()
    configure_logging()  # the model packages' INFO lines (DA3's, with --perception truth-fed) stay off stdout
    modes = (list(a.noise) if "oracle" in a.perception else []) + ([TRUTH_FED] if TRUTH_FED in a.perception else [])
    truth_fed = {"depth_pose": a.depth_pose, "poses": a.poses}
    res: dict = {}
    for minutes in a.minutes:
        res = run_length(minutes, a.seeds, modes, a.phrasings, max(1, a.jobs), truth_fed, a.spatial)
        print_table(minutes, res)
        print(f"peak_rss_mb={peak_rss_mb(children=True):.0f}", flush=True)
    for n in reversed(list(res)):  # the last length, unsuffixed (realistic first, none last)
        print(f"overall_{n}={res[n]['overall']:.3f}")


if __name__ == "__main__":
    main()
