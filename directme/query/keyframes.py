"""Pick a few keyframes (observed at or before t) that show the question's objects, for an MLLM."""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from .types import Keyframe
from ..memory.snapshot import KeyframeRef, MemorySnapshot

ImageLoader = Callable[[KeyframeRef], Optional[np.ndarray]]


def select_keyframe_refs(snapshot: MemorySnapshot, node_ids: Sequence[str], t_s: float, k: int = 4,
                         min_gap_s: float = 2.0) -> list[tuple[str, KeyframeRef]]:
    """Up to ``k`` (node id, keyframe) pairs with time <= t_s: each target's best-visibility frame first
    (round robin over targets), then frames at least ``min_gap_s`` apart; returned in time order."""
    per_node = []
    for nid in node_ids:
        node = snapshot.objects.get(nid)
        if node is None:
            continue
        refs = sorted((r for r in node.keyframes if r.t_s <= t_s), key=lambda r: (-r.visibility, -r.t_s))
        per_node.append([(nid, r) for r in refs])
    chosen: list[tuple[str, KeyframeRef]] = []
    depth = 0
    while len(chosen) < k and any(depth < len(lst) for lst in per_node):
        for lst in per_node:
            if depth < len(lst) and len(chosen) < k:
                nid, ref = lst[depth]
                if all(abs(ref.t_s - c.t_s) >= min_gap_s for _, c in chosen):
                    chosen.append((nid, ref))
        depth += 1
    return sorted(chosen, key=lambda item: item[1].t_s)


def load_keyframes(snapshot: MemorySnapshot, node_ids: Sequence[str], t_s: float, loader: Optional[ImageLoader],
                   k: int = 4) -> tuple[Keyframe, ...]:
    """Keyframe images with captions "t=12.0 s: cup" (refs whose image cannot be loaded are skipped)."""
    if loader is None or k <= 0:
        return ()
    out = []
    for nid, ref in select_keyframe_refs(snapshot, node_ids, t_s, k):
        rgb = loader(ref)
        if rgb is None:
            continue
        label = snapshot.objects[nid].label
        out.append(Keyframe(t_s=ref.t_s, frame_index=ref.frame_index, rgb=rgb, caption=f"t={ref.t_s:.1f} s: {label}"))
    return tuple(out)
