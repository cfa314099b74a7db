"""Object names in a text: the vocabulary's labels and synonyms (longest match, with a colour before and
"in the <place>" after), then noun phrases after a determiner for objects the vocabulary lacks. Used for
option texts (query/options.py) and by the parser (query/intent.py)."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from .parsed import Target
from .vocab import COLOURS, Vocabulary, canonical, normalise, words

_DETERMINERS = {"the", "my", "your", "a", "an", "many", "any", "this", "that", "these", "those", "our"}
_NP_STOP = {"on", "in", "at", "to", "of", "or", "and", "now", "right", "relative", "from", "is", "are", "was",
            "were", "still", "there", "closer", "nearer", "farther", "further", "before", "after", "when", "with",
            "than", "that", "which", "near", "next", "behind", "left", "above", "below", "under", "between", "by",
            "move", "moved", "go", "gone", "end", "been", "located", "placed", "put", "taken", "do", "does", "did",
            "can", "i", "you", "me", "located", "currently", "closest", "nearest", "farthest", "furthest", "have",
            "has", "reach", "reachable", "within", "without", "while", "since", "inside", "beside", "then",
            "compared", "during", "opposite", "facing", "side", "direction", "o'clock", "relative", "around",
            "lying", "sitting", "standing", "hanging", "being", "be", "far", "close", "away", "more", "less",
            "fewer", "added", "removed", "remain", "remaining", "over", "across", "toward", "towards", "straight"}
_CLOCK_WORDS = {"direction", "face", "position", "hour", "wise", "time"}
_QUANTIFIERS = ("pieces of", "piece of", "pairs of", "pair of", "set of", "sets of", "kind of", "kinds of",
                "type of", "types of", "bunch of")


def _targets(text: str, vocab: Vocabulary) -> tuple[list[Target], list[str]]:
    """Object targets and place words. Vocabulary phrases (longest match, with a preceding colour and a
    following "in the <place>") come first; noun phrases after a determiner fill in unknown objects."""
    for q in _QUANTIFIERS:
        text = text.replace(q + " ", "")
    toks = words(text)
    found: list[tuple[int, Target]] = []
    places: list[str] = []
    covered: set[int] = set()
    i = 0
    while i < len(toks):
        place = vocab.place_at(toks, i)
        obj = vocab.lookup(toks, i)
        if place and (not obj or place[1] >= obj[1]):
            places.append(place[0])
            if found and i >= 2 and toks[i - 1] == "the" and toks[i - 2] in ("in", "at", "inside"):
                found[-1] = (found[-1][0], replace(found[-1][1], place=place[0]))
            covered.update(range(i, i + place[1]))
            i += place[1]
            continue
        if obj and toks[i] == "clock" and i + 1 < len(toks) and toks[i + 1] in _CLOCK_WORDS:
            obj = None  # "clock direction", "clock face"
        if obj:
            colour = toks[i - 1] if i > 0 and toks[i - 1] in COLOURS else None
            found.append((i, Target(obj[0], " ".join(toks[i:i + obj[1]]), colour=_norm_colour(colour))))
            covered.update(range(i, i + obj[1]))
            i += obj[1]
            continue
        i += 1
    for i, tok in enumerate(toks):
        if tok not in _DETERMINERS:
            continue
        j = i + 1
        phrase: list[str] = []
        while j < len(toks) and toks[j] not in _NP_STOP and toks[j] not in _DETERMINERS and len(phrase) < 4:
            phrase.append(toks[j])
            j += 1
        if not phrase or covered.intersection(range(i + 1, j)):
            continue
        colour = phrase[0] if phrase[0] in COLOURS else None
        noun = [t for t in phrase if t not in COLOURS]
        if noun and normalise(" ".join(noun)) not in _NOT_OBJECTS:
            found.append((i + 1, Target(canonical(" ".join(noun)), " ".join(noun), colour=_norm_colour(colour))))
    found.sort(key=lambda item: item[0])
    return _dedupe([t for _, t in found]), places


_NOT_OBJECTS = {"way", "path", "route", "trajectory", "time", "moment", "beginning", "start", "end", "thing", "one",
                "object", "item", "option", "answer", "position", "location", "place", "order", "number", "rooms",
                "room", "place", "area", "second", "minute", "question", "video", "camera", "user", "wearer", "me",
                "following", "followings", "same", "other", "most", "least", "many", "few", "first", "last"}


def _norm_colour(colour: Optional[str]) -> Optional[str]:
    return "gray" if colour == "grey" else colour


def _dedupe(targets: list[Target]) -> list[Target]:
    seen: set[tuple[str, Optional[str]]] = set()
    out = []
    for t in targets:
        if (t.key, t.colour) not in seen:
            seen.add((t.key, t.colour))
            out.append(t)
    return out
