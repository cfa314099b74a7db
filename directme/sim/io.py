"""Episode on disk (format in docs/simulator.md) and the UCS-Bench JSON export.

    DIR/episode.json    layout, intrinsics, objects (label, size, position history), events
    DIR/frames.npz      per frame: t_s, T_world_cam, room_id, visible ids / pixel counts
    DIR/questions.json  questions (directme.types.Question fields)
    DIR/ucsbench.json   the same questions in UCS-Bench's schema
    DIR/frames/         optional images: rgb_NNNNNN.png, depth_NNNNNN.png (uint16 mm), inst_NNNNNN.png (uint16)
Without frames/, ``load_episode`` re-renders the images from the scene (bit-identical)."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Union

import numpy as np

from ..errors import InvalidInputError
from ..geometry import Intrinsics, Pose
from ..types import Question
from .episode import Door, Episode, FrameGT, Layout, ObjectGT, RenderedFrame, Room, SimEvent
from .scene import SceneSource

FORMAT = "directme-sim-episode"
VERSION = 1


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return None if math.isinf(x) else float(x)
    return x


def hhmmss(t_s: float) -> str:
    s = int(round(t_s))
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def to_ucsbench(episode: Episode) -> list[dict]:
    """The questions in UCS-Bench's per-video JSON schema (options {"A": ...}, answer_label, qtype)."""
    out = []
    for q in episode.questions:
        out.append({
            "qid": q.qid, "video_uid": episode.video_uid, "question": q.text,
            "question_timestamps": hhmmss(q.t_s), "timestamp_s": q.t_s,
            "options": {letter: text for letter, text in zip(q.letters, q.options)},
            "answer_label": q.answer, "answer": q.options[q.letters.index(q.answer)] if q.answer else "",
            "category": q.category, "subcategory": q.subtask, "qtype": q.qtype,
        })
    return out


def save_episode(episode: Episode, out_dir: Union[str, Path], write_frames: bool = True) -> Path:
    """Write ``episode`` to ``out_dir`` (created); images are streamed frame by frame."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lay = episode.layout
    k = episode.intrinsics
    doc = {
        "format": FORMAT, "version": VERSION, "video_uid": episode.video_uid, "seed": episode.seed,
        "fps": episode.fps, "n_frames": episode.n_frames, "up_world": [0, 0, 1],
        "intrinsics": {"fx": k.fx, "fy": k.fy, "cx": k.cx, "cy": k.cy, "width": k.width, "height": k.height},
        "layout": {"ceiling_m": lay.ceiling_m, "rooms": [vars(r) for r in lay.rooms],
                   "doors": [vars(d) for d in lay.doors], "walls_w": lay.walls_w},
        "objects": [{"object_id": o.object_id, "label": o.label, "size_m": o.size_m, "colour_rgb": o.colour_rgb,
                     "movable": o.movable, "positions_w": o.positions_w, "present": o.present}
                    for o in episode.objects],
        "events": [vars(e) for e in episode.events], "meta": dict(episode.meta), "frames_saved": write_frames,
    }
    (out / "episode.json").write_text(json.dumps(_jsonable(doc), indent=1))
    gts = episode.frames_gt
    offsets = np.cumsum([0] + [len(g.visible_ids) for g in gts])
    np.savez_compressed(
        out / "frames.npz", t_s=np.array([g.t_s for g in gts]),
        T_world_cam=np.stack([g.T_world_cam.matrix for g in gts]) if gts else np.zeros((0, 4, 4)),
        room_id=np.array([g.room_id for g in gts], dtype=np.int32),
        visible_ids=np.array([i for g in gts for i in g.visible_ids], dtype=np.int32),
        visible_pixels=np.array([p for g in gts for p in g.visible_pixels], dtype=np.int32),
        visible_offsets=offsets.astype(np.int64))
    qs = [{"qid": q.qid, "t_s": q.t_s, "text": q.text, "options": q.options, "answer": q.answer,
           "subtask": q.subtask, "category": q.category, "qtype": q.qtype, "meta": dict(q.meta)}
          for q in episode.questions]
    (out / "questions.json").write_text(json.dumps(_jsonable(qs), indent=1))
    (out / "ucsbench.json").write_text(json.dumps(_jsonable(to_ucsbench(episode)), indent=1))
    if write_frames:
        from PIL import Image

        (out / "frames").mkdir(exist_ok=True)
        for i in range(episode.n_frames):
            img = episode.render(i)
            Image.fromarray(img.rgb).save(out / "frames" / f"rgb_{i:06d}.png", compress_level=1)
            mm = np.clip(np.round(img.depth_m * 1000), 0, 65535).astype(np.uint16)
            Image.fromarray(mm).save(out / "frames" / f"depth_{i:06d}.png", compress_level=1)
            Image.fromarray(img.instance_ids.astype(np.uint16)).save(out / "frames" / f"inst_{i:06d}.png",
                                                                       compress_level=1)
    return out


class DiskSource:
    """Reads saved frame images (depth: uint16 millimetres -> metres)."""

    def __init__(self, frames_dir: Path):
        self.dir = frames_dir

    def render(self, index: int) -> RenderedFrame:
        from PIL import Image

        def read(kind: str) -> np.ndarray:
            path = self.dir / f"{kind}_{index:06d}.png"
            if not path.exists():
                raise InvalidInputError(f"{path} is missing; re-save the episode or delete frames/ to re-render")
            return np.asarray(Image.open(path))

        return RenderedFrame(read("rgb"), read("depth").astype(np.float32) / 1000.0, read("inst").astype(np.int32))


def load_episode(episode_dir: Union[str, Path]) -> Episode:
    """Read an episode written by ``save_episode`` (or ``directme sim``)."""
    root = Path(episode_dir)
    path = root / "episode.json"
    if not path.exists():
        raise InvalidInputError(f"{path} not found: not a directme sim episode (write one with `directme sim`)")
    doc = json.loads(path.read_text())
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise InvalidInputError(f"{path}: unsupported format {doc.get('format')!r} v{doc.get('version')}")
    lay = doc["layout"]
    layout = Layout(tuple(Room(**r) for r in lay["rooms"]),
                    tuple(Door(**{**d, "center_xy": tuple(d["center_xy"])}) for d in lay["doors"]),
                    np.asarray(lay["walls_w"], dtype=np.float64), lay["ceiling_m"])
    inf = math.inf
    objects = tuple(ObjectGT(
        object_id=o["object_id"], label=o["label"], size_m=tuple(o["size_m"]),
        positions_w=tuple((t, None if c is None else tuple(c)) for t, c in o["positions_w"]),
        colour_rgb=tuple(o["colour_rgb"]), movable=o["movable"],
        present=tuple((a, inf if b is None else b) for a, b in o["present"])) for o in doc["objects"])
    events = tuple(SimEvent(**{**e, "position_w": None if e["position_w"] is None else tuple(e["position_w"])})
                   for e in doc["events"])
    intr = Intrinsics(**doc["intrinsics"])
    npz = np.load(root / "frames.npz")
    off = npz["visible_offsets"]
    rooms = layout.rooms
    frames_gt = tuple(
        FrameGT(i, float(npz["t_s"][i]), Pose(npz["T_world_cam"][i]), int(npz["room_id"][i]),
                rooms[int(npz["room_id"][i])].room_type,
                tuple(int(v) for v in npz["visible_ids"][off[i]:off[i + 1]]),
                tuple(int(v) for v in npz["visible_pixels"][off[i]:off[i + 1]]))
        for i in range(len(npz["t_s"])))
    qdoc = json.loads((root / "questions.json").read_text()) if (root / "questions.json").exists() else []
    questions = tuple(Question(qid=q["qid"], t_s=q["t_s"], text=q["text"], options=tuple(q["options"]),
                               answer=q["answer"], subtask=q["subtask"], category=q["category"], qtype=q["qtype"],
                               meta=q.get("meta", {})) for q in qdoc)
    if doc.get("frames_saved") and (root / "frames").is_dir():
        source: Any = DiskSource(root / "frames")
    else:
        source = SceneSource(layout, objects, intr, int(doc["seed"]), frames_gt)
    return Episode(video_uid=doc["video_uid"], seed=int(doc["seed"]), fps=float(doc["fps"]), intrinsics=intr,
                   layout=layout, objects=objects, frames_gt=frames_gt, events=events, questions=questions,
                   source=source, meta=doc.get("meta", {}))
