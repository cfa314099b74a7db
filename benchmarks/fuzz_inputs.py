"""Hostile-input fuzzing of directme's doors, driven by hypothesis with a fixed seed (the same inputs, in the
same order, on every run with the same ``--seed`` and ``--examples``; no example database, no shrinking).

    python benchmarks/fuzz_inputs.py [--examples 2000] [--seed 0]
                                     [--targets observe ask config loaders load save http cli] [--show 8]

Targets (``--examples`` each):

- ``observe``: ``Agent.observe`` (the "given" perception: instances and scene tag in ``frame.meta``) and
  ``Agent.observe_perception``, 1-3 steps after two valid frames. Each step is a valid frame of a box scene
  with one field replaced: times (NaN, inf, strings, bools, 1e308, out of order), images (dtype, shape),
  depth (millimetres, NaN, inf, negative, shape, dtype), poses (non-rigid, NaN, 1e9 m), intrinsics
  (fx = 1e-9, NaN, size), instances (label None/int, track id "abc", score, mask, embedding, box, duplicate
  ids, not a list), embedding lengths (two instances', against each other and the memory's; values 1e300
  or 1e-300), crowded frames (1,000 to 5,000 instances), scene tags - or left valid.
- ``ask``: ``Agent.ask`` with generated questions (text, None, numbers, huge numbers inside the text), times
  (None, numbers, NaN, inf, strings, future) and options (lists, a str, a dict, a set, non-strings,
  400-digit numbers, over-long lists and texts) on an agent that has seen 4 frames.
- ``config``: ``AgentConfig.from_dict`` on the default config with one value replaced (wrong types, out of
  range, unknown keys, non-plain option values, shared-reference bombs) and ``AgentConfig.from_file`` on
  YAML/JSON text (dumps of those dicts, alias bombs, deep nesting, non-UTF-8, oversized, random text). A
  config that loads is then used: an Agent built from it observes two frames, answers a question and saves
  (each under a 30 s alarm: a hang counts as an unclear error).
- ``loaders``: each benchmark loader (ucsbench JSON and JSONL, teleego, phostream, egosat, xlebench) on a
  valid file with one field replaced by a hostile value, or on malformed bytes (UTF-16, invalid UTF-8,
  truncation, 100k-deep nesting, 400-digit and 1e308 numbers, NaN, wrong top level). What loads must be
  usable: finite times within a week, non-empty question texts, options as strings.
- ``load``: ``Agent.load`` on a copy of a saved agent with one file deleted, truncated, emptied, replaced by
  random bytes or by a folder, one byte flipped, or a JSON value replaced; or damaged with the checksums
  recomputed (the manifests' own included): deep nesting or a 41- to 100,000-digit integer in a JSON file,
  an ``.npy`` header declaring more (or fewer) bytes than it holds, a manifest naming an impossible file
  (NUL, newline, backslash, 300 characters). What loads must answer a question.
- ``save``: ``Agent.save`` over an earlier save while the disk fails: a fake failing filesystem (an audit hook
  refusing the n-th file or directory change with ENOSPC, EFBIG, EROFS, EIO, EDQUOT or EACCES) or a file
  size limit (RLIMIT_FSIZE, in a forked child). The error must name the directory, and the earlier save
  must load as before with nothing left beside it (else ``memory_changed_on_error``).
- ``http``: the OpenAI-compatible answerer against a loopback server (127.0.0.1) sending an answer or a
  decompression bomb, deep nesting, a 5,000-digit integer, garbage, plain or gzip / deflate (zlib or raw)
  encoded, or with nested, unknown, lying or cut encodings; its ``/models`` lists the Authorization header
  it received as the model id. Invalid replies must end as ``backend_error`` answers within the deadline + 1 s
  (else ``silent_accept_of_invalid``), the API key never in the answer (else ``unclear_errors``).
- ``cli``: ``directme run`` / ``directme eval`` with one of ``--fps``, ``--max-frames``, ``--map-every``,
  ``--report-maps`` drawn (negative, NaN, inf, 1e308, text, ...) or an output path (``--out``, ``--rerun``,
  eval ``--out``) that is a directory, a file or below a file: a bad value must exit 2 naming the option.

Each example is classified, and the last line reads
``unclear_errors=N silent_accept_of_invalid=N memory_changed_on_error=N`` (targets: 0 0 0):

- ``unclear_errors``: an exception that is not a ``directme.errors.DirectmeError``, or a DirectmeError whose
  message names none of the fields or files the input was built around (for a field mutation: that field's
  name; for a file: its name; for an input not built invalid: any field name of the target).
- ``silent_accept_of_invalid``: the generator built the input to be invalid (it records why, e.g. "label
  None" or "timestamp 1e308") and it was accepted: no error, or a loaded result that breaks the loader's
  promises (a non-finite or beyond-a-week time, an empty question, a non-string option).
- ``memory_changed_on_error``: a rejected observe/ask changed what the agent's memory says: the snapshot facts
  of ``memory.as_of(latest)`` or the agent's first / latest / input times differ from before the call.

Inputs of unknown validity (random text, a flipped byte) count only when they raise an unclear error.
Also printed: ``rejected_valid`` (an input built valid was refused with a clear error; informational), the
counts per target and, with ``--show K``, the K most frequent offenders of each kind.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import json
import math
import shutil
import signal
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import directme
from directme import Agent, AgentConfig
from directme.errors import DirectmeError
from directme.geometry import Intrinsics, Pose
from directme.memory.testing import Box, look_at, perceive, snapshot_facts
from directme.types import Answer, Frame, FramePerception, InstanceObservation

REPO = Path(__file__).resolve().parents[1]
ART = REPO / "tests" / "artifacts" / "bench"
WEEK = 7 * 86400.0
BOXES = [Box(1, "chair", (2.5, 0.0, 0.45), (0.6, 0.6, 0.9)), Box(2, "couch", (0.0, 2.5, 0.4), (0.9, 0.9, 0.8)),
         Box(3, "cup", (1.8, 1.8, 0.3), (0.4, 0.4, 0.4))]
K = Intrinsics.from_fov(64, 48, 80.0)
BASE_CONFIG = {"query": {"embedder": "string"}}
UNKNOWN = None  # validity of an input the generator cannot judge


# ------------------------------------------------------------------------------------------ bookkeeping


@dataclass
class Tally:
    examples: int = 0
    unclear: collections.Counter = field(default_factory=collections.Counter)
    silent: collections.Counter = field(default_factory=collections.Counter)
    changed: collections.Counter = field(default_factory=collections.Counter)
    rejected_valid: collections.Counter = field(default_factory=collections.Counter)


TALLY: dict[str, Tally] = collections.defaultdict(Tally)


def _key(text: str) -> str:
    return " ".join(str(text).split())[:160]


def classify(target: str, what: str, invalid: Optional[str], exc: Optional[BaseException], needles: tuple[str, ...],
             changed: bool = False) -> None:
    """Record one outcome. ``invalid``: why the input was built invalid ("" / None: built valid / unknown
    validity, see UNKNOWN); ``needles``: names one of which a clear message must contain."""
    t = TALLY[target]
    if exc is None:
        if invalid:
            t.silent[_key(f"{what}: {invalid}")] += 1
        return
    if changed:
        t.changed[_key(f"{what}: {type(exc).__name__}: {exc}")] += 1
    if not isinstance(exc, DirectmeError):
        t.unclear[_key(f"{what}: {type(exc).__name__}: {exc}")] += 1
        return
    msg = str(exc).lower()
    if not any(n.lower() in msg for n in needles):
        t.unclear[_key(f"{what}: no field/file named: {exc}")] += 1
    elif invalid == "":
        t.rejected_valid[_key(f"{what}: {exc}")] += 1


class Hang(Exception):
    pass


@contextlib.contextmanager
def alarm(seconds: int):
    def on_alarm(*_):
        raise Hang(f"took more than {seconds} s")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def call(fn: Callable[[], Any], seconds: int = 30) -> tuple[Any, Optional[BaseException]]:
    try:
        with alarm(seconds), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except RecursionError as exc:  # never swallow: it is an unclear error like any other
        return None, exc
    except Exception as exc:  # noqa: BLE001 - classifying every exception is the point
        return None, exc


# ------------------------------------------------------------------------------------------ hostile values


def hostile() -> st.SearchStrategy:
    """Values of every JSON-ish and Python type, the awkward ones included."""
    return st.one_of(
        st.none(), st.booleans(), st.integers(-10, 10), st.integers(), st.integers(min_value=10 ** 18, max_value=10 ** 400),
        st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e308, -1e308, 1e-9, 0.0, -1.0, 2.5, 1e7]),
        st.text(max_size=12), st.sampled_from(["", "   ", "9" * 400, "false", "no", "1.0", "00:99", "١٢:٣٠", "²"]),
        st.lists(st.integers(0, 5), max_size=3), st.lists(st.text(max_size=3), max_size=3),
        st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=2))


def is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def finite_num(v: Any, lo: float = -math.inf, hi: float = math.inf) -> bool:
    if not is_real(v):
        return False
    try:
        f = float(v)
    except OverflowError:
        return False
    return math.isfinite(f) and lo <= f <= hi


def is_text(v: Any, limit: int = 10_000) -> bool:
    return isinstance(v, str) and bool(v.strip()) and len(v) <= limit


# ------------------------------------------------------------------------------------------ observe


def _frames() -> list[FramePerception]:
    out = []
    for k in range(8):  # turning from the chair towards the couch: every frame sees two or three boxes
        a = np.deg2rad(10.0 * k)
        out.append(perceive(BOXES, look_at((0, 0, 1.5), (np.cos(a), np.sin(a), 1.1)), K, 1.0 + k, k, "living room"))
    assert all(len(fp.instances) >= 2 for fp in out), [len(fp.instances) for fp in out]
    return out


FPS = _frames()


def agent_state(agent: Agent) -> Any:
    """What the agent's memory says (``("broken", error)`` when it cannot even say it any more)."""
    mem = agent.memory
    try:
        facts = snapshot_facts(mem.as_of(mem.latest_t_s)) if mem.latest_t_s is not None else None
    except Exception as exc:  # noqa: BLE001 - a memory an input broke
        return ("broken", f"{type(exc).__name__}: {exc}")
    return (facts, agent._first_t, agent._last_t, agent._last_input_t, mem.latest_t_s, len(mem.ego))


OBS_NEEDLES = ("frame", "instance", "depth", "pose", "intrinsics", "mask", "label", "scene_tag", "score", "t_s",
               "rgb", "track", "embedding", "box", "meta", "index", "source", "time")

FRAME_MUTATIONS = ("valid", "t", "rgb", "depth", "pose", "intrinsics", "index", "source", "meta", "label", "track_id",
                   "score", "mask", "embedding", "box", "duplicate", "instances", "scene_tag", "scene_tag_score",
                   "embedding_size", "crowded")
MAX_INSTANCES = 1000  # memory.map.max_instances_per_frame's default


def build_step(data: st.DataObject, fp: FramePerception, last_t: float, via_perception: bool,
               emb_dim: Optional[int] = None) -> tuple[str, str, Optional[str], tuple[str, ...], Callable[[], Any]]:
    """(mutation, its description, why invalid ("" valid), needles, a function building the input);
    ``emb_dim``: the length of the embeddings the memory holds (None: none yet)."""
    kind = data.draw(st.sampled_from(FRAME_MUTATIONS), label="mutation")
    f, insts, tag, tag_score = fp.frame, list(fp.instances), fp.scene_tag, 1.0
    fkw: dict[str, Any] = dict(t_s=f.t_s, rgb=f.rgb, depth_m=f.depth_m, T_world_cam=f.T_world_cam,
                               intrinsics=f.intrinsics, index=f.index, source=f.source)
    meta: Any = None
    why, needles, desc = "", ("frame",), kind
    inst_kw = dict(track_id=insts[0].track_id, label=insts[0].label, score=0.9, mask=insts[0].mask)
    inst_kind = kind in ("label", "track_id", "score", "mask", "embedding", "box")
    if kind == "t":
        v = data.draw(st.one_of(hostile(), st.floats(0, 20)), label="t")
        fkw["t_s"], needles, desc = v, ("t_s", "time", "t="), f"t_s={v!r:.40}"
        if not finite_num(v, 0.0, 1e7):
            why = f"t_s {v!r:.40}"
        elif float(v) < last_t:
            why = f"t_s {v!r} before {last_t}"
    elif kind == "rgb":
        choice = data.draw(st.sampled_from(["float", "2d", "4ch", "size", "list", "str", "empty", "object"]))
        fkw["rgb"] = {"float": f.rgb.astype(np.float32), "2d": f.rgb[..., 0], "4ch": np.zeros((48, 64, 4), np.uint8),
                      "size": np.zeros((40, 64, 3), np.uint8), "list": f.rgb.tolist(), "str": "image",
                      "empty": np.zeros((0, 64, 3), np.uint8), "object": np.array([[None]])}[choice]
        why, needles, desc = f"rgb {choice}", ("rgb", "image"), f"rgb {choice}"
    elif kind == "depth":
        choice = data.draw(st.sampled_from(["mm", "x0.001", "int16", "nan", "inf", "neg", "shape", "str", "none", "bool",
                                            "list"]))
        d = f.depth_m
        fkw["depth_m"] = {"mm": d * 1000.0, "x0.001": d * 0.001, "int16": (d * 10).astype(np.int16),
                          "nan": np.full_like(d, np.nan), "inf": np.where(d > 3, np.inf, d),
                          "neg": d - 10.0, "shape": d[:-1], "str": "depth", "none": None, "bool": d > 2,
                          "list": d.tolist()}[choice]
        why = "" if choice in ("x0.001", "int16", "list") else f"depth {choice}"
        if choice == "int16" and not np.any((d * 10).astype(np.int16) > 0):
            why = "depth int16 all zero"
        needles, desc = ("depth",), f"depth {choice}"
    elif kind == "pose":
        choice = data.draw(st.sampled_from(["scaled", "nan", "far", "shape", "none", "list", "10km", "str"]))
        m = f.T_world_cam.matrix
        far = m.copy()
        far[:3, 3] = 1e9
        km = m.copy()
        km[:3, 3] += 1e4
        bad = m.copy()
        bad[0, 0] = np.nan
        fkw["T_world_cam"] = {"scaled": np.diag([2.0, 2.0, 2.0, 1.0]), "nan": bad, "far": far, "shape": m[:3, :3],
                              "none": None, "list": m.tolist(), "10km": Pose(km), "str": "pose"}[choice]
        why = "" if choice in ("list", "10km") else f"pose {choice}"
        needles, desc = ("pose", "t_world_cam"), f"pose {choice}"
    elif kind == "intrinsics":
        choice = data.draw(st.sampled_from(["fx_tiny", "fx_huge", "nan", "neg", "cx_far", "size", "width_frac", "none",
                                            "dict", "fx_x1.1"]))
        fkw["intrinsics"] = None
        builders = {
            "fx_tiny": lambda: Intrinsics(1e-9, K.fy, K.cx, K.cy, 64, 48),
            "fx_huge": lambda: Intrinsics(1e9, K.fy, K.cx, K.cy, 64, 48),
            "nan": lambda: Intrinsics(math.nan, K.fy, K.cx, K.cy, 64, 48),
            "neg": lambda: Intrinsics(-K.fx, K.fy, K.cx, K.cy, 64, 48),
            "cx_far": lambda: Intrinsics(K.fx, K.fy, 1e6, K.cy, 64, 48),
            "size": lambda: Intrinsics(K.fx, K.fy, K.cx, K.cy, 65, 48),
            "width_frac": lambda: Intrinsics(K.fx, K.fy, K.cx, K.cy, 64.5, 48),
            "none": lambda: None, "dict": lambda: {"fx": K.fx}, "fx_x1.1": lambda: Intrinsics(K.fx * 1.1, K.fy, K.cx,
                                                                                            K.cy, 64, 48)}
        fkw["intrinsics"] = builders[choice]
        why = "" if choice == "fx_x1.1" else f"intrinsics {choice}"
        needles, desc = ("intrinsics", "fx", "cx"), f"intrinsics {choice}"
    elif kind == "index":
        v = data.draw(hostile(), label="index")
        fkw["index"], needles, desc = v, ("index",), f"index={v!r:.40}"
        why = "" if isinstance(v, int) and not isinstance(v, bool) and -2 ** 31 <= v < 2 ** 31 else f"index {v!r:.40}"
    elif kind == "source":
        v = data.draw(st.one_of(st.text(max_size=8), hostile()), label="source")
        fkw["source"], needles, desc = v, ("source",), f"source={v!r:.40}"
        why = "" if isinstance(v, str) and len(v) <= 10_000 else f"source {v!r:.40}"
    elif kind == "meta":
        meta = data.draw(st.sampled_from([[1, 2], 3, "meta"]))
        why, needles, desc = f"meta {meta!r}", ("meta",), f"meta={meta!r}"
    elif kind == "label":
        v = data.draw(st.one_of(st.sampled_from(["chair", "a cup", "椅子"]), hostile()), label="label")
        inst_kw["label"], needles, desc = v, ("label",), f"label={v!r:.40}"
        why = "" if is_text(v) else f"label {v!r:.40}"
    elif kind == "track_id":
        v = data.draw(st.one_of(st.integers(-3, 50), hostile(), st.just(np.int64(7))), label="track")
        inst_kw["track_id"], needles, desc = v, ("track",), f"track_id={v!r:.40}"
        ok = isinstance(v, (int, np.integer)) and not isinstance(v, bool) and -2 ** 63 <= int(v) < 2 ** 63
        why = "" if ok else f"track_id {v!r:.40}"
        if ok and int(v) in [i.track_id for i in insts[1:]]:
            why = f"track_id {v} duplicated"
    elif kind == "score":
        v = data.draw(st.one_of(st.floats(0, 1), hostile()), label="score")
        inst_kw["score"], needles, desc = v, ("score",), f"score={v!r:.40}"
        why = "" if finite_num(v, 0.0, 1.0) else f"score {v!r:.40}"
    elif kind == "mask":
        choice = data.draw(st.sampled_from(["3d", "shape", "nan", "uint8", "list", "empty", "str"]))
        m = insts[0].mask
        inst_kw["mask"] = {"3d": m[..., None], "shape": m[:-1], "nan": np.where(m, np.nan, 0.0), "uint8": m.astype(np.uint8),
                           "list": m.tolist(), "empty": np.zeros((0, 0), bool), "str": "mask"}[choice]
        why = "" if choice in ("uint8", "list") else f"mask {choice}"
        needles, desc = ("mask",), f"mask {choice}"
    elif kind == "embedding":
        choice = data.draw(st.sampled_from(["zeros", "nan", "2d", "vec", "list", "empty", "str"]))
        inst_kw["embedding"] = {"zeros": np.zeros(8), "nan": np.full(8, np.nan), "2d": np.ones((2, 4)),
                                "vec": np.linspace(0.1, 1, 8), "list": [0.1, 0.2, 0.3], "empty": np.zeros(0),
                                "str": "emb"}[choice]
        why = "" if choice in ("vec", "list") else f"embedding {choice}"
        size = {"vec": 8, "list": 3}.get(choice)
        if size is not None and emb_dim not in (None, size):
            why = f"embedding of {size} values, the memory's have {emb_dim}"
        needles, desc = ("embedding",), f"embedding {choice}"
    elif kind == "embedding_size":  # two instances' embeddings: their lengths, and the memory's
        a, b = data.draw(st.sampled_from([4, 8, 12])), data.draw(st.sampled_from([4, 8, 12]))
        scale = data.draw(st.sampled_from([1.0, 1e-300, 1e300]), label="scale")
        insts = [InstanceObservation(i.track_id, i.label, i.score, i.mask, np.full(n, scale), i.box_xyxy)
                 for i, n in zip(insts[:2], (a, b))] + insts[2:]
        why = "" if a == b and emb_dim in (None, a) and scale == 1.0 else \
            f"embedding sizes {a}, {b} (memory {emb_dim}), values {scale:g}"
        needles, desc = ("embedding",), f"embedding sizes {a} {b} x{scale:g}"
    elif kind == "crowded":  # more instances than memory.map.max_instances_per_frame
        n = data.draw(st.sampled_from([MAX_INSTANCES, MAX_INSTANCES + 1, 5 * MAX_INSTANCES]), label="instances")
        tiny = np.zeros((48, 64), bool)
        tiny[:2, :2] = True
        insts = [InstanceObservation(100 + k, "cup", 0.5, tiny) for k in range(n)]
        why = "" if n <= MAX_INSTANCES else f"{n} instances"
        needles, desc = ("instances",), f"{n} instances"
    elif kind == "box":
        choice = data.draw(st.sampled_from(["ok", "reversed", "nan", "three", "str"]))
        inst_kw["box_xyxy"] = {"ok": (1.0, 2.0, 10.0, 12.0), "reversed": (10.0, 2.0, 1.0, 12.0),
                               "nan": (math.nan, 0.0, 1.0, 1.0), "three": (1.0, 2.0, 3.0), "str": "box"}[choice]
        why = "" if choice == "ok" else f"box {choice}"
        needles, desc = ("box",), f"box {choice}"
    elif kind == "duplicate":
        insts = insts + [insts[0]]
        why, needles, desc = "duplicate track ids", ("track",), "duplicate track ids"
    elif kind == "instances":
        choice = data.draw(st.sampled_from(["int", "str", "dict", "ints"]))
        insts = {"int": 3, "str": "cup", "dict": {"a": 1}, "ints": [1, 2]}[choice]
        why, needles, desc = f"instances {choice}", ("instance",), f"instances {choice}"
    elif kind == "scene_tag":
        v = data.draw(st.one_of(st.sampled_from(["kitchen", "living room"]), hostile()), label="tag")
        tag, needles, desc = v, ("scene_tag",), f"scene_tag={v!r:.40}"
        why = "" if v is None or is_text(v) else f"scene_tag {v!r:.40}"
    elif kind == "scene_tag_score":
        v = data.draw(st.one_of(st.floats(0, 1), hostile()), label="tag score")
        tag_score, needles, desc = v, ("scene_tag_score",), f"scene_tag_score={v!r:.40}"
        why = "" if finite_num(v, 0.0, 1.0) else f"scene_tag_score {v!r:.40}"
        if not via_perception:
            why = ""  # the given perception takes no scene tag score
    late = kind != "t" and f.t_s < last_t
    if late and not why:
        why = f"t_s {f.t_s} before {last_t}"
    if late or why.startswith("t_s"):  # invalid twice over: either reason may be named
        needles = needles + ("t_s", "time", "t=")

    def make() -> Any:
        kw = dict(fkw)
        if callable(kw["intrinsics"]):
            kw["intrinsics"] = kw["intrinsics"]()
        instances = insts
        if inst_kind:
            instances = [InstanceObservation(**inst_kw)] + insts[1:]
        if via_perception:
            frame = Frame(**kw, meta={} if meta is None else meta)
            return FramePerception(frame, instances, tag, tag_score)
        return Frame(**kw, meta={"instances": instances, "scene_tag": tag} if meta is None else meta)

    return kind, desc, why, needles, make


def observe_example(data: st.DataObject) -> None:
    agent = Agent(BASE_CONFIG)
    for fp in FPS[:2]:
        agent.observe_perception(fp)
    last_t = agent.latest_t
    for _ in range(data.draw(st.integers(1, 3), label="steps")):
        k = data.draw(st.integers(1, len(FPS) - 1), label="frame")
        via_perception = data.draw(st.booleans(), label="via")
        kind, desc, why, needles, make = build_step(data, FPS[k], last_t, via_perception,
                                                    agent.memory.objects.embedding_dim())
        before = agent_state(agent)
        fn = "observe_perception" if via_perception else "observe"
        _, exc = call(lambda: getattr(agent, fn)(make()))
        after = agent_state(agent)
        changed = exc is not None and not _same(after, before)
        TALLY["observe"].examples += 1
        classify("observe", f"{fn} {desc}", why, exc, needles + OBS_NEEDLES if not why else needles, changed)
        if after[0] == "broken":  # an input left the memory unable to answer: the agent is done
            TALLY["observe"].unclear[_key(f"{fn} {desc}: memory broken afterwards: {after[1]}")] += 1
            return
        if exc is None:
            last_t = max(last_t, agent._last_input_t)


def _same(a: Any, b: Any) -> bool:
    try:
        np.testing.assert_equal(a, b)
        return True
    except AssertionError:
        return False


# ------------------------------------------------------------------------------------------ ask


ASK_AGENT: Optional[Agent] = None


def question_strategy() -> st.SearchStrategy:
    templates = st.sampled_from(["Where is the {}?", "How many {} are there?", "Where was the cup {} hours ago?",
                                 "What was at {}:00:00?", "Where was the chair at t={} s?", "Can I reach the {}?",
                                 "{}"])
    fill = st.one_of(st.sampled_from(["cup", "chair", "couch", "9" * 400, "1e308", "²", "١٢"]), st.text(max_size=10),
                     st.integers(0, 10 ** 30).map(str))
    return st.one_of(st.builds(lambda t, x: t.format(x), templates, fill), hostile(), st.just("x" * 10_001))


def options_strategy() -> st.SearchStrategy:
    item = st.one_of(st.sampled_from(["front", "behind", "left", "right", "1", "2", "9" * 400, "²", "yes", "no", "",
                                      "kitchen", "3 o'clock", "x" * 10_001]), st.text(max_size=8))
    return st.one_of(st.none(), st.lists(item, max_size=4), st.lists(item, min_size=11, max_size=12).map(tuple),
                     st.lists(st.one_of(item, hostile()), max_size=4), st.text(max_size=6),
                     st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=3),
                     st.sets(st.sampled_from(["a", "b"])), hostile(),
                     st.lists(item, max_size=3).map(lambda xs: np.array(xs, dtype=object) if xs else np.array([])))


def ask_example(data: st.DataObject) -> None:
    global ASK_AGENT
    if ASK_AGENT is None:
        ASK_AGENT = Agent(BASE_CONFIG)
        for fp in FPS[:4]:
            ASK_AGENT.observe_perception(fp)
    agent = ASK_AGENT
    q = data.draw(question_strategy(), label="question")
    t = data.draw(st.one_of(st.none(), st.floats(0, 4.0), hostile(), st.just(np.float64(2.5))), label="t")
    opts = data.draw(options_strategy(), label="options")
    whys, needles = [], ["question", "option", "time", "t="]
    if not is_text(q):
        whys.append(f"question {q!r:.40}")
    if t is not None and not finite_num(t, 0.0, agent.latest_t + 1e-6):
        whys.append(f"t {t!r:.40}")
    if opts is not None:
        seq = opts.tolist() if isinstance(opts, np.ndarray) else opts
        if isinstance(opts, (str, bytes, dict, set)) or not isinstance(seq, (list, tuple)):
            whys.append(f"options {type(opts).__name__}")
        elif len(seq) > 10 or not all(isinstance(o, str) and len(o) <= 10_000 for o in seq):
            whys.append(f"options {seq!r:.60}")
    before = agent_state(agent)
    ans, exc = call(lambda: agent.ask(q, t=t, options=opts))
    changed = not _same(agent_state(agent), before)
    TALLY["ask"].examples += 1
    desc = f"ask({q!r:.30}, t={t!r:.20}, options={opts!r:.40})"
    if exc is None and changed:
        TALLY["ask"].changed[_key(f"{desc}: accepted and memory changed")] += 1
    classify("ask", desc, "; ".join(whys), exc, tuple(needles), changed and exc is not None)
    if exc is None and not whys:
        problem = _check_answer(ans, opts)
        if problem:
            TALLY["ask"].unclear[_key(f"{desc}: wrong result: {problem}")] += 1


def _check_answer(a: Any, opts: Any) -> str:
    if not isinstance(a, Answer):
        return f"returned {type(a).__name__}"
    n = len(opts) if opts is not None else 0
    if n:
        if a.letter is not None and a.letter not in "ABCDEFGHIJ"[:n]:
            return f"letter {a.letter} of {n} options"
        if a.option_scores is not None and not math.isclose(sum(a.option_scores.values()), 1.0, abs_tol=1e-6):
            return f"option scores sum to {sum(a.option_scores.values())}"
    if not (0.0 <= a.confidence <= 1.0):
        return f"confidence {a.confidence}"
    return ""


# ------------------------------------------------------------------------------------------ config


def _leaves(d: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(d, dict) and d:
        return [p for k, v in d.items() for p in _leaves(v, path + (k,))]
    return [path]


DEFAULT = AgentConfig().to_dict()
DEFAULT["query"]["embedder"] = "string"
LEAVES = _leaves(DEFAULT)
RANGE_BAD = {("query", "reach_m"): 0.0, ("query", "max_keyframes"): -1, ("query", "just_now_s"): -5.0,
             ("memory", "map", "pixel_stride"): 0, ("memory", "keyframes", "image_max_side"): 0,
             ("memory", "places", "edge_knn"): -1, ("memory", "keyframes", "jpeg_quality"): 101,
             ("memory", "association", "overlap_min"): 1.5, ("memory", "relocalisation", "max_yaw_deg"): 91.0,
             ("memory", "places", "max_near_edges"): 0, ("memory", "map", "max_instances_per_frame"): 0,
             ("memory", "map", "voxel_m"): -0.05,
             ("perception", "seed"): -1, ("memory", "heading", "grid_cols"): 0, ("memory", "gone", "min_empty"): 2.0}


def _type_ok(default: Any, v: Any) -> Optional[bool]:
    """Whether ``v`` has the type the field of ``default`` needs (None: cannot tell)."""
    if isinstance(default, bool):
        return isinstance(v, bool)
    if isinstance(default, int):
        return isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2 ** 31
    if isinstance(default, float):
        return finite_num(v)
    if isinstance(default, str):
        return isinstance(v, str) and len(v) <= 10_000
    if isinstance(default, (list, tuple)) or default is None:
        return None
    if isinstance(default, dict):
        return isinstance(v, dict)
    return None


def _set(d: dict, path: tuple, v: Any) -> None:
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = v


def config_dict_case(data: st.DataObject) -> tuple[Any, str, Optional[str], tuple[str, ...]]:
    d = copy.deepcopy(DEFAULT)
    kind = data.draw(st.sampled_from(["value", "value", "value", "range", "unknown_key", "section", "options",
                                      "options_bomb", "flat", "valid"]), label="config kind")
    if kind == "value":
        path = data.draw(st.sampled_from(LEAVES), label="path")
        default = DEFAULT
        for k in path:
            default = default[k]
        v = data.draw(st.one_of(hostile(), st.just(default)), label="value")
        _set(d, path, v)
        ok = _type_ok(default, v)
        name = ".".join(map(str, path))
        if path in (("perception", "backend"), ("answerer", "name")):
            ok = None if isinstance(v, str) else False
        if path == ("query", "embedder"):
            ok = v in ("auto", "minilm", "string", "none")
        if path == ("perception", "noise"):
            ok = None if isinstance(v, str) else False
        why = "" if ok else (None if ok is None else f"{name}={v!r:.40}")
        if ok and v != default:
            why = None  # right type, value maybe out of range: the dataclass decides
        return d, f"{name}={v!r:.40}", why, (path[-1], name)
    if kind == "range":
        path = data.draw(st.sampled_from(sorted(RANGE_BAD)), label="path")
        _set(d, path, RANGE_BAD[path])
        name = ".".join(path)
        return d, f"{name}={RANGE_BAD[path]!r}", f"{name} out of range", (path[-1],)
    if kind == "unknown_key":
        section = data.draw(st.sampled_from(["perception", "query", "answerer", "memory", "memory.map", "top"]))
        key = "reach_mm"
        if section == "top":
            d[key] = 1
        elif section == "memory.map":
            d["memory"]["map"][key] = 1
        else:
            d[section][key] = 1
        return d, f"unknown key in {section}", f"unknown key {key}", (key,)
    if kind == "section":
        section = data.draw(st.sampled_from(["perception", "query", "answerer", "memory", "memory.gone"]))
        v = data.draw(st.sampled_from([3, "x", [1], True]))
        if section == "memory.gone":
            d["memory"]["gone"] = v
        else:
            d[section] = v
        return d, f"section {section}={v!r}", f"section {section} not a mapping", (section.split(".")[-1],)
    if kind == "options":
        where = data.draw(st.sampled_from(["perception", "answerer"]))
        json_val = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-100, 100), st.floats(-1e3, 1e3),
                                          st.text(max_size=5)),
                                lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=4), c,
                                                                                             max_size=3)),
                                max_leaves=8)
        bad = st.sampled_from([float("nan"), float("inf"), {1, 2}, b"bytes", object(), 10 ** 30 * 10 ** 30])
        v = data.draw(st.one_of(json_val, bad), label="option value")
        plain = _plain(v)
        d[where]["options"] = {"x": v}
        if where == "answerer":  # the geometric answerer's options are a dataclass: unknown 'x' is refused at build
            d[where]["options"] = {"x": v} if not plain else {}
        why = "" if plain else f"{where}.options.x={v!r:.40}"
        return d, f"{where}.options.x={v!r:.40}", why, ("options",)
    if kind == "options_bomb":
        a: list = ["x"] * 10
        for _ in range(9):
            a = [a] * 10
        d["perception"]["options"] = {"bomb": a}
        return d, "perception.options shared-reference bomb", "options bomb (10**10 nodes)", ("options",)
    if kind == "flat":
        key, v = data.draw(st.sampled_from([("relocalize", "no"), ("relocalize", "false"), ("voxel_m", "0.05"),
                                            ("edge_knn", -1), ("pixel_stride", 2.5), ("keyframe_image_max_side", 0),
                                            ("relocalize", False), ("voxel_m", 0.1)]))
        d["memory"] = {key: v}
        ok = (key, v) in (("relocalize", False), ("voxel_m", 0.1))
        return d, f"memory.{key}={v!r}", "" if ok else f"memory.{key}={v!r}", (key, "memory.")
    return d, "valid default", "", ("config",)


def _plain(v: Any) -> bool:
    """Plain JSON data of at most 10000 values nested at most 60 deep (the harness's own, independent check)."""
    stack, n = [(v, 0)], 0
    while stack:
        x, depth = stack.pop()
        n += 1
        if n > 10_000 or depth > 60:
            return False
        if x is None or isinstance(x, (bool, str)):
            continue
        if isinstance(x, int):
            if abs(x) >= 2 ** 63:
                return False
        elif isinstance(x, float):
            if not math.isfinite(x):
                return False
        elif isinstance(x, list):
            stack.extend((y, depth + 1) for y in x)
        elif isinstance(x, dict):
            if not all(isinstance(k, str) for k in x):
                return False
            stack.extend((y, depth + 1) for y in x.values())
        else:
            return False
    return True


YAML_BOMB = "perception:\n  options:\n    a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"    {chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))


def config_text_case(data: st.DataObject, tmp: Path) -> tuple[Path, str, Optional[str], tuple[str, ...]]:
    import yaml

    kind = data.draw(st.sampled_from(["dump", "dump", "json", "bomb", "merge", "deep", "utf16", "latin1", "big",
                                      "random", "string_bool", "empty", "list"]), label="text kind")
    p = tmp / ("agent.json" if kind == "json" else "agent.yaml")
    p.unlink(missing_ok=True)
    if kind in ("dump", "json"):
        d, desc, why, needles = config_dict_case(data)
        if (kind == "dump" and not _plain(d)) or "bomb" in desc:
            return p, desc, None, needles  # not representable (or 10**10 values when written out): skip
        try:
            text = json.dumps(d) if kind == "json" else yaml.safe_dump(d)
        except (ValueError, TypeError, OverflowError, RecursionError, yaml.YAMLError):
            return p, desc, None, needles
        p.write_text(text, encoding="utf-8")
        return p, f"{kind} {desc}", why, needles + (p.name,)
    texts = {"bomb": YAML_BOMB, "merge": "base: &b {reach_m: 1.0}\nquery:\n  <<: *b\n",
             "deep": "perception:\n  options:\n    x: " + "[" * 100_000 + "]" * 100_000 + "\n",
             "string_bool": "memory:\n  relocalisation:\n    enabled: 'false'\n",
             "empty": "", "list": "- 1\n- 2\n"}
    if kind in texts:
        p.write_text(texts[kind], encoding="utf-8")
        why = "" if kind == "empty" else f"config text {kind}"
        return p, f"yaml {kind}", why, (p.name, "alias", "nested", "enabled", "mapping")
    if kind == "utf16":
        p.write_bytes("query:\n  reach_m: 1.0\n".encode("utf-16"))
        return p, "utf-16 file", "utf-16", (p.name,)
    if kind == "latin1":
        p.write_bytes("answerer:\n  name: g\xe9om\xe9tric\n".encode("latin-1"))
        return p, "latin-1 file", "not utf-8", (p.name,)
    if kind == "big":
        p.write_text("# " + "x" * (1 << 21) + "\n", encoding="utf-8")
        return p, "2 MiB file", "oversized", (p.name,)
    text = data.draw(st.text(max_size=60), label="random text")
    try:
        p.write_text(text, encoding="utf-8")
    except UnicodeEncodeError:
        p.write_bytes(text.encode("utf-8", "surrogatepass"))
    return p, f"random text {text!r:.40}", UNKNOWN, (p.name, "config", "mapping")


def exercise(cfg: AgentConfig, tmp: Path) -> Optional[BaseException]:
    """Use an accepted config: build an Agent, observe two frames, ask, save."""
    def run():
        agent = Agent(cfg)
        for fp in FPS[:2]:
            agent.observe(Frame(fp.frame.t_s, fp.frame.rgb, fp.frame.depth_m, fp.frame.T_world_cam,
                                fp.frame.intrinsics, fp.frame.index, "boxes",
                                {"instances": fp.instances, "scene_tag": fp.scene_tag}))
        agent.ask("Where is the chair?", options=["front", "behind"])
        out = tmp / f"save{time.monotonic_ns()}"
        agent.save(out)
        shutil.rmtree(out, ignore_errors=True)
    _, exc = call(run, seconds=30)
    return exc


def config_example(data: st.DataObject, tmp: Path) -> None:
    TALLY["config"].examples += 1
    if data.draw(st.booleans(), label="from file"):
        path, desc, why, needles = config_text_case(data, tmp)
        if not path.exists():
            return
        cfg, exc = call(lambda: AgentConfig.from_file(path))
    else:
        d, desc, why, needles = config_dict_case(data)
        cfg, exc = call(lambda: AgentConfig.from_dict(d))
    classify("config", desc, why, exc, needles)
    if exc is None:
        use_exc = exercise(cfg, tmp)
        if use_exc is not None and (not isinstance(use_exc, DirectmeError) or isinstance(use_exc, Hang)):
            TALLY["config"].unclear[_key(f"{desc}: accepted, then at use: {type(use_exc).__name__}: {use_exc}")] += 1


# ------------------------------------------------------------------------------------------ loaders


def _fixture(name: str) -> Any:
    return json.loads((ART / name).read_text(encoding="utf-8"))


TEMPLATES: dict[str, Any] = {
    "ucsbench": [{"qid": "q1", "video_uid": "v1", "question": "Where is the sofa?", "question_timestamps": "00:00:09",
                  "options": {"A": "front", "B": "behind"}, "answer_label": "B", "category": "Position"}],
    "ucsbench.jsonl": [{"qid": "v1_0", "video_uid": "v1", "query_timestamp": 3.0, "question": "Where is the sofa?",
                        "options": ["front", "behind", "left", "right"], "answer_idx": 1, "category": "Position",
                        "subcategory": "Ego", "qtype": "OTHER"}],
    "teleego": [{"index": 1, "QA_type": "mc_single", "question": "What did I put in the sink?",
                 "options": ["A. a cup", "B. a plate"], "answer": {"value": ["B"]},
                 "evidence": {"timestep": {"start": "00:00:10", "end": "00:00:20"}}, "category": "Memory"}],
    "phostream": [{"video_path": "v/a.mp4", "verified_responses": [
        {"user_query": "What is on the table?", "timestamp_question": "01:05", "time_type": "forward",
         "timestamp_proactive": "01:10", "response": "a cup", "capability": "memory"}]}],
    "egosat": {"task": "t", "video_uid": "clip", "params": {"a": 1}, "samples": [
        {"idx": 0, "t_eval": 4.0, "step_idx": 0, "prompt": "What next?",
         "mcq": {"answer": "A", "answer_idx": 0, "options": ["cut", "wash", "open", "pour"]}}]},
    "xlebench": [{"log_id": "p01", "video": "p01.mp4", "duration_s": 30, "queries": [
        {"qid": "loc1", "task": "temporal_localization", "query": "When did I wash up?",
         "gt_spans": [["00:00:10", "00:00:20"]]},
        {"qid": "cnt1", "task": "counting", "query": "How many times?", "answer": 3},
        {"qid": "ord1", "task": "summary_ordering", "query": "Order these.", "events": ["a", "b"],
         "answer_order": [0, 1]}]}],
}


def _time_ok(v: Any) -> Optional[bool]:
    if isinstance(v, str):
        s = v.strip()
        if not s or any(c.isalpha() for c in s):
            return False
        return None
    return finite_num(v, 0.0, WEEK)


def _label_ok(v: Any) -> bool:
    return v is None or is_text(v) or (isinstance(v, int) and not isinstance(v, bool) and abs(v) < 10 ** 18)


def _free_ok(v: Any) -> bool:
    return v is None or (isinstance(v, str) and len(v) <= 10_000) or (
        isinstance(v, int) and not isinstance(v, bool) and abs(v) < 10 ** 18) or (finite_num(v) and isinstance(v, float))


def _index_ok(v: Any, hi: int = 2 ** 31) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < hi


def _opts_ok(v: Any, n: Optional[int] = None) -> Optional[bool]:
    if not isinstance(v, list):
        return False
    ok = len(v) <= 10 and all(is_text(o) or (isinstance(o, int) and not isinstance(o, bool) and abs(o) < 10 ** 18)
                              or finite_num(o) for o in v)
    return ok and (n is None or len(v) == n)


# field path in the template -> validity oracle (True/False/None = cannot tell)
FIELDS: dict[str, dict[tuple, Callable[[Any], Optional[bool]]]] = {
    "ucsbench": {(0, "question"): is_text, (0, "question_timestamps"): lambda v: None if isinstance(v, list) else _time_ok(v),
                 (0, "qid"): _label_ok, (0, "video_uid"): _label_ok, (0, "category"): _free_ok,
                 (0, "answer_label"): lambda v: v in ("A", "B", "a", "b", " b ") or (
                     None if isinstance(v, (list, str)) or v is None else False),
                 (0, "options"): lambda v: None if isinstance(v, dict) else (_opts_ok(v) and len(v) >= 2) or
                 (None if isinstance(v, list) or v is None else False)},
    "ucsbench.jsonl": {(0, "question"): is_text, (0, "query_timestamp"): lambda v: None if isinstance(v, list) else _time_ok(v),
                       (0, "answer_idx"): lambda v: v is None or _index_ok(v, 4), (0, "qid"): _label_ok, (0, "qtype"): _free_ok,
                       (0, "options"): lambda v: (_opts_ok(v) and len(v) >= 2) or
                       (None if isinstance(v, dict) else False)},
    "teleego": {(0, "question"): is_text, (0, "QA_type"): lambda v: v in ("mc_single",) or (None if isinstance(v, str) and
                                                                                          v.strip() else False),
                (0, "evidence"): lambda v: False if not isinstance(v, dict) else None,
                (0, "evidence", "timestep", "end"): _time_ok, (0, "index"): _label_ok, (0, "category"): _free_ok,
                (0, "options"): lambda v: None if _opts_ok(v) else False},
    "phostream": {(0, "video_path"): is_text, (0, "verified_responses"): lambda v: None if isinstance(v, list) else False,
                  (0, "verified_responses", 0, "user_query"): is_text,
                  (0, "verified_responses", 0, "timestamp_question"): lambda v: _time_ok(v) if _time_ok(v) is False
                  else (None if isinstance(v, str) else (finite_num(v, 0, 70.0) or None)),
                  (0, "verified_responses", 0, "time_type"): lambda v: v in ("forward", "future", "proactive") or (
                      None if isinstance(v, str) and v.strip() else False),
                  (0, "verified_responses", 0, "response"): _free_ok,
                  (0, "verified_responses", 0, "capability"): _free_ok},
    "egosat": {("samples", 0, "idx"): _index_ok, ("samples", 0, "t_eval"): _time_ok,
               ("samples", 0, "step_idx"): lambda v: v is None or _index_ok(v),
               ("samples", 0, "mcq", "answer"): lambda v: (isinstance(v, str) and v.strip().upper() in "ABCD" and
                                                           bool(v.strip())) or (None if v is None else False),
               ("samples", 0, "mcq", "answer_idx"): lambda v: v is None or _index_ok(v),
               ("samples", 0, "mcq", "options"): lambda v: _opts_ok(v, 4), ("samples",): lambda v: None if isinstance(
                   v, list) else False, ("video_uid",): _label_ok, ("params",): lambda v: v is None or isinstance(v, dict)},
    "xlebench": {(0, "duration_s"): lambda v: None if isinstance(v, str) else (v is None or finite_num(v, 19.0, WEEK)
                                                                             or (False if not finite_num(v, 0, 19.0)
                                                                                 else False)),
                 (0, "queries"): lambda v: None if isinstance(v, list) else False,
                 (0, "queries", 0, "query"): is_text, (0, "queries", 0, "gt_spans"): lambda v: None if isinstance(
                     v, list) and v else False,
                 (0, "queries", 1, "answer"): lambda v: _index_ok(v), (0, "queries", 1, "task"): lambda v: v == "counting"
                 or (None if isinstance(v, str) and v.strip() else False),
                 (0, "queries", 2, "answer_order"): lambda v: None if isinstance(v, list) else (v is None and False),
                 (0, "log_id"): _label_ok, (0, "video"): lambda v: v is None or is_text(v)},
}


def _files_of(name: str) -> tuple[str, str]:
    return (name.split(".")[0], ".jsonl" if name.endswith(".jsonl") else ".json")


def loader_example(data: st.DataObject, tmp: Path) -> None:
    from directme.bench import get_benchmark

    name = data.draw(st.sampled_from(sorted(TEMPLATES)), label="benchmark")
    bench, suffix = _files_of(name)
    path = tmp / f"ann_{bench}{suffix}"
    content = copy.deepcopy(TEMPLATES[name])
    kind = data.draw(st.sampled_from(["field", "field", "field", "bytes", "valid"]), label="loader kind")
    why: Optional[str] = ""
    desc = f"{name} valid"
    if kind == "field":
        fpath = data.draw(st.sampled_from(sorted(FIELDS[name], key=str)), label="field")
        value = data.draw(st.one_of(hostile(), st.just("00:00:05"), st.just(12.0), st.just([1e308, 5])), label="v")
        target = content
        for k in fpath[:-1]:
            target = target[k]
        target[fpath[-1]] = value
        ok = FIELDS[name][fpath](value)
        if isinstance(value, float) and not math.isfinite(value):
            ok = False  # NaN / Infinity are not JSON
        if isinstance(value, int) and not isinstance(value, bool) and len(str(abs(value))) > 4300:
            ok = False
        why = "" if ok else (UNKNOWN if ok is None else f"{'.'.join(map(str, fpath))}={value!r:.40}")
        desc = f"{name} {'.'.join(map(str, fpath))}={value!r:.40}"
    text = _dump(content, suffix)
    raw = text.encode("utf-8")
    if kind == "bytes":
        choice = data.draw(st.sampled_from(["utf16", "latin1", "truncate", "deep", "digits400", "1e308", "nan",
                                            "toplevel", "random", "empty", "bom"]), label="bytes kind")
        if choice == "utf16":
            raw = text.encode("utf-16")
        elif choice == "latin1":
            raw = text.replace("?", "\xe9?").encode("latin-1")
            why = "latin-1" if raw != text.encode("utf-8") else ""
        elif choice == "truncate":
            cut = data.draw(st.integers(1, max(1, len(raw) - 1)), label="cut")
            raw = raw[:cut]
            why = UNKNOWN if suffix == ".jsonl" else "truncated"
        elif choice == "deep":
            raw = ("[" * 100_000 + "]" * 100_000).encode()
        elif choice == "digits400":
            raw = text.replace("00:00:09", "1" * 400).replace("3.0", "1" * 400).replace("\"01:05\"", "1" * 400).replace(
                "4.0", "1" * 400).replace("\"00:00:20\"", "1" * 400).replace("\"00:00:10\"", "1" * 400).encode()
            why = "400-digit timestamp"
        elif choice == "1e308":
            raw = text.replace("00:00:09", "1e308").replace("3.0", "1e308").replace("\"01:05\"", "1e308").replace(
                "4.0", "1e308").replace("\"00:00:20\"", "1e308").replace("\"00:00:10\"", "1e308").encode()
            why = "timestamp 1e308"
        elif choice == "nan":
            raw = text.replace("3.0", "NaN").replace("4.0", "NaN").replace("\"01:05\"", "NaN").replace(
                "\"00:00:09\"", "NaN").replace("\"00:00:20\"", "NaN").replace("\"00:00:10\"", "NaN").encode()
            why = "NaN"
        elif choice == "toplevel":
            raw = b'"just a string"' if suffix == ".json" else b"[1, 2]\n3\n"
        elif choice == "random":
            raw = data.draw(st.binary(min_size=1, max_size=40), label="bytes")
            why = UNKNOWN
        elif choice == "empty":
            raw = b"   \n"
        elif choice == "bom":
            raw = b"\xef\xbb\xbf" + raw
            why = ""
        if choice not in ("latin1", "truncate", "random", "bom", "digits400", "1e308", "nan"):
            why = f"bytes {choice}"
        desc = f"{name} bytes {choice}"
    path.write_bytes(raw)
    module = get_benchmark(bench)
    timeline = None
    episodes, exc = call(lambda: module.load(str(path), timeline=timeline))
    TALLY["loaders"].examples += 1
    classify("loaders", desc, why, exc, (path.name,))
    if exc is None:
        problem = _check_episodes(episodes)
        if problem:
            TALLY["loaders"].silent[_key(f"{desc}: loaded, but {problem}")] += 1


def _dump(content: Any, suffix: str) -> str:
    if suffix == ".jsonl":
        return "\n".join(json.dumps(r) for r in content) + "\n"
    return json.dumps(content, indent=1)


def _check_episodes(episodes: Any) -> str:
    for ep in episodes:
        for item in ep.items:
            for attr in ("t_s", "t_eval", "t_q_s", "t_answer_s"):
                t = getattr(item, attr, None)
                if t is not None and not (isinstance(t, float) and 0 <= t <= WEEK):
                    return f"{attr}={t!r:.40}"
            for attr in ("text", "question", "query", "user_query"):
                q = getattr(item, attr, None)
                if q is not None and not is_text(q):
                    return f"{attr}={q!r:.40}"
            for attr in ("options", "events"):
                opts = getattr(item, attr, None)
                if opts is not None and not (isinstance(opts, tuple) and all(isinstance(o, str) for o in opts)):
                    return f"{attr}={opts!r:.60}"
            for a, b in getattr(item, "gt_spans", ()) or ():
                if not (0 <= a <= b <= WEEK):
                    return f"span {a}-{b}"
        horizon = ep.meta.get("horizon_s", 0.0)
        if not (isinstance(horizon, float) and 0 <= horizon <= WEEK + 3):
            return f"horizon_s={horizon!r:.40}"
    return ""


# ------------------------------------------------------------------------------------------ Agent.load


SAVED: Optional[Path] = None


def load_example(data: st.DataObject, tmp: Path) -> None:
    global SAVED
    if SAVED is None:
        agent = Agent(BASE_CONFIG)
        for fp in FPS[:5]:
            agent.observe_perception(fp)
        SAVED = Path(tempfile.mkdtemp(prefix="fuzz_saved_")) / "agent"
        agent.save(SAVED)
    files = sorted(p for p in SAVED.rglob("*") if p.is_file())
    rel = data.draw(st.sampled_from([p.relative_to(SAVED) for p in files]), label="file")
    d = tmp / f"copy{time.monotonic_ns()}"
    shutil.copytree(SAVED, d)
    f = d / rel
    raw = f.read_bytes()
    kind = data.draw(st.sampled_from(["delete", "truncate", "empty", "garbage", "folder", "flip", "json_value",
                                      "nested", "bigint", "npy_header", "bad_name"]))
    why: Optional[str] = f"{kind} {rel}"
    if kind in ("nested", "bigint", "npy_header", "bad_name"):  # damage the checksums cannot catch: resealed
        rel = _resealed_damage(data, d, kind, rel)
        if rel is None:
            shutil.rmtree(d, ignore_errors=True)
            return
        why = f"{kind} {rel}"
    elif kind == "delete":
        f.unlink()
    elif kind == "truncate":
        f.write_bytes(raw[: data.draw(st.integers(0, max(0, len(raw) - 1)), label="cut")])
    elif kind == "empty":
        f.write_bytes(b"")
    elif kind == "garbage":
        f.write_bytes(data.draw(st.binary(min_size=1, max_size=64), label="garbage"))
    elif kind == "folder":
        f.unlink()
        f.mkdir()
    elif kind == "flip":
        i = data.draw(st.integers(0, len(raw) - 1), label="byte")
        f.write_bytes(raw[:i] + bytes([raw[i] ^ (1 << data.draw(st.integers(0, 7)))]) + raw[i + 1:])
        why = UNKNOWN
    elif kind == "json_value":
        if f.suffix != ".json":
            shutil.rmtree(d, ignore_errors=True)
            return
        obj = json.loads(raw)
        paths = _leaves(obj) if isinstance(obj, dict) else [()]
        p = data.draw(st.sampled_from(paths), label="json path")
        v = data.draw(hostile(), label="json value")
        if p:
            _set(obj, p, v)
        else:
            obj = v
        try:
            f.write_text(json.dumps(obj), encoding="utf-8")
        except (ValueError, TypeError, OverflowError):
            shutil.rmtree(d, ignore_errors=True)
            return
        why = UNKNOWN
    agent, exc = call(lambda: Agent.load(d))
    TALLY["load"].examples += 1
    classify("load", f"{kind} {rel}", why, exc, (rel.name, str(rel), d.name, "manifest", "agent.json", "memory"))
    if exc is None:
        _, use = call(lambda: agent.ask("Where is the chair?", options=["front", "behind"]))
        if use is not None and not isinstance(use, DirectmeError):
            TALLY["load"].unclear[_key(f"{kind} {rel}: loaded, then ask: {type(use).__name__}: {use}")] += 1
    shutil.rmtree(d, ignore_errors=True)


def _reseal(save: Path) -> None:
    """Recompute the manifests' sizes and sha256 and their own (memory/ first)."""
    import hashlib

    from directme._atomic import SELF_SHA, manifest_digest

    for m in (save / "memory" / "manifest.json", save / "manifest.json"):
        try:
            data = json.loads(m.read_text())
        except (ValueError, RecursionError):  # the manifest is the damaged file: left as it is
            continue
        for rel in data["files"]:
            p = m.parent / rel
            if p.is_file():
                data["files"][rel] = {"size": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        data[SELF_SHA] = manifest_digest(data)
        m.write_text(json.dumps(data))


def _resealed_damage(data: st.DataObject, d: Path, kind: str, rel: Path) -> Optional[Path]:
    """Damage a save the way an edit that recomputes the checksums would (the manifest's own included): deep
    nesting or a huge integer in a JSON file, an .npy header declaring more than its bytes, a manifest naming
    an impossible file. Returns the file damaged (None: nothing to do for this file)."""
    if kind in ("nested", "bigint"):
        if rel.suffix != ".json":
            return None
        text = (d / rel).read_text()
        if kind == "nested":
            depth = data.draw(st.sampled_from([100, 5000, 100_000]), label="depth")
            opener = data.draw(st.sampled_from(["[", '{"a":']), label="opener")
            closer = "]" if opener == "[" else "}"
            value = opener * depth + "1" + closer * depth * data.draw(st.sampled_from([0, 1]), label="closed")
        else:
            value = ("-" if data.draw(st.booleans()) else "") + "7" * data.draw(st.sampled_from([41, 4301, 100_000]))
        (d / rel).write_text(text.replace("{", '{"x": ' + value + ", ", 1) if text.startswith("{") else value)
        _reseal(d)
        return rel
    if kind == "npy_header":
        arrays = d / "memory" / "arrays.npz"
        shape = data.draw(st.sampled_from([(10 ** 12,), (10 ** 9,), (2 ** 62, 4), (3,), (0,)]), label="shape")
        n_bytes = data.draw(st.sampled_from([0, 24, 64]), label="bytes")
        if int(np.prod(shape, dtype=object)) * 8 == n_bytes:
            n_bytes += 8  # always one that does not add up
        import zipfile

        with zipfile.ZipFile(arrays, "a") as z, z.open("extra.npy", "w") as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": shape})
            f.write(b"\0" * n_bytes)
        _reseal(d)
        return arrays.relative_to(d)
    m = d / "manifest.json"
    from directme._atomic import SELF_SHA, manifest_digest

    doc = json.loads(m.read_text())
    name = data.draw(st.sampled_from(["agent\x00.json", "a\nb", "x" * 300, "..\\agent.json", "a/\x7f"]), label="name")
    doc["files"][name] = doc["files"]["agent.json"]
    doc[SELF_SHA] = manifest_digest(doc)
    m.write_text(json.dumps(doc))
    return Path("manifest.json")


# ------------------------------------------------------------------------------------------ Agent.save, disk errors


class _FaultyDisk:
    """A fake failing filesystem: an audit hook that makes the ``at``-th change under ``root`` (a file opened
    for writing, a directory made, a rename, a removal) fail with OSError ``code`` (nothing is done)."""

    EVENTS = ("os.rename", "os.mkdir", "os.remove", "os.rmdir", "shutil.rmtree", "os.truncate")
    WRITING = __import__("os").O_WRONLY | __import__("os").O_RDWR | __import__("os").O_CREAT

    def __init__(self) -> None:
        self.root, self.at, self.code, self.seen = None, 0, 0, 0
        sys.addaudithook(self.hook)

    def hook(self, event: str, args: tuple) -> None:
        if self.root is None or not args:
            return
        if event == "open":
            if not (isinstance(args[2], int) and args[2] & self.WRITING or isinstance(args[1], str) and
                    any(c in args[1] for c in "wxa+")):
                return
        elif event not in self.EVENTS:
            return
        import os

        path = args[0]
        if not isinstance(path, (str, bytes, os.PathLike)) or not os.fsdecode(path).startswith(self.root):
            return
        self.seen += 1
        if self.seen == self.at:
            raise OSError(self.code, os.strerror(self.code), os.fsdecode(path))


DISK: Optional[_FaultyDisk] = None
SAVE_CODES = ("ENOSPC", "EFBIG", "EROFS", "EIO", "EDQUOT", "EACCES")


def _limited_save(agent: Agent, target: str, limit: int, out: Any) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    try:
        agent.save(target)
        out.put(None)
    except BaseException as exc:  # noqa: BLE001 - the parent classifies it
        out.put((type(exc).__name__, isinstance(exc, DirectmeError), str(exc)))


def save_example(data: st.DataObject, tmp: Path) -> None:
    """``Agent.save`` over an earlier save while the disk fails: the n-th file or directory change refused with
    ENOSPC, EFBIG, EROFS, EIO, EDQUOT or EACCES (a fake filesystem), or a file size limit (RLIMIT_FSIZE, in
    a forked child). The error must be a DirectmeError naming the directory; the earlier save must load as
    it was, and nothing may be left beside it."""
    import errno
    import multiprocessing

    global DISK
    DISK = DISK or _FaultyDisk()
    d = tmp / f"save{time.monotonic_ns()}"
    old_agent, new_agent = Agent(BASE_CONFIG), Agent(BASE_CONFIG)
    for fp in FPS[:3]:
        old_agent.observe_perception(fp)
    for fp in FPS[:3 + data.draw(st.integers(1, 5), label="frames")]:
        new_agent.observe_perception(fp)
    old_agent.save(d / "agent")
    before = agent_state(Agent.load(d / "agent"))
    how = data.draw(st.sampled_from(SAVE_CODES + ("RLIMIT_FSIZE",)), label="fault")
    exc: Optional[BaseException] = None
    if how == "RLIMIT_FSIZE":
        limit = data.draw(st.sampled_from([0, 100, 4096, 20_000]), label="limit")
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        child = ctx.Process(target=_limited_save, args=(new_agent, str(d / "agent"), limit, out))
        child.start()
        got = out.get(timeout=60)
        child.join(timeout=30)
        if got is not None:
            name, clear, msg = got
            exc = (type(name, (DirectmeError,), {}) if clear else type(name, (Exception,), {}))(msg)
    else:
        DISK.root, DISK.at, DISK.seen = str(d), data.draw(st.integers(1, 14), label="at"), 0
        DISK.code = getattr(errno, how)
        try:
            _, exc = call(lambda: new_agent.save(d / "agent"))
        finally:
            DISK.root = None
        if exc is None and DISK.seen < DISK.at:
            shutil.rmtree(d, ignore_errors=True)
            return  # the save needed fewer changes than the fault's position: nothing failed
    TALLY["save"].examples += 1
    classify("save", f"{how}", None, exc, (str(d / "agent"),))
    if exc is not None:
        after, load_exc = call(lambda: agent_state(Agent.load(d / "agent")))
        left = sorted(p.name for p in d.iterdir())
        if load_exc is not None or not _same(after, before) or left != ["agent"]:
            TALLY["save"].changed[_key(f"{how}: earlier save not intact ({load_exc}; {left})")] += 1
    shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------------------------------ OpenAI-compatible server


class _Reply:
    """What the loopback server sends next: status, headers, body (set per example)."""

    status, headers, body = 200, {}, b"{}"


def _server() -> str:
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def _send(self) -> None:
            self.send_response(_Reply.status)
            for k, v in {"Content-Type": "application/json", "Content-Length": str(len(_Reply.body)),
                         **_Reply.headers}.items():
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(_Reply.body)
            except OSError:
                pass

        def do_GET(self) -> None:
            if self.path.endswith("/models"):  # a hostile server: the model id is the key it was sent
                body = json.dumps({"data": [{"id": self.headers.get("Authorization", "")}]}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self._send()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self._send()

        def log_message(self, *args: Any) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return f"http://127.0.0.1:{srv.server_address[1]}/v1"


SERVER: Optional[str] = None
API_KEY = "sk-fuzz-0123456789abcdef"


def http_example(data: st.DataObject) -> None:
    """The OpenAI-compatible answerer against a loopback server sending one reply: an answer, plain or gzip /
    deflate encoded (valid: the letter must come back), or one built invalid - nested, unknown or lying
    encodings, corrupt or cut compressed data, a decompression bomb, deep nesting, huge integers - which
    must give a BACKEND_ERROR answer (never an exception, never the key) within the deadline + 1 s."""
    import gzip
    import zlib

    from directme.answerers.base import QueryContext
    from directme.answerers.openai_api import build
    from directme.types import Flag

    global SERVER
    SERVER = SERVER or _server()
    ok = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "B"}}]}).encode()
    body_kind = data.draw(st.sampled_from(["answer", "bomb", "deep", "bigint", "garbage", "not json"]), label="body")
    body = {"answer": ok, "bomb": b'{"choices": [{"message": {"content": "' + b"x" * (6 << 20) + b'"}}]}',
            "deep": b"[" * 100_000, "bigint": b'{"choices": [{"index": ' + b"7" * 5000 + b"}]}",
            "garbage": data.draw(st.binary(max_size=64), label="bytes"), "not json": b"<html>oops</html>"}[body_kind]
    enc = data.draw(st.sampled_from(["", "identity", "gzip", "x-gzip", "deflate", "raw deflate", "br", "zstd",
                                     "gzip, gzip", "deflate, gzip", "GZIP", "compress", "gzip cut", "gzip lie"]),
                    label="encoding")
    coded = {"gzip": gzip.compress, "x-gzip": gzip.compress, "GZIP": gzip.compress, "deflate": zlib.compress,
             "raw deflate": lambda b: zlib.compress(b)[2:-4], "gzip, gzip": lambda b: gzip.compress(gzip.compress(b)),
             "deflate, gzip": lambda b: gzip.compress(zlib.compress(b)), "gzip cut": lambda b: gzip.compress(b)[:-9],
             "gzip lie": lambda b: b}.get(enc, lambda b: b)(body)
    header = {"raw deflate": "deflate", "gzip cut": "gzip", "gzip lie": "gzip"}.get(enc, enc)
    _Reply.status, _Reply.headers, _Reply.body = 200, ({"Content-Encoding": header} if header else {}), coded
    valid = body_kind == "answer" and enc in ("", "identity", "gzip", "x-gzip", "GZIP", "deflate", "raw deflate")
    why = "" if valid else f"{body_kind} body, encoding {enc!r}"
    timeout_s = 3.0
    a = build({"base_url": SERVER, "model": data.draw(st.sampled_from(["m", ""]), label="model"), "api_key": API_KEY,
               "timeout_s": timeout_s, "retries": 1, "backoff_s": 0.05, "max_reply_bytes": 1 << 20})
    ctx = QueryContext(question="Where is the sofa now?", t_s=10.0, options=("front", "behind"), intent=None,
                       snapshot=None, subgraph_text="Time: 10.0 s.\nObjects:\n- sofa [o1]: front, 2.0 m")
    t0 = time.monotonic()
    ans, exc = call(lambda: a.answer(ctx))
    took = time.monotonic() - t0
    a.close()
    TALLY["http"].examples += 1
    what = f"{body_kind} body, encoding {enc!r}"
    if exc is not None:
        classify("http", what, why, exc, ("reply", "encoding"))
        return
    if took > timeout_s + 1.0:
        TALLY["http"].unclear[_key(f"{what}: took {took:.1f} s (timeout_s {timeout_s})")] += 1
    if any(API_KEY in x for x in (ans.answerer, ans.text, ans.raw_output)):
        TALLY["http"].unclear[_key(f"{what}: the API key is shown: {ans.answerer} {ans.text}")] += 1
    failed = Flag.BACKEND_ERROR in ans.flags
    if why and not failed:
        TALLY["http"].silent[_key(f"{what}: answered {ans.letter!r} {ans.text!r:.60}")] += 1
    elif not why and (failed or ans.letter != "B"):
        TALLY["http"].rejected_valid[_key(f"{what}: {ans.text}")] += 1


# ------------------------------------------------------------------------------------------ CLI arguments


CLI_VALUES = st.one_of(st.sampled_from(["-3", "-1", "0", "1", "2.5", "nan", "inf", "-inf", "1e308", "1e-9", "",
                                        "abc", "10", "1000", "1001", "99999999999999999999"]), st.text(max_size=6))


def cli_example(data: st.DataObject, tmp: Path) -> None:
    """``directme run`` / ``directme eval`` with one numeric option or output path drawn: a bad one must be
    refused by argparse (exit 2, the option named) or with a clear error naming it, the same way by both
    commands; never a traceback."""
    import contextlib as cl
    import io

    from directme.cli import main as cli_main

    opt = data.draw(st.sampled_from(["--fps", "--max-frames", "--map-every", "--report-maps", "--rerun",
                                     "--out", "--eval-out", "--eval-fps"]), label="option")
    if opt in ("--rerun", "--out", "--eval-out"):
        kind = data.draw(st.sampled_from(["dir", "file", "below file", "empty", "new"]), label="path")
        f = tmp / "a_file"
        f.write_text("x")
        value = {"dir": str(tmp), "file": str(f), "below file": str(f / "x"), "empty": " ", "new": str(tmp / "new" /
                                                                                                     "x")}[kind]
        is_dir = opt == "--eval-out"
        ok = kind == "new" or (kind == "dir" and is_dir) or (kind == "file" and not is_dir)
    else:
        value = data.draw(CLI_VALUES, label="value")
        try:
            v = float(value)
        except ValueError:
            v = math.nan
        try:
            n: Optional[int] = int(value)
        except ValueError:
            n = None
        ok = {"--fps": 0 <= v <= 1000, "--eval-fps": 0 <= v <= 1000, "--map-every": 0 < v < math.inf,
              "--max-frames": n is not None and n >= 1, "--report-maps": n is not None and n >= 0}[opt]
    name = opt.replace("eval-", "")
    argv = (["eval", "sim", "--annotations", str(tmp / "none"), name, value] if opt.startswith("--eval") else
            ["run", str(tmp / "no_input"), opt, value])
    def run() -> Any:
        try:
            return cli_main(argv)
        except SystemExit as e:  # argparse's refusal
            return e.code

    err = io.StringIO()
    with cl.redirect_stderr(err), cl.redirect_stdout(io.StringIO()):
        rc, exc = call(run)
    TALLY["cli"].examples += 1
    what = f"{argv[0]} {name} {value!r:.30}"
    if exc is not None:
        classify("cli", what, "" if ok else what, exc, (name,))
        return
    refused_for_it = rc == 2 and name in err.getvalue()
    if not ok and not refused_for_it:
        TALLY["cli"].silent[_key(f"{what}: rc={rc} {err.getvalue()[-120:]}")] += 1
    elif ok and refused_for_it:
        TALLY["cli"].rejected_valid[_key(f"{what}: {err.getvalue()[-120:]}")] += 1


# ------------------------------------------------------------------------------------------ main


def run_target(name: str, fn: Callable[..., None], n: int, seed_value: int, *extra: Any) -> None:
    @seed(seed_value)
    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate], derandomize=False,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
    @given(st.data())
    def target(data: st.DataObject) -> None:
        fn(data, *extra)

    target()


TARGETS = {"observe": observe_example, "ask": ask_example, "config": config_example, "loaders": loader_example,
           "load": load_example, "save": save_example, "http": http_example, "cli": cli_example}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=2000, help="hypothesis examples per target (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (same seed, same inputs)")
    ap.add_argument("--targets", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    ap.add_argument("--show", type=int, default=8, help="offenders listed per kind and target")
    args = ap.parse_args()
    if args.examples < 1:
        ap.error("--examples must be >= 1")
    sys.setrecursionlimit(3000)
    import logging

    logging.disable(logging.WARNING)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz_inputs_") as tmp:
        for name in args.targets:
            t1 = time.perf_counter()
            extra = () if name in ("observe", "ask", "http") else (Path(tmp),)
            run_target(name, TARGETS[name], args.examples, args.seed, *extra)
            t = TALLY[name]
            print(f"{name}: examples={t.examples} unclear={sum(t.unclear.values())} silent={sum(t.silent.values())} "
                  f"changed={sum(t.changed.values())} rejected_valid={sum(t.rejected_valid.values())} "
                  f"({time.perf_counter() - t1:.0f} s)", flush=True)
            for label, counter in (("unclear", t.unclear), ("silent", t.silent), ("changed", t.changed),
                                   ("rejected_valid", t.rejected_valid)):
                for msg, count in counter.most_common(args.show):
                    print(f"  {label} x{count}: {msg}")
    if SAVED is not None:
        shutil.rmtree(SAVED.parent, ignore_errors=True)
    unclear = sum(sum(t.unclear.values()) for t in TALLY.values())
    silent = sum(sum(t.silent.values()) for t in TALLY.values())
    changed = sum(sum(t.changed.values()) for t in TALLY.values())
    print(f"directme {directme.__version__}, seed {args.seed}, {args.examples} examples per target, "
          f"{time.perf_counter() - t0:.0f} s")
    print(f"unclear_errors={unclear} silent_accept_of_invalid={silent} memory_changed_on_error={changed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
