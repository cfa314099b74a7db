"""Helpers shared by the rerun logger and the static report (class colours: ``palette``): projection to
the ground plane used for top-down views, graph edges with positions, and the targets an answer used."""
from __future__ import annotations

import re
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from ..geometry import EgoFrame, Pose
from ..types import Answer, Flag


def to_ground(points_w: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Project (N, 3) world points to (N, 2) ground-plane coordinates."""
    return np.asarray(points_w, dtype=np.float64).reshape(-1, 3) @ basis.T


def node_position(snapshot: Any, node_id: str) -> Optional[np.ndarray]:
    """World position of an object or place node of a snapshot, None when unknown."""
    if node_id in snapshot.objects:
        return np.asarray(snapshot.objects[node_id].position_w, dtype=np.float64)
    if node_id in snapshot.places:
        return np.asarray(snapshot.places[node_id].center_w, dtype=np.float64)
    return None


def graph_edges(snapshot: Any) -> Iterator[tuple[str, str, np.ndarray, np.ndarray]]:
    """Edges of the snapshot's scene graph whose two ends have positions (object / place nodes)."""
    graph = getattr(snapshot, "graph", None)
    if graph is None or not hasattr(graph, "edges"):
        return
    for u, v in graph.edges():
        pu, pv = node_position(snapshot, str(u)), node_position(snapshot, str(v))
        if pu is not None and pv is not None:
            yield str(u), str(v), pu, pv


def answer_targets(snapshot: Any, answer: Answer) -> list[str]:
    """Object / place node ids in ``answer.evidence`` that exist in the snapshot (order kept)."""
    ids: list[str] = []
    for ev in answer.evidence:
        nid = str(ev.node_id)
        if nid not in ids and node_position(snapshot, nid) is not None:
            ids.append(nid)
    return ids


def ego_frame_at(snapshot: Any, t_s: Optional[float] = None) -> Optional[EgoFrame]:
    """The wearer's ego frame at ``t_s`` (default: the snapshot time), None before the first pose."""
    pose: Optional[Pose] = snapshot.ego.pose_at(snapshot.t_s if t_s is None else t_s)
    if pose is None:
        return None
    return EgoFrame.from_camera(pose, np.asarray(snapshot.up_world, dtype=np.float64))


def trajectory_w(snapshot: Any) -> np.ndarray:
    """(N, 3) camera centres of the ego track up to the snapshot time."""
    ego = snapshot.ego
    if len(ego) == 0:
        return np.zeros((0, 3))
    keep = np.asarray(ego.times_s) <= snapshot.t_s
    return np.asarray(ego.T_world_cam, dtype=np.float64)[keep][:, :3, 3]


def short_text(text: str, limit: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def labels_of(snapshot: Any, ids: Sequence[str]) -> list[str]:
    out = []
    for nid in ids:
        node = snapshot.objects.get(nid) or snapshot.places.get(nid)
        out.append(getattr(node, "label", None) or getattr(node, "tag", nid))
    return out


def answer_line(answer: Answer) -> str:
    """The answer as one line: "(B) text", unless the text already starts with its letter; an answer from a
    model with random weights says so ("[RANDOM WEIGHTS: meaningless]")."""
    letter = answer.letter
    text = " ".join(answer.text.split())
    if Flag.RANDOM_WEIGHTS in answer.flags:
        text += " [RANDOM WEIGHTS: meaningless]"
    if not letter or re.match(rf"^\(?{re.escape(letter)}[.):]", text):
        return text
    return f"({letter}) {text}"
