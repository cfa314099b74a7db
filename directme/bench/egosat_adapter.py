"""directme as an EgoSAT model adapter.

EgoSAT's runner loads an adapter module by path (``ADAPTER_PY``), calls ``create_adapter()``
and then ``adapter.run(video_path, queryset_path, pred_flavor, out_json_path)`` once per
interval clip. Point ``ADAPTER_PY`` at this file (``python -c "import
directme.bench.egosat_adapter as m; print(m.__file__)"``). Environment:
``DIRECTME_CONFIG`` (agent config file, optional), ``DIRECTME_FPS`` (frames per second
streamed, default 1), ``MODEL_NAME`` (written into the output).

The clip is streamed causally; each sample is asked at its ``t_eval`` with its four options.
The output follows EgoSAT's raw prediction layout, with ``parsed.ans`` and the per-option
probabilities under ``diagnostics.prompt_and_encoding_debug.cand_conf_probe.p_cond``.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

if __package__ in (None, ""):  # loaded by file path (importlib spec_from_file_location)
    __package__ = "directme.bench"

from . import egosat
from .models import ModelSpec, require_depth_backend
from .runner import StreamRunner, read_video


class DirectmeEgoSATAdapter:
    """Runs directme on one EgoSAT clip + effective queryset and writes its predictions."""

    def __init__(self, model: Optional[ModelSpec] = None, fps: Optional[float] = None,
                 frames: Optional[Callable[[Path, Any], Iterable[Any]]] = None):
        config = os.environ.get("DIRECTME_CONFIG") or None
        self.model = model or ModelSpec("agent", config=config)
        self.fps = fps if fps is not None else _env_fps()
        self._plain_video = frames is None
        self.frames = frames or (lambda video_path, _episode: read_video(Path(video_path), self.fps))
        self.model_name = os.environ.get("MODEL_NAME", "directme")

    def run(self, video_path: Any, queryset_path: Any, pred_flavor: str, out_json_path: Any) -> Path:
        video_path, queryset_path, out_json_path = Path(video_path), Path(queryset_path), Path(out_json_path)
        episode = egosat.load_queryset(queryset_path)
        if self._plain_video:
            require_depth_backend(self.model, "EgoSAT clips (plain videos)", " via DIRECTME_CONFIG")
        model = self.model.build()
        runner = StreamRunner(model, self.frames(video_path, episode), fps=self.fps)
        records = egosat.run_episode(runner, episode, {})
        out = {"dataset": "Ego4D", "task": episode.meta.get("task", ""), "mode": pred_flavor,
               "video_uid": episode.video, "model_name": self.model_name, "model_id": f"directme:{self.model.target}",
               "source_queryset": str(queryset_path), "video_clip": str(video_path),
               "generated_at_unix": time.time(), "params": episode.meta.get("params", {}),
               "samples": [_sample(r, pred_flavor) for r in records]}
        out_json_path.parent.mkdir(parents=True, exist_ok=True)
        out_json_path.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")
        return out_json_path


def _env_fps() -> float:
    """DIRECTME_FPS as frames per second (a finite number > 0), or InvalidInputError naming the variable."""
    import math

    from ..errors import InvalidInputError

    text = os.environ.get("DIRECTME_FPS", "1")
    try:
        fps = float(text)
    except ValueError:
        fps = math.nan
    if not 0 < fps <= 1000:  # NaN fails too
        raise InvalidInputError(f"DIRECTME_FPS must be a number of frames per second in (0, 1000], got {text!r:.40}")
    return fps


def _sample(r: dict, pred_flavor: str) -> dict:
    probe = {"ok": r["p_cond"] is not None, "p_cond": r["p_cond"]}
    return {"idx": r["idx"], "t_eval": r["t_eval"], "t_eval_rel": r["t_eval_rel"] if r["t_eval_rel"] is not None
            else r["t_eval"], "prompt": r["prompt"], "response_text": r["pred"] or r["text"],
            "clean_response": r["pred"] or r["text"], "parsed": {"ans": r["pred"], "conf": r["confidence"]},
            "gen_tokens": [], "gen_token_probs": [], "sent_logp": None, "mean_logp": None,
            "latency_sec": r["latency_s"], "raw": None,
            "diagnostics": {"pred_flavor_active": pred_flavor, "window_start_rel": 0.0, "window_end_rel": r["t_eval"],
                            "entropy": r["entropy"], "prompt_and_encoding_debug": {"cand_conf_probe": probe}}}


def create_adapter() -> DirectmeEgoSATAdapter:
    """EgoSAT's runner contract: a module-level factory returning an object with ``run``."""
    return DirectmeEgoSATAdapter()
