"""`directme doctor` checks for the MLLM answerers: tiny random Qwen2.5-VL / Qwen3-VL builds
(no weights, no network) answer a multiple-choice question end to end through ``Agent.ask``,
with option probabilities that sum to 1. Each check returns a one-line summary or raises."""
from __future__ import annotations

import math
import tempfile
import time
from typing import Callable

import numpy as np

from ..errors import BackendError
from ..geometry import Intrinsics, Pose
from ..types import Frame, InstanceObservation

OPTIONS = ("in front of you", "behind you", "to your left", "to your right")

# level camera looking along world +x (OpenCV z forward = world x, x right = world -y, y down = world -z)
_R_WORLD_CAM = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def sample_frames(n: int = 4, height: int = 48, width: int = 64) -> list[Frame]:
    """A few RGB-D frames at 1 fps walking forward past a "sofa" 2 m ahead, in a living room."""
    K = Intrinsics.from_fov(width, height, 90.0)
    mask = np.zeros((height, width), bool)
    mask[height // 3: 2 * height // 3, width // 3: 2 * width // 3] = True
    frames = []
    for i in range(n):
        rgb = np.random.default_rng(i).integers(0, 256, (height, width, 3), dtype=np.uint8)
        inst = InstanceObservation(track_id=1, label="sofa", score=0.9, mask=mask)
        frames.append(Frame(t_s=float(i), rgb=rgb, depth_m=np.full((height, width), 2.0, np.float32),
                            T_world_cam=Pose.from_Rt(_R_WORLD_CAM, [0.1 * i, 0.0, 1.6]), intrinsics=K, index=i,
                            meta={"instances": [inst], "scene_tag": "living room"}))
    return frames


def ask_tiny(family: str, model_dir: str):
    """Stream ``sample_frames`` through an Agent answering with the model in ``model_dir``."""
    from ..agent import Agent

    agent = Agent({"query": {"embedder": "string"},
                   "answerer": {"name": "transformers", "options": {"model": model_dir}}})
    for f in sample_frames():
        agent.observe(f)
    agent.flush()
    return agent.ask("Where is the sofa now?", options=OPTIONS)


def _check(family: str) -> Callable[[], str]:
    def run() -> str:
        from ..answerers.tiny import build_tiny_vl

        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"directme-tiny-{family}-") as d:
            build_tiny_vl(family, d)
            ans = ask_tiny(family, d)
        total = sum((ans.option_scores or {}).values())
        if ans.letter is None or not math.isclose(total, 1.0, abs_tol=1e-6):
            raise BackendError(f"tiny {family}: expected a letter and option probabilities summing to 1, "
                               f"got letter={ans.letter} sum={total:.6f} flags={tuple(map(str, ans.flags))}")
        return (f"tiny random {family} answered via Agent.ask: letter {ans.letter}, p={ans.confidence:.2f}, "
                f"sum(p)={total:.3f}, {time.perf_counter() - t0:.1f} s (random weights: the answer is meaningless)")
    return run


def checks() -> list[tuple[str, Callable[[], str]]]:
    return [(f"answerer transformers ({family}, tiny random)", _check(family)) for family in ("qwen2_5_vl", "qwen3_vl")]
