"""Prompt templates for MLLM answerers, all in one place.

A prompt is a system text plus an ordered list of user parts (text or image). The memory part
is ``QueryContext.subgraph_text``: the query layer renders it in the wearer's ego frame at the
question time (objects with direction, clock hour, distance, reachability, place, last-seen
time and movement history; the wearer's current place, recent path and known places). Each
keyframe is announced with its stream timestamp right before the image, so the model can tell
old views from recent ones. Change the wording here, nowhere else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union

import numpy as np

from ..errors import InvalidInputError
from ..types import OPTION_LETTERS
from .base import Answer, Keyframe, QueryContext

SYSTEM = (
    "You are the assistant of a person wearing a camera. You answer questions about their "
    "surroundings from a spatial memory built from everything they have seen up to now. "
    "Directions are relative to where the person is facing at the question time: front is "
    "12 o'clock, right 3 o'clock, behind 6 o'clock, left 9 o'clock. Distances are in metres. "
    "Trust the memory for positions; use the keyframes for appearance, colours and counts."
)

MEMORY_HEADER = "Spatial memory at the question time (t = {t_s:.1f} s):\n{subgraph}"
NO_MEMORY = "Spatial memory at the question time (t = {t_s:.1f} s): nothing relevant is in memory."
KEYFRAMES_HEADER = "Keyframes from memory ({n}, each observed at or before t = {t_s:.1f} s):"
KEYFRAME_LABEL = "Keyframe {k} at t = {kf_t_s:.1f} s ({ago_s:.0f} s before the question){caption}:"
QUESTION = "Question (asked at t = {t_s:.1f} s): {question}"
OPTION_LINE = "{letter}. {text}"
HINT = ("A geometric solver working on the same memory suggests option {letter} "
        "(confidence {confidence:.2f}). Use it if it agrees with the memory and the keyframes.")
HINT_OPEN = "A geometric solver working on the same memory suggests: {text} (confidence {confidence:.2f})."
ANSWER_MC = "Answer with the option's letter from the given choices directly."
ANSWER_OPEN = "Answer briefly in one sentence."

TextPart = tuple[str, str]  # ("text", content)
ImagePart = tuple[str, Keyframe]  # ("image", keyframe)
Part = Union[TextPart, ImagePart]


@dataclass(frozen=True)
class Prompt:
    """System text plus ordered user parts; backends turn it into their chat format."""

    system: str
    parts: tuple[Part, ...]
    letters: str  # option letters in order ("" for open-ended questions)

    @property
    def text(self) -> str:
        """The user turn with images shown as <image t=...> markers (for logs and tests)."""
        return "\n".join(p[1] if p[0] == "text" else f"<image t={p[1].t_s:.1f}>" for p in self.parts)

    @property
    def images(self) -> list[Keyframe]:
        return [p[1] for p in self.parts if p[0] == "image"]


def option_block(options: Sequence[str]) -> str:
    return "\n".join(OPTION_LINE.format(letter=OPTION_LETTERS[i], text=o) for i, o in enumerate(options))


def _hint_text(hint: Optional[Answer], letters: str) -> Optional[str]:
    if hint is None:
        return None
    if letters and hint.letter and hint.letter in letters:
        return HINT.format(letter=hint.letter, confidence=hint.confidence)
    if not letters and hint.text:
        return HINT_OPEN.format(text=hint.text, confidence=hint.confidence)
    return None


def select_keyframes(ctx: QueryContext, max_keyframes: int) -> list[Keyframe]:
    """At most ``max_keyframes`` keyframes observed at or before the question, oldest first.

    The query layer orders keyframes by relevance; the first ones are kept. Frames after the
    question time are dropped (causality is checked here too, not assumed)."""
    kept = [k for k in ctx.keyframes if k.t_s <= ctx.t_s + 1e-9][: max(0, int(max_keyframes))]
    return sorted(kept, key=lambda k: k.t_s)


def build_prompt(ctx: QueryContext, max_keyframes: int = 4, use_hint: bool = True) -> Prompt:
    """The full prompt for one question (memory, keyframes with timestamps, question, options)."""
    letters = OPTION_LETTERS[: len(ctx.options)]
    parts: list[Part] = []
    memory = ctx.subgraph_text.strip()
    parts.append(("text", MEMORY_HEADER.format(t_s=ctx.t_s, subgraph=memory) if memory
                  else NO_MEMORY.format(t_s=ctx.t_s)))
    keyframes = select_keyframes(ctx, max_keyframes)
    if keyframes:
        parts.append(("text", KEYFRAMES_HEADER.format(n=len(keyframes), t_s=ctx.t_s)))
        for k, kf in enumerate(keyframes, start=1):
            caption = f", {kf.caption}" if kf.caption else ""
            parts.append(("text", KEYFRAME_LABEL.format(k=k, kf_t_s=kf.t_s, ago_s=ctx.t_s - kf.t_s, caption=caption)))
            parts.append(("image", kf))
    tail = [QUESTION.format(t_s=ctx.t_s, question=ctx.question.strip())]
    if letters:
        tail.append(option_block(ctx.options))
    hint = _hint_text(ctx.hint, letters) if use_hint else None
    if hint:
        tail.append(hint)
    tail.append(ANSWER_MC if letters else ANSWER_OPEN)
    parts.append(("text", "\n".join(tail)))
    return Prompt(system=SYSTEM, parts=tuple(parts), letters=letters)


def keyframe_image(kf: Keyframe, max_side: int):
    """A keyframe as an RGB PIL image, downscaled so its longer side is at most ``max_side``."""
    from PIL import Image

    rgb = np.asarray(kf.rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8 or min(rgb.shape[:2]) < 1:
        raise InvalidInputError(f"keyframe at t={kf.t_s:.1f}s (frame {kf.frame_index}): rgb must be (H, W, 3) uint8, "
                                f"got {rgb.shape} {rgb.dtype}")
    img = Image.fromarray(rgb)
    scale = max_side / max(img.size)
    if scale < 1:
        img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))), Image.BICUBIC)
    return img
