"""Live 3D view of the stream and the memory in rerun (extra ``viz``; rerun-sdk imported lazily).

Everything is logged on the ``stream_time`` timeline (seconds), so scrubbing the viewer shows the
memory as it was. Entity paths (world frame = the memory's world frame):

- ``world/camera`` camera pose; ``world/camera/image`` pinhole + RGB; ``.../depth``;
  ``.../instances`` (segmentation, one id per track); ``.../detections`` (boxes, labels);
- ``world`` carries the ``AnnotationContext``: one class id per object class (label and colour from
  ``palette.ClassPalette``), so the viewer shows a legend and every class is its own subtree;
- ``world/trajectory``; ``world/objects/<class>/<node id>``: one entity per object (its anchor, labelled,
  class id; grey "(gone)" once gone), logged when it changes, so its history is on the timeline, with
  ``.../history`` (the path through its placements) once it moved: hide a class by toggling
  ``world/objects/<class>``; ``world/places`` (ellipsoids with scene tags); ``world/graph/edges``;
  ``stats/objects_in_memory``;
- ``world/ego``: the wearer's ego frame (x forward, y left, z up) as a ``Transform3D`` with its axes drawn,
  and ``world/ego/clock`` (a 12-hour ring, 12 o'clock ahead) that moves with it;
- at each question: ``world/ego/relation`` (arrows from the wearer, in the ego frame),
  ``world/question/subgraph`` (the objects the answer used, highlighted), ``question/answer``
  (markdown) and ``answers`` (a text log).
"""
from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from .._lazy import require
from ..geometry import Intrinsics
from ..types import Frame, FramePerception
from .common import (answer_line, answer_targets, ego_frame_at, graph_edges, labels_of, node_position, short_text,
                     trajectory_w)
from .palette import ClassPalette, class_key

TIMELINE = "stream_time"
_GONE_RGB = (150, 150, 150)
_HIGHLIGHT_RGB = (230, 30, 30)
_MAX_TRAJ_POINTS = 2000
_CLOCK_RADIUS_M = 0.6  # the ego clock ring around the wearer


def _strided(frame: Frame, max_side: int) -> tuple[int, Optional[Intrinsics]]:
    """Integer subsampling step for logging, and the intrinsics of the subsampled image."""
    step = max(1, math.ceil(max(frame.shape_hw) / max(1, max_side)))
    k = frame.intrinsics
    if k is None or step == 1:
        return step, k
    h, w = frame.rgb[::step, ::step].shape[:2]
    return step, Intrinsics(k.fx / step, k.fy / step, k.cx / step, k.cy / step, w, h)


def _blueprint() -> Any:
    """Default viewer layout: the 3D world beside the camera image, the answer and the answer log."""
    rrb = require("rerun.blueprint", "viz", "rerun-sdk")
    return rrb.Blueprint(rrb.Horizontal(
        rrb.Spatial3DView(origin="world", name="world (memory)"),
        rrb.Vertical(rrb.Spatial2DView(origin="world/camera/image", name="camera"),
                     rrb.TextDocumentView(origin="question", name="last answer"),
                     rrb.TextLogView(origin="answers", name="answers"),
                     rrb.TimeSeriesView(origin="stats", name="objects in memory")),
        column_shares=[3, 2]))


class RerunLogger:
    """Logs frames, memory snapshots and answers to an .rrd file (``path``) or a live viewer (``serve``)."""

    def __init__(self, path: Union[str, Path, None] = None, serve: bool = False, app_id: str = "directme",
                 image_max_side: int = 320, jpeg_quality: int = 80, memory: bool = False) -> None:
        self.rr = require("rerun", "viz", "rerun-sdk")
        self.rec = self.rr.RecordingStream(app_id)
        self.url: Optional[str] = None
        self.path = Path(path) if path is not None else None
        self._memory = None
        layout = _blueprint()
        if memory:  # kept in memory (tests, notebooks): ``rrd_bytes()`` gives the .rrd content
            self._memory = self.rec.memory_recording()
            self.rec.send_blueprint(layout)
        elif self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.rec.save(str(self.path), default_blueprint=layout)
        elif serve:
            # rerun 0.33: serve_grpc(default_blueprint=...) deadlocks for a non-global recording
            # stream; serving first and sending the layout afterwards does the same without it
            self.url = self.rec.serve_grpc(grpc_port=_free_port())
            self.rec.send_blueprint(layout)
        self.image_max_side = int(image_max_side)
        self.jpeg_quality = int(jpeg_quality)
        self._up_logged = False
        self.palette = ClassPalette()
        self._objects: dict[str, tuple] = {}  # node id -> (entity path, what was last logged)
        self._clock_logged = False

    def _class_ids(self, labels: list[str]) -> list[int]:
        """Class ids of ``labels``; a new class extends the palette and re-logs the annotation context."""
        grown = self.palette.with_labels(labels)
        if grown is not self.palette:
            self.palette = grown
            rr = self.rr
            infos = [rr.AnnotationInfo(id=i + 1, label=c, color=tuple(int(v) for v in grown.color(c)))
                     for i, c in enumerate(grown.classes)]
            self.rec.log("world", rr.AnnotationContext([rr.ClassDescription(info=i) for i in infos]), static=True)
        return [self.palette.class_id(lb) for lb in labels]

    def _at(self, t_s: float, frame_index: Optional[int] = None) -> None:
        self.rec.set_time(TIMELINE, duration=float(t_s))
        if frame_index is not None and frame_index >= 0:
            self.rec.set_time("frame", sequence=int(frame_index))

    def _log_up(self, up_world: np.ndarray) -> None:
        """Tell the viewer which world axis is up when it is a coordinate axis."""
        if self._up_logged:
            return
        self._up_logged = True
        up = np.asarray(up_world, dtype=np.float64)
        i = int(np.argmax(np.abs(up)))
        if abs(up[i]) > 0.99:
            name = f"RIGHT_HAND_{'XYZ'[i]}_{'UP' if up[i] > 0 else 'DOWN'}"
            self.rec.log("world", getattr(self.rr.ViewCoordinates, name), static=True)

    def log_frame(self, item: Union[Frame, FramePerception]) -> None:
        """Camera pose, image, depth and detections of one frame (what perception produced)."""
        rr = self.rr
        fp = item if isinstance(item, FramePerception) else FramePerception(item)
        frame = fp.frame
        self._at(frame.t_s, frame.index)
        step, k = _strided(frame, self.image_max_side)
        if frame.T_world_cam is not None:
            self.rec.log("world/camera", rr.Transform3D(translation=frame.T_world_cam.t,
                                                        mat3x3=frame.T_world_cam.R))
        if k is not None:
            self.rec.log("world/camera/image", rr.Pinhole(image_from_camera=k.K, resolution=[k.width, k.height],
                                                          camera_xyz=rr.ViewCoordinates.RDF))
        rgb = np.ascontiguousarray(frame.rgb[::step, ::step])
        self.rec.log("world/camera/image", rr.Image(rgb).compress(jpeg_quality=self.jpeg_quality))
        if frame.depth_m is not None:
            depth_mm = np.nan_to_num(frame.depth_m[::step, ::step] * 1000.0, nan=0.0, posinf=0.0)
            self.rec.log("world/camera/image/depth",
                         rr.DepthImage(np.clip(depth_mm, 0, 65535).astype(np.uint16), meter=1000.0))
        self._log_instances(fp, step)

    def _log_instances(self, fp: FramePerception, step: int) -> None:
        rr = self.rr
        h, w = fp.frame.rgb[::step, ::step].shape[:2]
        seg = np.zeros((h, w), dtype=np.uint16)
        boxes, labels, classes = [], [], []
        for inst in fp.instances:
            seg[inst.mask[::step, ::step]] = (int(inst.track_id) % 65534) + 1
            ys, xs = np.nonzero(inst.mask)
            box = inst.box_xyxy or ((xs.min(), ys.min(), xs.max() + 1, ys.max() + 1) if len(xs) else None)
            if box is not None:
                boxes.append(np.asarray(box, dtype=np.float64) / step)
                labels.append(f"{inst.label} #{inst.track_id} {inst.score:.2f}")
                classes.append(inst.label)
        self.rec.log("world/camera/image/instances", rr.SegmentationImage(seg, opacity=0.4))
        self.rec.log("world/camera/image/detections",
                     rr.Boxes2D(array=np.reshape(boxes, (-1, 4)), array_format=rr.Box2DFormat.XYXY,
                                labels=labels, class_ids=self._class_ids(classes)))

    def log_memory(self, snapshot: Any) -> None:
        """Trajectory, object anchors, places and graph edges of the memory as of ``snapshot.t_s``."""
        rr = self.rr
        self._log_up(snapshot.up_world)
        self._at(snapshot.t_s)
        traj = trajectory_w(snapshot)
        if len(traj) > _MAX_TRAJ_POINTS:  # long streams: a thinned path keeps each log small
            traj = traj[np.linspace(0, len(traj) - 1, _MAX_TRAJ_POINTS).astype(int)]
        self.rec.log("world/trajectory", rr.LineStrips3D([traj] if len(traj) > 1 else [], colors=[(90, 90, 90)]))
        self._log_objects(snapshot)
        ego = ego_frame_at(snapshot)
        if ego is not None:
            self._log_ego(ego)
        places = list(snapshot.places.values())
        self.rec.log("world/places", rr.Ellipsoids3D(
            centers=np.reshape([p.center_w for p in places], (-1, 3)),
            half_sizes=[[max(p.spread_m, 0.2)] * 3 for p in places], labels=[p.tag for p in places],
            colors=[(40, 160, 60)] * len(places), fill_mode=rr.components.FillMode.MajorWireframe))
        edges = [np.stack([pu, pv]) for _, _, pu, pv in graph_edges(snapshot)]
        self.rec.log("world/graph/edges", rr.LineStrips3D(edges, colors=[(180, 180, 180)], radii=0.01))
        self.rec.log("stats/objects_in_memory", rr.Scalars(float(len(snapshot.objects))))

    def _log_objects(self, snapshot: Any) -> None:
        """One entity per object under its class; logged only when it changed, cleared once merged away."""
        rr = self.rr
        ids = self._class_ids([o.label for o in snapshot.objects.values()])
        for (nid, o), cid in zip(snapshot.objects.items(), ids):
            path = f"world/objects/{_slug(o.label)}/{_slug(nid)}"
            state = (tuple(np.round(o.position_w, 2)), o.present, o.label, len(o.position_history))  # 1 cm
            old = self._objects.get(nid)
            if old is not None and old[1] == state:
                continue
            if old is not None and old[0] != path:
                self.rec.log(old[0], rr.Clear(recursive=True))
            self._objects[nid] = (path, state)
            self.rec.log(path, rr.Points3D([o.position_w], radii=0.08, class_ids=[cid],
                                           labels=[o.label + ("" if o.present else " (gone)")],
                                           colors=[self.palette.color(o.label) if o.present else _GONE_RGB],
                                           show_labels=True))
            hist = [p for _, p in o.position_history if p is not None]
            if len(hist) > 1:
                self.rec.log(f"{path}/history", rr.LineStrips3D([np.asarray(hist)], class_ids=[cid], radii=0.015))
        for nid in [n for n in self._objects if n not in snapshot.objects]:
            self.rec.log(self._objects.pop(nid)[0], rr.Clear(recursive=True))

    def _log_ego(self, ego: Any) -> None:
        """The ego frame as a transform (axes drawn), with a clock ring that moves with it."""
        rr = self.rr
        self.rec.log("world/ego", rr.Transform3D(translation=ego.T_world_ego.t, mat3x3=ego.T_world_ego.R),
                     rr.TransformAxes3D(0.4))
        if not self._clock_logged:
            self._clock_logged = True
            a = np.radians(np.arange(0, 361, 10))
            ring = _CLOCK_RADIUS_M * np.c_[np.cos(a), np.sin(a), np.zeros_like(a)]
            hours = np.array([12, 3, 6, 9])
            az = np.radians(-30.0 * hours)  # 12 ahead (+x), 3 to the right (-y)
            ticks = _CLOCK_RADIUS_M * 1.15 * np.c_[np.cos(az), np.sin(az), np.zeros_like(az)]
            self.rec.log("world/ego/clock", rr.LineStrips3D([ring], colors=[(60, 60, 60)], radii=0.008), static=True)
            self.rec.log("world/ego/clock/hours", rr.Points3D(ticks, radii=0.02, colors=[(60, 60, 60)],
                                                             labels=[f"{h}" for h in hours], show_labels=True),
                         static=True)

    def log_answer(self, answer: Any, snapshot: Any) -> None:
        """The ego frame at the question time, the answer's subgraph highlighted and the answer text."""
        rr = self.rr
        self.log_memory(snapshot)
        self._at(answer.t_s)
        ego = ego_frame_at(snapshot, answer.t_s)
        targets = answer_targets(snapshot, answer)
        pts = np.reshape([node_position(snapshot, nid) for nid in targets], (-1, 3))
        self.rec.log("world/question/subgraph", rr.Points3D(pts, radii=0.18, colors=[_HIGHLIGHT_RGB] * len(pts),
                                                            labels=labels_of(snapshot, targets)))
        if ego is not None:
            self._log_ego(ego)
            self.rec.log("world/ego/relation", rr.Arrows3D(
                origins=np.zeros_like(pts), vectors=ego.to_ego(pts) if len(pts) else pts,
                colors=[_HIGHLIGHT_RGB] * len(pts)))
        text = f"t={answer.t_s:.1f}s  Q: {answer.question}  A: {answer_line(answer)}  (conf {answer.confidence:.2f})"
        self.rec.log("answers", rr.TextLog(short_text(text, 400)))
        md = (f"**t = {answer.t_s:.1f} s**\n\n**Q:** {answer.question}\n\n**A:** {answer_line(answer)}\n\n"
              f"confidence {answer.confidence:.2f}; evidence: {', '.join(labels_of(snapshot, targets)) or 'none'}\n\n"
              f"```\n{answer.subgraph_text}\n```")
        self.rec.log("question/answer", rr.TextDocument(md, media_type=rr.MediaType.MARKDOWN))

    def rrd_bytes(self) -> bytes:
        """The recording so far as .rrd bytes (``memory=True`` loggers only; drains what it returns)."""
        if self._memory is None:
            raise ValueError("rrd_bytes() needs RerunLogger(memory=True)")
        self.rec.flush(timeout_sec=10.0)
        return bytes(self._memory.drain_as_bytes())

    def close(self) -> None:
        """Flush and close the file or stop the server (a viewer keeps what it received)."""
        self.rec.flush(timeout_sec=10.0)  # a server with no viewer must not block the stream's end
        self.rec.disconnect()


def _slug(text: str) -> str:
    """An entity path part for a label or id ("Potted Plant" -> "potted_plant")."""
    return re.sub(r"[^a-z0-9]+", "_", class_key(text)).strip("_") or "unnamed"


def _free_port() -> int:
    """A free TCP port on loopback (rerun's default 9876 may be taken by another run or viewer)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


RrdSource = Union[str, Path, bytes]  # an .rrd file, or its bytes (``RerunLogger(memory=True).rrd_bytes()``)


def _chunks(source: RrdSource) -> list[Any]:
    """The chunks of the recording in an .rrd file (or .rrd bytes), read with rerun's own reader."""
    require("rerun", "viz", "rerun-sdk")
    from rerun.experimental import RrdReader

    if isinstance(source, (bytes, bytearray)):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "memory.rrd"
            path.write_bytes(bytes(source))
            return list(RrdReader(str(path)).stream().to_chunks())
    return list(RrdReader(str(source)).stream().to_chunks())


def read_rrd_entities(source: RrdSource) -> dict[str, set[str]]:
    """Entity paths of a recording and their component columns, read back with rerun itself."""
    out: dict[str, set[str]] = {}
    for chunk in _chunks(source):
        cols = out.setdefault(str(chunk.entity_path), set())
        cols.update(f.name for f in chunk.to_record_batch().schema)
    return out


def read_rrd_column(source: RrdSource, entity: str, column: str) -> list[tuple[Optional[float], Any]]:
    """Rows (stream_time seconds or None when static, the row's list of values) of one entity's column."""
    rows: list[tuple[Optional[float], Any]] = []
    for chunk in _chunks(source):
        if str(chunk.entity_path) != entity:
            continue
        batch = chunk.to_record_batch()
        if column not in batch.schema.names:
            continue
        times = (batch.column(TIMELINE).cast("int64").to_pylist() if TIMELINE in batch.schema.names
                 else [None] * batch.num_rows)
        rows += [(None if t is None else t * 1e-9, v) for t, v in zip(times, batch.column(column).to_pylist())]
    return sorted(rows, key=lambda r: -1.0 if r[0] is None else r[0])


def read_rrd_objects(source: RrdSource, t_s: Optional[float] = None) -> dict[str, tuple[str, np.ndarray]]:
    """Entity path -> (label, position) of every object entity as last logged up to ``t_s`` (default: the end),
    objects cleared by then left out."""
    out: dict[str, tuple[str, np.ndarray]] = {}
    for entity in sorted(read_rrd_entities(source)):
        if not re.fullmatch(r"/world/objects/[^/]+/[^/]+", entity):
            continue
        labels = [r for r in read_rrd_column(source, entity, "Points3D:labels") if t_s is None or (r[0] or 0) <= t_s]
        pos = [r for r in read_rrd_column(source, entity, "Points3D:positions") if t_s is None or (r[0] or 0) <= t_s]
        cleared = [r[0] for r in read_rrd_column(source, entity, "Clear:is_recursive") if t_s is None or r[0] <= t_s]
        if labels and pos and not (cleared and cleared[-1] >= labels[-1][0]):
            out[entity] = (labels[-1][1][0], np.asarray(pos[-1][1][0], dtype=np.float64))
    return out
