"""Question -> Intent: target objects (with colour / place words), the asked primitive and the
time reference. Rule-based and deterministic; unknown phrasings give ``Primitive.UNKNOWN``
with the "not_understood" flag instead of a guess."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Optional, Sequence

from ..types import Flag, TextEnum
from .vocab import COLOURS, Vocabulary, canonical, normalise, words

class Primitive(TextEnum):
    """What a question asks of memory."""

    EGO_DIRECTION = "ego_direction"  # where is X relative to me now
    FACING = "facing"  # where is X if I face Y
    RELATIVE_POSITION = "relative_position"  # where is X relative to Y, in my orientation
    DISTANCE_COMPARE = "distance_compare"  # which is closer / farther
    REACHABILITY = "reachability"  # can I reach X
    COUNT = "count"  # how many X
    COUNT_CHANGE = "count_change"  # how did the number of X change
    CATEGORY_RECALL = "category_recall"  # which of these did I see
    MY_TRAJECTORY = "my_trajectory"  # where did I go
    OBJECT_TRAJECTORY = "object_trajectory"  # where was / did X go
    OBJECT_LOCATION = "object_location"  # which room is X in
    UNKNOWN = "unknown"  # not understood


class TimeKind(TextEnum):
    """How a question's time reference is given."""

    NOW = "now"
    JUST_NOW = "just_now"
    START = "start"
    AGO = "ago"
    ABSOLUTE = "absolute"
    EVENT = "event"


PRIMITIVES = tuple(p.value for p in Primitive)


@dataclass(frozen=True)
class Target:
    """An object the question is about: its canonical key, the words used, colour and place."""

    key: str
    text: str
    colour: Optional[str] = None
    place: Optional[str] = None


@dataclass(frozen=True)
class TimeRef:
    """When the question is evaluated. ``kind``: now | just_now | start | ago | absolute | event.
    For events: ``relation`` (at/before/after), ``event`` (enter/leave/pick/put/see),
    ``subject`` (place or object key, or HERE: the wearer's current place) and ``which`` (first/last)."""

    kind: TimeKind = TimeKind.NOW
    relation: str = "at"
    event: str = ""
    subject: str = ""
    which: str = "last"
    seconds: float = 0.0
    text: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", TimeKind(self.kind))


@dataclass(frozen=True)
class Intent:
    question: str
    primitive: Primitive
    targets: tuple[Target, ...] = ()
    time_ref: TimeRef = field(default_factory=TimeRef)
    places: tuple[str, ...] = ()  # place words scoping the question ("in the kitchen")
    comparison: str = ""  # "closer" | "farther" for distance comparison
    binary: bool = False  # yes/no question
    flags: tuple[str, ...] = ()
    confidence: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "primitive", Primitive(self.primitive))

    @property
    def understood(self) -> bool:
        return self.primitive != Primitive.UNKNOWN


HERE = "<here>"  # TimeRef subject of "the room before this one": the place the wearer is in at question time

_NUM = r"(\d+(?:\.\d+)?|a|an|one|two|three|four|five|ten|twenty|thirty)"
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10,
                 "twenty": 20, "thirty": 30}
_EVENT_VERBS = (
    ("enter", r"first entered|entered|enter|entering|walked into|walk into|went into|go into|came into|"
              r"come into|got to|get to|arrived at|arrived in|arrive at|reached|was in|were in|came to|went to"),
    ("leave", r"left|leave|leaving|exited|exit|exiting|came out of|walked out of|went out of"),
    ("pick", r"picked up|pick up|picking up|picked|grabbed|grab|grabbing|took|take|taking|bought|buy|buying|"
             r"lifted|removed|moved|moving|move"),
    ("put", r"put down|put|putting|placed|place|placing|dropped|drop|left behind|set down"),
    ("see", r"saw|see|seeing|seen|noticed|passed|passing|looked at|found"),
)
_EVENT_RE = re.compile(
    r"\b(?P<rel>when|while|after|before|since|once|until)\s+(?:i\s+|you\s+)?(?:had\s+|have\s+|was\s+|first\s+|"
    r"last\s+|just\s+)*(?P<verb>" + "|".join(f"(?:{v})" for _, v in _EVENT_VERBS) + r")\b(?P<rest>.*)$")
_BEFORE_PLACE_RE = re.compile(r"\bbefore (?:the |my )?(?P<rest>.+)$")  # "before the kitchen"
_PREVIOUS_RE = re.compile(r"\b(?:before (?:(?:this|the current|my current)(?: one| room| place)?|here|"
                          r"(?:i )?(?:came|coming|got|getting) here)|previous(?:ly)?|(?:did|have) (?:i|you) come from|"
                          r"(?:room|place) before)\b")
_FIRST_LAST_RE = re.compile(r"\b(first|initially|last|most recently|latest)\b")
_UNIT = r"(hours?|hrs?|minutes?|mins?|seconds?|secs?)"
_AGO_RE = re.compile(r"\b((?:" + _NUM + r"\s+" + _UNIT + r"(?:\s*,?\s*(?:and\s+)?)?)+)\s*ago\b")
_PAIR_RE = re.compile(_NUM + r"\s+" + _UNIT)
_ABS_RE = re.compile(r"\bat\s+(?:time\s+)?(?:(\d+):)?(\d{1,2}):(\d{2})\b|\bat\s+(?:t\s*=\s*)?(\d+(?:\.\d+)?)\s*s\b")

_RULES = (  # (primitive, pattern) checked in order on the lower-cased question
    ("count_change", r"\bhow many\b.*\b(still|left|remain\w*|anymore|any more|more|fewer|less|changed?|"
                     r"added|removed|taken away|than before|compared|difference|now that)\b|"
                     r"\b(increase|decrease|change)\w* in the number\b|\bnumber of .* (changed?|increase|decrease)"),
    ("count", r"\bhow many\b|\bnumber of\b|\bcount\b|\bhow much\b"),
    ("distance_compare", r"\b(closer|nearer|closest|nearest|farther|further|farthest|furthest)\b|"
                         r"\b(more|less) (near|far|distant)\b|\bwhich is (near|far)\w*\b"),
    ("reachability", r"\breach\w*\b|\barm'?s? (length|reach)\b|\bwithin (my )?reach\b|\btouch (it|the)\b|"
                     r"\bwithout (moving|walking|taking a step)\b"),
    ("facing", r"\b(turn to face|turned to face|if i face|suppose i face|facing (the|a|my)|face the)\b"),
    ("object_trajectory", r"\bwhich (room|place) (was|is|were|are) (the|my)\b|\bwhere did i (put|leave|place|take|"
                          r"move|drop|bring|carry)\b|\bwhich (room|place) did i (take|bring|carry|move|put)\b|"
                          r"\b(moved|relocated|carried|displaced)\b|\bwhere (did|has) (the|my) .* (go|gone|end up|"
                          r"been)\b|\bhow did (the|my) .* move\b|\b(path|trajectory|movement|route) of (the|my)\b"),
    ("my_trajectory", r"\b(which|what) (room|place) (was|were|am|did) i\b|\bwhere was i\b|\bwhere did i come from\b|"
                      r"\b(path|route|trajectory|way)\b.*\b(i|did i|have i|me)\b|\bwhere did i (go|walk|come|head)|"
                      r"\bwhich (rooms?|places?|areas?) did i\b|\bhow did i (get|go|walk|come)\b|\bmy (path|route|"
                      r"trajectory|movement)\b|\bwhere have i (been|gone|walked)\b|\bwhat did i pass\b|"
                      r"\bwhere (was|am) i (before|after|when|going)\b|\bin what order did i\b|"
                      r"\bwhere did i (end up|start)\b"),
    ("category_recall", r"\bwhat (objects?|things?|items?|kinds?|types?|categor\w+)\b|\bhave (i|you) (seen|noticed)\b|"
                        r"\bdid (i|you) (see|notice|pass)\b|\bwhich (of (the|these) )?(objects?|items?|things?)\b.*"
                        r"\b(see|saw|seen|appear\w*|present|observed|notice\w*)\b|\bwas there\b|\bwere there\b|"
                        r"\bis there\b|\bare there\b(?!.*\bhow many\b)|\bwhat did i see\b|\bwhich of (the following|these)\b|"
                        r"\b(come|came) across\b|"
                        r"\b(appeared|not appear|never (seen|appeared)|not seen)\b|\bwhat (was|is) (in|on|at)\b"),
    ("relative_position", r"\b(left|right) of\b|\bin front of\b|\bbehind (the|a|my)\b|\bnext to\b|\bbeside\b|"
                          r"\brelative to (the|a|my)\b|\bbetween\b|\babove\b|\bbelow\b|\bunder(neath)?\b|"
                          r"\bon which side of (the|a|my)\b|\bfrom the\b|\bnear (the|a|my)\b|\bopposite\b|"
                          r"\bfacing (the|a|my)\b"),
    ("ego_direction", r"\bwhich side\b|\b(which|what) direction\b|\bo'clock\b|\bclock\b|\bwhere is\b|\bwhere are\b|"
                      r"\bwhere was\b|\bwhere were\b|\bwhere'?s\b|\brelative to (me|you|my position)\b|"
                      r"\b(to|on) my (left|right)\b|\bbehind me\b|\bin front of me\b|\bam i facing\b|"
                      r"\bwhich way\b|\bturn (left|right|around)\b|\bheading\b"),
)
_RULES_RE = tuple((name, re.compile(p)) for name, p in _RULES)
_BINARY_START = re.compile(r"^(is|are|can|could|do|does|did|was|were|will|would|has|have|am|should)\b")
_EGO_PHRASES = re.compile(r"\b(relative to (me|you)|to (my|your) (left|right)|behind (me|you)|"
                          r"in front of (me|you)|which side|o'clock|(which|what) direction|from me|from you)\b")


def _number(tok: str) -> float:
    return float(_NUMBER_WORDS.get(tok, tok)) if not tok.replace(".", "", 1).isdigit() else float(tok)


def _parse_time(text: str, vocab: Vocabulary) -> tuple[TimeRef, str]:
    """Time reference and the question text with the temporal clause removed."""
    m = _EVENT_RE.search(text)
    if m:
        kind = next(name for name, pat in _EVENT_VERBS if re.fullmatch(pat, m.group("verb")))
        rest = m.group("rest")
        clause, main = text[m.start():], text[:m.start()]
        cut = re.search(r"[,:;]", rest)
        if cut and not main.strip():  # "Before I moved the cup, where was it?"
            clause, main = text[m.start():m.start("rest") + cut.start()], rest[cut.end():]
            rest = rest[:cut.start()]
        which = "first" if re.search(r"\bfirst\b", clause) else "last"
        subject = _subject_of(rest, vocab, kind)
        rel = {"when": "at", "while": "at", "once": "after", "since": "after", "until": "before"}.get(
            m.group("rel"), m.group("rel"))
        return TimeRef("event", rel, kind, subject, which, 0.0, clause.strip()), main
    previous = _previous_place(text, vocab)
    if previous is not None:
        return previous
    m = _AGO_RE.search(text)
    if m:
        secs = sum(_number(n) * (3600.0 if u.startswith("h") else 60.0 if u.startswith("min") else 1.0)
                   for n, u in _PAIR_RE.findall(m.group(1)))
        return TimeRef("ago", seconds=secs, text=m.group(0)), text[:m.start()] + text[m.end():]
    m = _ABS_RE.search(text)
    if m:
        if m.group(4):
            secs = float(m.group(4))
        else:
            secs = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
        return TimeRef("absolute", seconds=secs, text=m.group(0)), text[:m.start()] + text[m.end():]
    if re.search(r"\bjust now\b|\ba (moment|second|little while) ago\b|\brecently\b", text):
        return TimeRef("just_now", text="just now"), text
    if re.search(r"\bat the (beginning|start)\b|\binitially\b|\boriginally\b|\bat first\b|\bin the beginning\b", text):
        return TimeRef("start", text="start"), text
    return TimeRef("now"), text


def _previous_place(text: str, vocab: Vocabulary) -> Optional[tuple[TimeRef, str]]:
    """"before the kitchen" (before entering it last) and "before this one", "previously", "came from"
    (before entering the current place): a time just before the last entry into that place."""
    m = _BEFORE_PLACE_RE.search(text)
    place = vocab.place_at(words(m.group("rest")), 0) if m else None
    if m and place:
        return TimeRef("event", "before", "enter", place[0], "last", 0.0, m.group(0).rstrip("?.! ")), text[:m.start()]
    m = _PREVIOUS_RE.search(text)
    if m:
        return TimeRef("event", "before", "enter", HERE, "last", 0.0, m.group(0)), text[:m.start()] + text[m.end():]
    return None


def _subject_of(rest: str, vocab: Vocabulary, kind: str) -> str:
    toks = words(rest)
    for i in range(len(toks)):
        if kind in ("enter", "leave"):
            hit = vocab.place_at(toks, i)
            if hit:
                return hit[0]
        hit = vocab.lookup(toks, i)
        if hit:
            return hit[0]
    content = [t for t in toks if t not in _FILLER]
    return normalise(" ".join(content[:3])) if content else ""


_FILLER = {"the", "a", "an", "my", "your", "it", "this", "that", "up", "down", "into", "in", "on", "at", "to",
           "some", "of", "for", "room", "area", "i", "you", "just", "first", "last", "time", "now"}
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


def _primitive(text: str, targets: Sequence[Target], time_ref: TimeRef) -> str:
    for name, pattern in _RULES_RE:
        if pattern.search(text):
            if name == "relative_position" and (len(targets) < 2 or _EGO_PHRASES.search(text)):
                continue
            if name in ("object_trajectory", "facing") and not targets:
                continue
            if name == "ego_direction" and re.search(r"\bwhere (was|were)\b", text) and time_ref.kind == "event" \
                    and not _EGO_PHRASES.search(text):
                return "object_location"
            return name
    return "unknown"


def _ref_last(text: str, targets: list[Target]) -> list[Target]:
    """For "if I face the sofa, where is the cup": the asked object first, the faced reference last."""
    m = re.search(r"\bfac(?:e|ing) (?:the |a |my |an )?(.+)$", text)
    if not m:
        return targets
    after = m.group(1)
    ref = min(targets, key=lambda t: after.find(t.text) if after.find(t.text) >= 0 else 10**6)
    return [t for t in targets if t is not ref] + [ref]


def _from_options(options: Sequence[str]) -> str:
    """Primitive implied by the option texts alone (numbers -> count, directions -> ego)."""
    opts = [o.lower() for o in options if o.strip()]
    if not opts:
        return "unknown"
    if all(re.fullmatch(r"\s*\d+\s*", o) for o in opts):
        return "count"
    if all(re.search(r"o'clock|\b(left|right|front|behind|ahead|back)\b", o) for o in opts):
        return "ego_direction"
    if all(re.search(r"->|→|\bthen\b", o) for o in opts):
        return "my_trajectory"
    return "unknown"


def parse_question(question: str, options: Sequence[str] = (), vocab: Optional[Vocabulary] = None) -> Intent:
    """Parse one question (with its options, if any) into an Intent. Never raises on odd text."""
    vocab = vocab or default_vocabulary()
    text = " ".join(question.lower().replace("’", "'").split())
    time_ref, main = _parse_time(text, vocab)
    targets, places = _targets(main, vocab)
    primitive = _primitive(text, targets, time_ref)
    if time_ref.kind == "event" and not time_ref.subject and targets:
        time_ref = replace(time_ref, subject=targets[0].key)  # "before I picked it up"
    if not targets and time_ref.event in ("pick", "put") and time_ref.subject:
        targets = [Target(time_ref.subject, time_ref.subject)]  # "Before I moved the cup, where was it?"
    if primitive == "facing" and len(targets) >= 2:
        targets = _ref_last(text, targets)
    flags: list[str] = []
    confidence = 1.0
    if primitive == "unknown":
        primitive = _from_options(options)
        confidence = 0.5
    if primitive == "relative_position" and len(targets) < 2:
        primitive = "ego_direction"
    if primitive in ("ego_direction", "reachability", "object_trajectory", "object_location", "distance_compare",
                     "relative_position") and not targets:
        flags.append(Flag.NO_TARGET)
        confidence = min(confidence, 0.3)
    if primitive == "unknown":
        flags.append(Flag.NOT_UNDERSTOOD)
        confidence = 0.0
    comparison = ""
    if primitive == "distance_compare":
        comparison = "farther" if re.search(r"\b(farther|further|farthest|furthest|far)\b", text) else "closer"
    return Intent(question=question, primitive=primitive, targets=tuple(targets), time_ref=time_ref,
                  places=tuple(dict.fromkeys(places)), comparison=comparison,
                  binary=bool(_BINARY_START.match(text)), flags=tuple(flags), confidence=confidence)


_DEFAULT_VOCAB: list[Vocabulary] = []


def default_vocabulary() -> Vocabulary:
    if not _DEFAULT_VOCAB:
        _DEFAULT_VOCAB.append(Vocabulary())
    return _DEFAULT_VOCAB[0]
