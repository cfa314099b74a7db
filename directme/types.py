"""Core data types passed between stages (frozen dataclasses, units and frames in names)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np

from .errors import InvalidInputError
from .geometry import Intrinsics, Pose, check_depth, median

if TYPE_CHECKING:  # annotations only: the query layer is above this one
    from .query.parsed import Intent

OPTION_LETTERS = "ABCDEFGHIJ"


class TextEnum(str, Enum):
    """Base of the closed sets of names (``class PoseSource(TextEnum)``): a member is its string value
    (equal, same hash, JSON), and prints as it (``str``/``format``: "given", not "PoseSource.GIVEN")."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


class Flag(TextEnum):
    """Special cases an ``Answer`` is marked with."""

    NO_EVIDENCE = "no_evidence"  # memory holds nothing to answer from: scores uniform, confidence low
    MISSING_OBJECT = "missing_object"  # an object the question names is not in memory as of the asked time
    UNPARSED = "unparsed"  # an MLLM reply with no recognisable answer
    NOT_UNDERSTOOD = "not_understood"  # the question was not understood
    NO_TARGET = "no_target"  # the question names no object memory could look for
    EMPTY_MEMORY = "empty_memory"  # nothing observed yet
    BEFORE_FIRST_FRAME = "before_first_frame"  # asked before the first observed frame
    OPTIONS_MISMATCH = "options_mismatch"  # the options did not fit what memory says
    NO_PLACES = "no_places"  # a place answer without scene tags
    SILENT = "silent"  # streaming: not answering yet
    NO_PROBS = "no_probs"  # the MLLM backend gave no probabilities: confidence is nominal
    BACKEND_ERROR = "backend_error"  # server down, too slow or malformed reply: no answer, confidence 0
    MLLM_FAILED = "mllm_failed"  # the policy's MLLM failed: the geometric answer stands
    ABSTAINED = "abstained"  # no answer (letter None): unsure parse, a question for an MLLM, no evidence or a
    # missing object (``Answer.abstained`` reads it and backend_error; every benchmark counts that property)
    RANDOM_WEIGHTS = "random_weights"  # a perception or answerer model runs with random weights: meaningless
    UNKNOWN_SCALE = "unknown_scale"  # states or uses lengths, but memory's depth and poses are up to an unknown scale


# The flags that mark an answer as no answer at all (``Answer.abstained``; result files that hold only flags).
NO_ANSWER_FLAGS = frozenset({Flag.ABSTAINED, Flag.BACKEND_ERROR})


def is_no_answer(flags: Sequence[Any]) -> bool:
    """Whether ``flags`` (Flag members or their names, e.g. read back from a result file) mark no answer."""
    return any(f in NO_ANSWER_FLAGS for f in flags or ())


@dataclass(frozen=True)
class Evidence:
    """One memory item an answer used: a node id, the times it was seen, keyframe times."""

    node_id: str
    label: str = ""
    times_s: tuple[float, ...] = ()
    keyframe_times_s: tuple[float, ...] = ()
    detail: str = ""


@dataclass(frozen=True)
class Answer:
    """An answer at time ``t_s``. ``letter`` for multiple choice, ``text`` always.

    ``option_scores`` maps letters to probabilities that sum to 1 when options were given; ``flags``
    (``Flag`` values) mark special cases; ``abstained`` says whether it is no answer at all. ``intent`` is the
    parse the answer was given for (what a picture of it draws); None where the question was not parsed (nothing
    in memory yet, or an answer built by hand). It is not part of an answer's equality, repr or result files."""

    question: str
    t_s: float
    text: str
    letter: Optional[str] = None
    confidence: float = 0.0
    option_scores: Optional[Mapping[str, float]] = None
    evidence: tuple[Evidence, ...] = ()  # the memory items the answer used
    subgraph_text: str = ""
    answerer: str = ""
    flags: tuple[Flag, ...] = ()
    raw_output: str = ""
    latency_s: float = 0.0
    intent: Optional["Intent"] = field(default=None, compare=False, repr=False)
    value: Optional[float] = None  # a numeric answer (a size, an area, a distance, a count), in ``unit``
    unit: str = ""  # of ``value``: "cm", "m", "m2" or "" (a count)

    def __post_init__(self) -> None:
        try:  # a flag given by its name ("abstained", e.g. read back from a result file) becomes the Flag
            object.__setattr__(self, "flags", tuple(Flag(f) for f in self.flags))
        except ValueError as exc:
            raise InvalidInputError(f"Answer.flags: {exc}; known flags: {[f.value for f in Flag]}") from None

    @property
    def abstained(self) -> bool:
        """No answer at all (a flag of ``NO_ANSWER_FLAGS``: ``abstained``, or ``backend_error``; no letter,
        confidence 0): the one test every caller and benchmark uses, so that an abstention is never scored as
        an answer, on time or judged."""
        return is_no_answer(self.flags)

    @property
    def entropy(self) -> Optional[float]:
        if not self.option_scores:
            return None
        p = np.asarray([v for v in self.option_scores.values() if v > 0], dtype=np.float64)
        return float(-(p * np.log(p)).sum())


# Bounds of what the door lets in (docs/conventions.md, "Input checks"): beyond them an input is a unit or
# format mistake, not data, and is refused with InvalidInputError naming the field.
MAX_STREAM_S = 1e7  # stream times are seconds from the start of the stream (1e7 s is 115 days)
MAX_TRANSLATION_M = 1e5  # camera positions in metres in a local frame (memory stores poses as float32: 1 cm at 100 km)
MAX_MEDIAN_DEPTH_M = 100.0  # a frame whose median valid depth is farther is in millimetres (or another unit)
MAX_TEXT_CHARS = 10_000  # a question, an option, a label or a scene tag
MAX_ID = 2 ** 63  # track ids fit in int64
MAX_FRAME_INDEX = 2 ** 31  # frame indices fit in int32 (the memory's ego log stores them so)


def describe(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (a message never echoes a megabyte of input)."""
    try:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10 ** 30:
            return f"an integer of {len(str(abs(value)))} digits"
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_number(value: Any) -> bool:
    """A real number (Python or numpy int/float), not a bool and not a string."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def as_int(value: Any, what: str, limit: int = MAX_ID) -> int:
    """``value`` as an int when it is an integer (Python or numpy, not bool) in [-limit, limit)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or \
            not -limit <= int(value) < limit:
        raise InvalidInputError(f"{what} must be an integer in [-2**{limit.bit_length() - 1}, 2**"
                                f"{limit.bit_length() - 1}), got {type(value).__name__} {describe(value)}")
    return int(value)


def as_text(value: Any, what: str, *, empty: bool = False) -> str:
    """``value`` when it is a string (numpy strings too) of at most MAX_TEXT_CHARS, non-blank unless ``empty``."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__} {describe(value)}")
    if len(value) > MAX_TEXT_CHARS:
        raise InvalidInputError(f"{what} is {len(value)} characters long (at most {MAX_TEXT_CHARS})")
    if not empty and not value.strip():
        raise InvalidInputError(f"{what} must be a non-empty string, got {describe(value)}")
    return str(value)


def finite_float(value: Any) -> Optional[float]:
    """``value`` as a float when it is a finite real number (a 400-digit integer is not: no OverflowError)."""
    if not is_number(value):
        return None
    try:
        f = float(value)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def as_fraction(value: Any, what: str) -> float:
    """``value`` as a float when it is a finite number in [0, 1]."""
    f = finite_float(value)
    if f is None or not 0.0 <= f <= 1.0:
        raise InvalidInputError(f"{what} must be a number in [0, 1], got {describe(value)}")
    return f


def check_timestamp(t_s: Any, what: str = "timestamp", max_s: float = MAX_STREAM_S) -> float:
    """``t_s`` as float seconds when it is a number in [0, max_s] (not a bool, a string, NaN or inf)."""
    if not is_number(t_s):
        raise InvalidInputError(f"{what} must be a number of seconds, got {type(t_s).__name__} {describe(t_s)}")
    t = finite_float(t_s)
    if t is None or t < 0:
        raise InvalidInputError(f"{what} must be a finite number of seconds >= 0, got {describe(t_s)}")
    if t > max_s:
        raise InvalidInputError(f"{what} = {t:.6g} s is beyond {max_s:.6g} s: stream times are seconds from the "
                                "start of the stream (subtract the first frame's time; is it a Unix time?)")
    return t


def check_options(options: Any, what: str = "options") -> tuple[str, ...]:
    """Multiple-choice options as a tuple of strings (None: no options). A string or a mapping is refused,
    not split into characters or reduced to its keys; a set is refused (no order, no letters)."""
    if options is None:
        return ()
    if isinstance(options, (str, bytes, bytearray)):
        raise InvalidInputError(f"{what} must be a list of strings, got a single {type(options).__name__} "
                                f"{describe(options)}; pass [text, ...] (a string is not split into options)")
    if isinstance(options, Mapping):
        raise InvalidInputError(f"{what} must be a list of strings in letter order, got a {type(options).__name__}; "
                                "pass list(options.values()) if its values are the options in order")
    if isinstance(options, np.ndarray):
        if options.ndim != 1:
            raise InvalidInputError(f"{what} must be a flat list of strings, got an array of shape {options.shape}")
        options = options.tolist()
    if not isinstance(options, Sequence):
        raise InvalidInputError(f"{what} must be a list or tuple of strings, got {type(options).__name__}")
    if len(options) > len(OPTION_LETTERS):
        raise InvalidInputError(f"{what}: at most {len(OPTION_LETTERS)} options (letters {OPTION_LETTERS}), "
                                f"got {len(options)}")
    return tuple(as_text(o, f"{what}[{i}] ({OPTION_LETTERS[i]})", empty=True) for i, o in enumerate(options))


@dataclass(frozen=True, eq=False)
class Frame:
    """One image of the stream, with whatever geometry the source provides.

    ``rgb`` is (H, W, 3) uint8; ``depth_m`` (H, W) float metres (0 or NaN = invalid);
    ``T_world_cam`` the camera-to-world pose; ``intrinsics`` for this image size. ``pose_only``: the depth is
    deliberately empty (a recording with poses and no depth): memory then takes the frame, if it has no
    instances, for the wearer's path alone, where an all-invalid depth map is otherwise an error.
    """

    t_s: float
    rgb: np.ndarray
    depth_m: Optional[np.ndarray] = None
    T_world_cam: Optional[Pose] = None
    intrinsics: Optional[Intrinsics] = None
    index: int = -1
    source: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    pose_only: bool = False  # the depth is deliberately empty: only the pose is known (see the docstring)

    def __post_init__(self) -> None:
        index = as_int(self.index, "frame index", MAX_FRAME_INDEX)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "source", as_text(self.source, f"frame {index} source", empty=True))
        where = f"frame {index}" + (f" ({self.source})" if self.source else "")
        object.__setattr__(self, "t_s", check_timestamp(self.t_s, f"{where} t_s"))
        if not isinstance(self.meta, Mapping):
            raise InvalidInputError(f"{where}: meta must be a mapping, got {type(self.meta).__name__}")
        if not isinstance(self.pose_only, (bool, np.bool_)):
            raise InvalidInputError(f"{where}: pose_only must be True or False, got {describe(self.pose_only)}")
        object.__setattr__(self, "pose_only", bool(self.pose_only))
        rgb = _array(self.rgb, f"{where}: rgb")
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.shape[0] < 1 or rgb.shape[1] < 1:
            raise InvalidInputError(f"{where}: rgb must be (H, W, 3) with H, W >= 1, got {rgb.shape}")
        if rgb.dtype != np.uint8:
            raise InvalidInputError(f"{where}: rgb must be uint8, got {rgb.dtype}")
        object.__setattr__(self, "rgb", rgb)
        if self.intrinsics is not None and not isinstance(self.intrinsics, Intrinsics):
            raise InvalidInputError(f"{where}: intrinsics must be a directme.Intrinsics, got "
                                    f"{type(self.intrinsics).__name__}")
        if self.intrinsics is not None and self.intrinsics.shape_hw != rgb.shape[:2]:
            raise InvalidInputError(
                f"{where}: intrinsics are for {self.intrinsics.shape_hw} (H, W) "
                f"but the image is {rgb.shape[:2]}; use Intrinsics.resized()")
        if self.depth_m is not None:
            raw = _array(self.depth_m, f"{where}: depth_m")
            if raw.dtype.kind not in "fiu":
                raise InvalidInputError(f"{where}: depth_m must be numeric (float metres), got {raw.dtype}")
            d = raw.astype(np.float32, copy=False)
            if d.shape != rgb.shape[:2]:
                raise InvalidInputError(f"{where}: depth shape {d.shape} != image shape {rgb.shape[:2]}")
            if self.intrinsics is not None:
                check_depth(d, self.intrinsics)
            object.__setattr__(self, "depth_m", d)
        if self.T_world_cam is not None:
            pose = self.T_world_cam if isinstance(self.T_world_cam, Pose) else _pose(self.T_world_cam, where)
            dist = float(np.linalg.norm(pose.t))
            if not dist <= MAX_TRANSLATION_M:
                raise InvalidInputError(
                    f"{where}: T_world_cam puts the camera {dist:.3g} m from the world origin (at most "
                    f"{MAX_TRANSLATION_M:.0e} m): poses must be in metres in a local frame (millimetres? "
                    "geographic coordinates? subtract a local origin)")
            object.__setattr__(self, "T_world_cam", pose)

    @property
    def shape_hw(self) -> tuple[int, int]:
        return (int(self.rgb.shape[0]), int(self.rgb.shape[1]))


def _array(value: Any, what: str) -> np.ndarray:
    """``np.asarray(value)`` of a numeric array, or InvalidInputError (ragged lists, objects, strings)."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"{what} is not an array ({describe(str(exc), 100)})") from None
    if arr.dtype.kind not in "biuf":
        raise InvalidInputError(f"{what} must be a numeric array, got dtype {arr.dtype}")
    return arr


def _pose(value: Any, where: str) -> Pose:
    if not isinstance(value, np.ndarray):
        _array(value, f"{where}: T_world_cam")
    try:
        return Pose(value)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: T_world_cam: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"{where}: T_world_cam must be a 4x4 matrix ({describe(str(exc), 100)})") from None


@dataclass(frozen=True, eq=False)
class InstanceObservation:
    """One object instance seen in one frame: a tracker id, its label, score and pixel mask."""

    track_id: int
    label: str
    score: float
    mask: np.ndarray
    embedding: Optional[np.ndarray] = None
    box_xyxy: Optional[tuple[float, float, float, float]] = None

    def __post_init__(self) -> None:
        track_id = as_int(self.track_id, "instance track_id")
        object.__setattr__(self, "track_id", track_id)
        object.__setattr__(self, "label", as_text(self.label, f"instance {track_id} label"))
        where = f"instance {track_id} ({self.label})"
        object.__setattr__(self, "score", as_fraction(self.score, f"{where}: score"))
        m = _array(self.mask, f"{where}: mask")
        if m.ndim != 2 or m.shape[0] < 1 or m.shape[1] < 1:
            raise InvalidInputError(f"{where}: mask must be 2-D (H, W), got {m.shape}")
        if m.dtype.kind == "f" and not np.all(np.isfinite(m)):
            raise InvalidInputError(f"{where}: mask has NaN or infinite values (use a boolean mask)")
        object.__setattr__(self, "mask", m.astype(bool, copy=False))
        if self.embedding is not None:
            e = _array(self.embedding, f"{where}: embedding")
            if e.ndim != 1 or e.size == 0 or e.dtype.kind == "b":
                raise InvalidInputError(f"{where}: embedding must be a non-empty 1-D vector of numbers, got "
                                        f"shape {e.shape} dtype {e.dtype}")
            if not np.all(np.isfinite(e)) or not np.any(e != 0):
                raise InvalidInputError(f"{where}: embedding must be finite and not all zero")
            object.__setattr__(self, "embedding", e)
        if self.box_xyxy is not None:
            box = self.box_xyxy
            if isinstance(box, np.ndarray):
                box = box.tolist()
            if not isinstance(box, (tuple, list)) or len(box) != 4 or \
                    not all(finite_float(v) is not None for v in box) or box[0] > box[2] or box[1] > box[3]:
                raise InvalidInputError(f"{where}: box_xyxy must be 4 finite numbers (x0, y0, x1, y1) with x0 <= x1 "
                                        f"and y0 <= y1, got {describe(self.box_xyxy)}")
            object.__setattr__(self, "box_xyxy", tuple(float(v) for v in box))


@dataclass(frozen=True, eq=False)
class FramePerception:
    """Everything perception produced for one frame: the frame with metric depth, pose and
    intrinsics filled in, the instances seen, and a scene tag (room / place type)."""

    frame: Frame
    instances: tuple[InstanceObservation, ...] = ()
    scene_tag: Optional[str] = None
    scene_tag_score: float = 1.0
    metric: bool = True  # False: depth and pose translation are up to an unknown scale (no metric evidence)

    def __post_init__(self) -> None:
        if not isinstance(self.frame, Frame):
            raise InvalidInputError(f"FramePerception.frame must be a directme.Frame, got {type(self.frame).__name__}")
        f = self.frame
        where = f"frame {f.index} at t={f.t_s:.3f}s ({f.source or 'stream'})"
        instances = self.instances
        if not isinstance(instances, (tuple, list)):
            raise InvalidInputError(f"{where}: instances must be a list or tuple of InstanceObservation, got "
                                    f"{type(instances).__name__}")
        bad = [i for i in instances if not isinstance(i, InstanceObservation)]
        if bad:
            raise InvalidInputError(f"{where}: instances must be InstanceObservation objects, got "
                                    f"{type(bad[0]).__name__} {describe(bad[0])}")
        ids = [i.track_id for i in instances]
        if len(set(ids)) != len(ids):
            dup = next(t for t in ids if ids.count(t) > 1)
            raise InvalidInputError(f"{where}: two instances with track_id {dup}: track ids must be unique in a frame")
        object.__setattr__(self, "instances", tuple(instances))
        if self.scene_tag is not None:
            object.__setattr__(self, "scene_tag", as_text(self.scene_tag, f"{where}: scene_tag"))
        object.__setattr__(self, "scene_tag_score", as_fraction(self.scene_tag_score, f"{where}: scene_tag_score"))

    @property
    def t_s(self) -> float:
        return self.frame.t_s

    def validate(self) -> None:
        """Raise InvalidInputError if this cannot be lifted into a world-frame map (types and ranges were
        checked at construction; here: depth, pose and intrinsics present, masks of the image's size, and
        depth in metres)."""
        f = self.frame
        where = f"frame {f.index} at t={f.t_s:.3f}s ({f.source or 'stream'})"
        if f.depth_m is None:
            raise InvalidInputError(f"{where}: no depth; configure a depth backend or give depth_m")
        if f.T_world_cam is None:
            raise InvalidInputError(f"{where}: no camera pose; configure a pose backend or give T_world_cam")
        if f.intrinsics is None:
            raise InvalidInputError(f"{where}: no intrinsics; give them with the frame or configure a backend")
        for inst in self.instances:
            if inst.mask.shape != f.shape_hw:
                raise InvalidInputError(
                    f"{where}: mask of instance {inst.track_id} ({inst.label}) is {inst.mask.shape}, "
                    f"image is {f.shape_hw}")
        check_depth_units(f.depth_m, where)


def check_depth_units(depth_m: np.ndarray, where: str) -> None:
    """Refuse depth whose median valid value (finite, > 0; on a grid of about 4096 pixels) is beyond
    MAX_MEDIAN_DEPTH_M: depth in millimetres (or another unit) taken as metres would lift every object out of
    range."""
    d = np.asarray(depth_m)
    step = max(1, int(math.sqrt(d.size / 4096)))
    sample = d[::step, ::step]
    if sample.size and np.fmax.reduce(sample, axis=None) <= MAX_MEDIAN_DEPTH_M:
        return  # no value above the bound (NaN ignored): neither is the median
    valid = sample[np.isfinite(sample) & (sample > 0)].ravel()
    med = median(valid)  # NaN when no pixel is valid: never above the bound
    if med > MAX_MEDIAN_DEPTH_M:
        raise InvalidInputError(
            f"{where}: median valid depth is {med:.4g} m (more than {MAX_MEDIAN_DEPTH_M:g} m): "
            "depth must be in metres; millimetres? pass depth_scale (readers: units per metre, e.g. 1000; the "
            "'given' depth_pose stage: metres per unit, e.g. 0.001) or convert it (depth_mm / 1000)")


@dataclass(frozen=True)
class Question:
    """A question asked at stream time ``t_s`` with optional options (letter order A, B, ...)."""

    qid: str
    t_s: float
    text: str
    options: tuple[str, ...] = ()
    answer: Optional[str] = None  # correct letter, or free-text reference for open-ended
    subtask: str = ""
    category: str = ""
    qtype: str = ""  # COUNT | BINARY | OTHER (UCS-Bench) or benchmark specific
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "qid", as_text(self.qid, "question qid"))
        object.__setattr__(self, "t_s", check_timestamp(self.t_s, f"question {self.qid} t_s"))
        object.__setattr__(self, "text", as_text(self.text, f"question {self.qid} text"))
        object.__setattr__(self, "options", check_options(self.options, f"question {self.qid} options"))

    @property
    def letters(self) -> str:
        return OPTION_LETTERS[: len(self.options)]
