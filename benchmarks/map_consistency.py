"""How consistent the memory's map stays under pose drift: simulator episodes with the oracle's `realistic`
noise (drifting input poses), measured against the simulator's ground truth.

    python benchmarks/map_consistency.py [--seeds 128 129] [--minutes 10] [--noise realistic|none] [--config JSON]

Two figures per seed, both in metres along the ground:
- ``pair_err``: for every pair of objects that never move in the episode (each with its node seen most often,
  at least 3 times, among the nodes whose sightings are mostly of it: ``sim.scoring.association_score``), how far the vector between their nodes at the end differs from the
  vector between their true places (median, 90th percentile). A global offset or a constant heading error of
  the whole map costs nothing here; parts of the map mapped with different drift do.
- ``revisit_err``: on every frame of a visit to a room visited before, how far the wearer's pose error (the
  memory's corrected camera position minus the true one) differs from that error in the middle of the
  previous visit to that room (median, 90th percentile): what a remembered object of that room is off by
  when seen again, before any correction of the object itself.
The input poses' own ``revisit_err`` (no correction) is printed beside it.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from typing import Optional

import numpy as np

from directme.agent import Agent
from directme.config import oracle_config
from directme.sim import generate_episode
from directme.sim.scoring import association_score, gt_object


def revisit_errors(err_xy: np.ndarray, rooms: list) -> np.ndarray:
    """|e(t) - e(mid of the previous visit to the same room)| for every frame of a revisit."""
    visits: list[list] = []  # [room, first frame, last frame]
    for i, r in enumerate(rooms):
        if not visits or visits[-1][0] != r:
            visits.append([r, i, i])
        visits[-1][2] = i
    out = []
    for j, (room, a, b) in enumerate(visits):
        prev = [v for v in visits[:j] if v[0] == room and room is not None]
        if prev:
            mid = (prev[-1][1] + prev[-1][2]) // 2
            out.extend(np.linalg.norm(err_xy[a:b + 1] - err_xy[mid], axis=1).tolist())
    return np.asarray(out)


def run_seed(seed: int, minutes: float, noise: str = "realistic", config: Optional[dict] = None) -> dict:
    """``config``: agent config sections over the defaults (``{"memory": {"scan": {"enabled": False}}}``)."""
    ep = generate_episode(seed=seed, minutes=minutes)
    agent = Agent(oracle_config(noise, seed, config), episode=ep)
    mem = agent.memory
    sightings: dict[str, Counter] = defaultdict(Counter)  # node id -> true object id -> sightings
    err_in, err_mem, rooms = [], [], []
    for frame in ep.frames():
        gt = ep.frames_gt[frame.index]
        for fp in agent.perception.process(frame):
            for tid, nid in mem.update(fp).items():
                sightings[nid][gt_object(tid)] += 1
            T_in = np.asarray(fp.frame.T_world_cam.matrix)
            t_true = gt.T_world_cam.t
            err_in.append((T_in[:3, 3] - t_true)[:2])
            err_mem.append(((mem.T_mem_input @ T_in)[:3, 3] - t_true)[:2])
            room = ep.layout.room_at(*t_true[:2])
            rooms.append(None if room is None else id(room))
    snap = mem.as_of(mem.latest_t_s)
    never_moved = {o.object_id: o for o in ep.objects
                   if not any(e.object_id == o.object_id for e in ep.events)}
    best: dict[int, tuple[np.ndarray, int]] = {}  # true object -> (its best-seen node's place, that node's sightings)
    for nid, g in association_score(mem, sightings).node_gt.items():  # merged nodes' sightings count for the survivor
        node = snap.objects[nid]
        if g in never_moved and node.n_obs >= 3 and (g not in best or node.n_obs > best[g][1]):
            best[g] = (np.asarray(node.position_w, dtype=np.float64)[:2], node.n_obs)
    ids = sorted(best)
    P = np.array([best[g][0] for g in ids]).reshape(-1, 2)
    G = np.array([np.asarray(never_moved[g].positions_w[0][1], dtype=np.float64)[:2] for g in ids]).reshape(-1, 2)
    iu = np.triu_indices(len(ids), 1)
    pair = np.linalg.norm((P[:, None] - P[None]) - (G[:, None] - G[None]), axis=2)[iu]
    rv_in = revisit_errors(np.asarray(err_in), rooms)
    rv_mem = revisit_errors(np.asarray(err_mem), rooms)
    return {"objects": len(ids), "pair": pair, "revisit_in": rv_in, "revisit_mem": rv_mem}


def _q(x: np.ndarray, q: float) -> float:
    return float(np.percentile(x, q)) if len(x) else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[128, 129])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--noise", default="realistic", choices=("realistic", "none"),
                    help="the oracle's noise preset (none: exact poses, a check of the measure itself)")
    ap.add_argument("--config", type=json.loads, default=None,
                    help='agent config sections over the defaults, as JSON: \'{"memory": {"scan": {"enabled": false}}}\'')
    a = ap.parse_args()
    pairs, rv_in, rv_mem = [], [], []
    for seed in a.seeds:
        r = run_seed(seed, a.minutes, a.noise, a.config)
        pairs.append(r["pair"]); rv_in.append(r["revisit_in"]); rv_mem.append(r["revisit_mem"])
        print(f"seed={seed} minutes={a.minutes:g} noise={a.noise} objects={r['objects']} pair_err_med={_q(r['pair'], 50):.2f} "
              f"pair_err_p90={_q(r['pair'], 90):.2f} revisit_err_med={_q(r['revisit_mem'], 50):.2f} "
              f"revisit_err_p90={_q(r['revisit_mem'], 90):.2f} input_revisit_err_med={_q(r['revisit_in'], 50):.2f} "
              f"input_revisit_err_p90={_q(r['revisit_in'], 90):.2f}", flush=True)
    p, m, i = np.concatenate(pairs), np.concatenate(rv_mem), np.concatenate(rv_in)
    print(f"pooled pair_err_med={_q(p, 50):.2f} pair_err_p90={_q(p, 90):.2f} revisit_err_med={_q(m, 50):.2f} "
          f"revisit_err_p90={_q(m, 90):.2f} input_revisit_err_med={_q(i, 50):.2f} input_revisit_err_p90={_q(i, 90):.2f}")


if __name__ == "__main__":
    main()
