"""What a multiple-choice option says: yes/no, a count, an ego direction or clock hour, a place,
or objects. The geometric answerer compares these meanings with what memory computed."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

from ..types import TextEnum
from .parsed import Target
from .targets import _targets
from .vocab import Vocabulary, canonical, normalise, words

_COUNT_WORDS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                            "nine", "ten", "eleven", "twelve"))} | {"no": 0, "none": 0}
_FRONT = {"front", "ahead", "forward", "forwards", "straight"}
_BACK = {"behind", "rear", "back", "backward", "backwards"}
_COUNT_DIGITS = re.compile(r"[0-9]{1,9}")  # a count option; longer digit strings are not counts (no float overflow)
_CLOCK_RE = re.compile(r"\b(1[0-2]|[1-9])\s*o'?\s*clock\b")
_METRES_RE = re.compile(r"\b(\d{1,4}(?:\.\d{1,3})?)\s*(m|meters?|metres?|cm|centimet(?:er|re)s?|ft|feet|foot)\b")
_TO_METRES = {"m": 1.0, "cm": 0.01, "ft": 0.3048, "feet": 0.3048, "foot": 0.3048}


class OptionKind(TextEnum):
    """What an answer option states."""

    YES = "yes"
    NO = "no"
    COUNT = "count"
    DIRECTION = "direction"
    CLOCK = "clock"
    PLACE = "place"
    OBJECT = "object"
    DISTANCE = "distance"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class OptionMeaning:
    text: str
    kind: OptionKind
    number: Optional[int] = None
    azimuth_deg: Optional[float] = None  # 0 front, +90 left (direction and clock options)
    place: Optional[str] = None
    objects: tuple[Target, ...] = ()
    metres: Optional[float] = None  # distance options ("About 2 m", "150 cm")

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", OptionKind(self.kind))


def direction_azimuth(toks: Iterable[str]) -> Optional[float]:
    """Azimuth of a direction phrase ("to your front-left", "on your left rear", "behind you")."""
    ts = set(toks)
    vertical = 0.0 if ts & _FRONT else 180.0 if ts & _BACK else None
    lateral = 90.0 if "left" in ts else -90.0 if "right" in ts else None
    if vertical is None and lateral is None:
        return None
    if vertical is None:
        return lateral
    if lateral is None:
        return vertical
    return lateral / 2 if vertical == 0.0 else (135.0 if lateral > 0 else -135.0)


def parse_option(text: str, vocab: Vocabulary, place_tags: Iterable[str] = ()) -> OptionMeaning:
    low = " ".join(text.lower().replace("’", "'").split())
    toks = words(low)
    if not toks:
        return OptionMeaning(text, OptionKind.UNKNOWN)
    if toks[0] in ("yes", "yeah", "true", "correct"):
        return OptionMeaning(text, OptionKind.YES)
    if toks[0] in ("no", "false", "incorrect") and not (len(toks) > 1 and toks[1] not in ("you", "it", "i")):
        return OptionMeaning(text, OptionKind.NO)
    m = _CLOCK_RE.search(low)
    if m:
        h = int(m.group(1)) % 12
        return OptionMeaning(text, OptionKind.CLOCK, azimuth_deg=float(-30.0 * h if h <= 6 else 360.0 - 30.0 * h))
    m = _METRES_RE.search(low)
    if m:
        unit = m.group(2)
        scale = _TO_METRES.get(unit, 0.01 if unit.startswith("cent") else 1.0)
        return OptionMeaning(text, OptionKind.DISTANCE, metres=float(m.group(1)) * scale)
    content = [t for t in toks if t not in ("the", "a", "an", "it", "is", "it's", "its", "there", "are")]
    if len(content) == 1 and (_COUNT_DIGITS.fullmatch(content[0]) or content[0] in _COUNT_WORDS):
        n = int(content[0]) if _COUNT_DIGITS.fullmatch(content[0]) else _COUNT_WORDS[content[0]]
        return OptionMeaning(text, OptionKind.COUNT, number=n)
    if {"you", "your", "me", "my"} & set(toks) or (set(toks) <= _FRONT | _BACK | {"left", "right", "in", "of",
                                                                                    "on", "to", "the", "it", "is"}):
        az = direction_azimuth(toks)
        if az is not None:
            return OptionMeaning(text, OptionKind.DIRECTION, azimuth_deg=az)
    tags = {normalise(t): t for t in place_tags}
    phrase = normalise(" ".join(content))
    if phrase in tags or phrase in vocab.places:
        return OptionMeaning(text, OptionKind.PLACE, place=canonical(tags.get(phrase, phrase)))
    for i in range(len(content)):
        hit = vocab.place_at(content, i)
        if hit and not vocab.lookup(content, i):
            return OptionMeaning(text, OptionKind.PLACE, place=hit[0])
    objs, _ = _targets(low if low.startswith(("the ", "a ", "an ")) else "the " + low, vocab)
    if objs:
        return OptionMeaning(text, OptionKind.OBJECT, objects=tuple(objs))
    return OptionMeaning(text, OptionKind.UNKNOWN)


def parse_options(options: Iterable[str], vocab: Vocabulary, place_tags: Iterable[str] = ()) -> tuple[OptionMeaning, ...]:
    tags = tuple(place_tags)
    return tuple(parse_option(o, vocab, tags) for o in options)
