"""Memory update speed of this checkout against another one, alternated in one process.

    python benchmarks/memory_speed_ab.py --base ../other-checkout [--pairs 12] [--minutes 3] [--seed 0]

On a shared machine the speed drifts by a third within minutes, so two benchmark processes run minutes apart
cannot show a 10-20% change. This loads the ``directme`` package of ``--base`` (a checkout, e.g. a ``git
worktree`` of the commit to compare with) under another name beside this checkout's, feeds both memories the
same simulator episode (oracle perception, noise ``none``, perception precomputed once and converted to the
base package's types), checks that both build the same objects, and times them episode by episode in turn.

Prints ``base_runs=`` and ``new_runs=`` (CPU frames/s of each run), their medians, and last
``paired_ratio=<median of new / base over the pairs>``.
"""
from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from directme.memory import SpatialMemory
from directme.sim import OraclePerception, generate_episode

ALIAS = "directme_ab_base"


def load_base(checkout: Path, workdir: Path):
    """The ``directme`` package of ``checkout`` imported as ``ALIAS`` (its modules import each other relatively)."""
    src = checkout / "directme"
    if not (src / "__init__.py").is_file():
        raise SystemExit(f"--base {checkout}: no directme package there")
    shutil.copytree(src, workdir / ALIAS)
    sys.path.insert(0, str(workdir))
    return importlib.import_module(ALIAS)


def to_base_types(fp, base):
    """One FramePerception rebuilt with the base package's types (its memory checks them by class)."""
    f, K = fp.frame, fp.frame.intrinsics
    intr = base.geometry.Intrinsics(K.fx, K.fy, K.cx, K.cy, K.width, K.height)
    frame = base.types.Frame(f.t_s, f.rgb, f.depth_m, base.geometry.Pose(f.T_world_cam.matrix), intr, index=f.index)
    insts = tuple(base.types.InstanceObservation(i.track_id, i.label, i.score, i.mask, box_xyxy=i.box_xyxy,
                                                 embedding=i.embedding) for i in fp.instances)
    return base.types.FramePerception(frame, insts, fp.scene_tag)


def timed(memory_cls, frames) -> tuple[float, object]:
    mem = memory_cls()
    c0 = time.process_time()
    mem.update_many(frames)
    return len(frames) / (time.process_time() - c0), mem


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="the other checkout (its directme/ is compared)")
    ap.add_argument("--pairs", type=int, default=12)
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.pairs < 1:
        ap.error("--pairs must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        base = load_base(a.base.resolve(), Path(tmp))
        importlib.import_module(f"{ALIAS}.memory")
        ep = generate_episode(seed=a.seed, minutes=a.minutes)
        oracle = OraclePerception(ep, noise="none", seed=a.seed)
        new_frames = [oracle.perceive(f) for f in ep.frames()]
        base_frames = [to_base_types(fp, base) for fp in new_frames]
        _, mb = timed(base.memory.SpatialMemory, base_frames)
        _, mn = timed(SpatialMemory, new_frames)
        same = [r.position.tolist() for r in mb.objects.records] == [r.position.tolist() for r in mn.objects.records]
        print(f"same_objects={same}")
        base_runs, new_runs = [], []
        for _ in range(a.pairs):
            base_runs.append(timed(base.memory.SpatialMemory, base_frames)[0])
            new_runs.append(timed(SpatialMemory, new_frames)[0])
    print("base_runs=" + ",".join(f"{x:.1f}" for x in base_runs))
    print("new_runs=" + ",".join(f"{x:.1f}" for x in new_runs))
    print(f"base_frames_per_s={float(np.median(base_runs)):.1f}")
    print(f"new_frames_per_s={float(np.median(new_runs)):.1f}")
    print(f"paired_ratio={float(np.median(np.array(new_runs) / np.array(base_runs))):.3f}")


if __name__ == "__main__":
    main()
