"""A question's time reference: "now", "just now", "2 minutes ago", "at 1:30", "when I first entered
the kitchen", "before I moved the cup", "the room before this one". ``parse_time`` returns it with the
question's text without the temporal clause; resolving it against memory is query/timeref.py's job."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..types import TextEnum
from .vocab import SCOPE_WORDS, Vocabulary, normalise, singular, words


class TimeKind(TextEnum):
    """How a question's time reference is given."""

    NOW = "now"
    JUST_NOW = "just_now"
    START = "start"
    AGO = "ago"
    ABSOLUTE = "absolute"
    EVENT = "event"


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


HERE = "<here>"  # TimeRef subject of "the room before this one": the place the wearer is in at question time

_NUM = r"(\d+(?:\.\d+)?|a|an|one|two|three|four|five|ten|twenty|thirty)"
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10,
                 "twenty": 20, "thirty": 30}
_EVENT_VERBS = (
    ("enter", r"first entered|entered|enter|entering|walked into|walk into|walking into|went into|go into|going into|"
              r"came into|come into|coming into|stepped into|step into|stepping into|got into|getting into|"
              r"moved into|got to|get to|arrived at|arrived in|arrive at|reached|was in|were in|came to|went to|"
              r"ended up in|end up in|ending up in|made it into|made it to|walked in to|went in to|"
              r"being in|been in|arriving at|arriving in|arrive in|arrived|reaching|reach|getting to|"
              # any way of moving into a place: "headed into", "wandering into", "popped into"
              r"(?:walk|step|head|mov|wander|stroll|pop|popp|nip|nipp|duck|run|ran|hurr|mak|made|turn|cross|"
              r"pass|go|went|gone|com|came|get|got)\w* (?:(?:my way|back|over|on|through|it) )?(?:into|in to|through to)|"
              # "before going to the kitchen", "before heading over to the office": a move to a place
              r"(?:walk|step|head|mov|wander|stroll|go|went|com|came|mak|made|run|ran|pop|popp)\w* "
              r"(?:(?:my way|back|over|across|on|off|through|it) )?to(?= (?:the|my) |$)|"
              # a visit as a noun: "before my last visit to the kitchen"
              r"(?:visit|trip|return|arrival|entry|move) (?:to|into|in|at)|"
              # visiting a room: "before visiting the kitchen", "right after I visited the office"
              r"visit|visited|visiting|"
              # turning up: "when I showed up in the kitchen"
              r"(?:show|turn)(?:s|ed|ing)? up (?:in|at)"),
    ("leave", r"left|leave|leaving|exited|exit|exiting|came out of|come out of|coming out of|walked out of|"
              r"walking out of|went out of|going out of|stepped out of|stepping out of|moved out of|"
              r"was done in|were done in|was finished in|finished in|(?:done|finished)(?: up)? (?:with|in)|was through with|departed|"
              r"departing|"
              r"depart|out of|"
              # any way of moving out of a place: "got out of", "headed out of", "wandered away from"
              r"(?:walk|step|head|mov|wander|stroll|pop|popp|nip|nipp|duck|run|ran|hurr|mak|made|go|went|gone|"
              r"com|came|get|got|turn|finish)\w* (?:(?:my way|back|on) )?(?:out of|away from|out from)|"
              r"(?:departure|exit) from|way out of|"
              # a stay as a noun: "after my time in the kitchen", "after my stay in the office"
              r"(?:time|stay|stint|spell) in"),
    ("pick", r"picked up|pick up|picking up|picked|grabbed|grab|grabbing|took|take|taking|bought|buy|buying|"
             r"lifted|removed|moved|moving|move|carried|carry|carrying|brought|bring|bringing|relocated|shifted|shift|"
             r"shifting|fetched|fetch|fetching|collected|collect|collecting"),
    ("put", r"put down|put|putting|placed|place|placing|dropped|drop|left behind|set down"),
    ("see", r"saw|see|seeing|seen|noticed|passed|passing|looked at|found"),
)
_EVENT_RE = re.compile(
    r"\b(?P<rel>when|while|after|before|since|once|until|on|upon)\s+(?:i\s+|you\s+|my\s+|me\s+)?(?:had\s+|have\s+|was\s+|"
    r"having\s+|first\s+|last\s+|just\s+|most recent\s+|latest\s+)*(?P<verb>" + "|".join(f"(?:{v})" for _, v in _EVENT_VERBS) + r")\b(?P<rest>.*)$")
_BEFORE_PLACE_RE = re.compile(r"\bbefore (?:the |my )?(?P<rest>.+)$")  # "before the kitchen"
_AFTER_PLACE_RE = re.compile(r"\b(?:after|followed|came after|comes after|following) (?:the |my )(?P<rest>.+)$")
_PRECEDED_RE = re.compile(r"\b(?:preceded|came before|comes before|led into|leads into|led to|leads to|opened into|"
                          r"opens into|opened onto|opens onto) (?:the |my )(?:(?:entering|entry into|arrival in|"
                          r"walking into|going into|getting to|reaching) (?:the |my )?)?(?P<rest>.+)$")
# "From the kitchen, which room did I go into next?": the room after leaving it
_FROM_START_RE = re.compile(r"^(?:and |so )?from (?:the |my )(?P<rest>[a-z ]+?),? (?:(?:which|what) (?:room|place)|where) "
                            r"(?:did|had|have) (?:i|we)\b")
_ON_WAY_RE = re.compile(r"\b(?:(?:to (?:get|go|walk|step|head|move|come|wander|pass|cross)|on (?:my|the) way) "
                        r"(?:into|in to|to|through to)|to (?:reach|enter|arrive (?:at|in))|"
                        r"(?:when|as) (?:i )?set (?:off|out) (?:for|to|towards?)) (?:the |my )?(?P<rest>.+)$")
# "I left the kitchen at some point; which room came right after it?": the event in an earlier clause
_CLAUSE_EVENT_RE = re.compile(r"\bi (?:had )?(?P<verb>left|exited|entered|walked into|went into|came into|came out of|"
                              r"walked out of|stepped into|stepped out of)\s+(?:the |my )?(?P<rest>[^;,.?!]+)[;,.?!]"
                              r".*\b(?P<rel>after|before) (?:it|that|this|there)\b")
_FROM_PLACE_RE = re.compile(r"\b(?:go|went|head|headed|move|moved|walk|walked|continue|continued|proceed|proceeded|"
                            r"pass|passed|step|stepped|cross|crossed|"
                            r"wander|wandered|carry on|carried on)"
                            r"(?: (?:on|next|then|off|onwards?|straight|directly|to|into|on to|afterwards))* from "
                            r"(?:the |my )(?P<rest>.+)$")  # next room
# "which room did I come into the kitchen from": the room before the entry
_INTO_FROM_RE = re.compile(r"(?:\b(?:come|came|coming|get|got|getting|walk|walked|walking|go|went|going|step|stepped|"
                           r"head|headed|heading|move|moved|moving|wander|wandered|arrive|arrived) (?:in)?to |"
                           r"\b(?:enter|entered|entering|reach|reached|arrive in|arrived in|arrive at|arrived at) )"
                           r"(?:the |my )?(?P<rest>[a-z ]+?) from\b")
_PICKED_FROM_RE = re.compile(r"\b(?:pick(?:ed)?|took|take|grab(?:bed)?|fetch(?:ed)?|collect(?:ed)?|got|get|"
                             r"remov(?:e|ed)) (?:up )?(?P<rest>(?:the |my |a |an )?[a-z' ]+?) (?:up )?from\s*[?.!]*$")
_CLAUSE_PICK_RE = re.compile(r"\bi (?:had )?(?:picked up|picked|took|grabbed|lifted|moved|carried) (?:up )?"
                             r"(?P<rest>[^;,.?!]+)[;,.?!].*\b(?:at (?:that|the) time|back then|then|when i (?:did|"
                             r"picked it up|took it|moved it))\b")
_PREVIOUS_RE = re.compile(r"\b(?:before (?:(?:this|the current|my current)(?: one| room| place)?|here|"
                          r"(?:i )?(?:came|coming|got|getting) here)|previous(?:ly)?|(?:did|have) (?:i|you) come from|"
                          r"(?:room|place) before)\b")
_UNIT = r"(hours?|hrs?|minutes?|mins?|seconds?|secs?)"
_AGO_RE = re.compile(r"\b((?:" + _NUM + r"\s+" + _UNIT + r"(?:\s*,?\s*(?:and\s+)?)?)+)\s*(?:ago|back|earlier|"
                     r"before now|before (?:this|the present)(?: moment| point)?|previously|prior|in the past|"
                     r"before(?=\s*[?.!,;]|\s*$))\b")
_BACK_RE = re.compile(r"\b(?:back|rewind(?:ing)?(?: by)?|(?:in|during|over|for|within) the (?:last|past))\s+"
                      r"(?:about |around |roughly |some )?((?:" + _NUM + r"\s+" + _UNIT +
                      r"(?:\s*,?\s*(?:and\s+)?)?)+)")  # "if you think back 2 minutes"
_PAIR_RE = re.compile(_NUM + r"\s+" + _UNIT)
_ABS_RE = re.compile(r"\bat\s+(?:time\s+)?(?:(\d+):)?(\d{1,2}):(\d{2})\b|\bat\s+(?:t\s*=\s*)?(\d+(?:\.\d+)?)\s*s\b")


def _is_event(m: re.Match) -> bool:
    """"on leaving" is an event, "on the left" is not; "since I saw the cup" dates no question."""
    if m.group("rel") in ("on", "upon") and not m.group(0).split()[1].endswith("ing") and \
            not m.group("verb").startswith("way "):  # "upon having left", "on my way out of"
        return False
    return not (m.group("rel") == "since" and re.fullmatch(_EVENT_VERBS[-1][1], m.group("verb")))


def _number(tok: str) -> float:
    return float(_NUMBER_WORDS.get(tok, tok)) if not tok.replace(".", "", 1).isdigit() else float(tok)


def parse_time(text: str, vocab: Vocabulary) -> tuple[TimeRef, str]:
    """Time reference and the question text with the temporal clause removed."""
    m = next((m for m in _EVENT_RE.finditer(text) if _is_event(m)), None)
    clause = re.search(r"(?:^|[,;:] )(\w+ing\b.*)$", text) if m is None and not text.startswith("upon ") else None
    if clause:  # "Leaving the kitchen, which room did I go to?", "which room did I go on to, leaving the kitchen behind?"
        ref, main = parse_time("upon " + clause.group(1), vocab)
        if ref.kind == TimeKind.EVENT and ref.event in ("enter", "leave"):
            return ref, (main if clause.start() == 0 else text[:clause.start()])
    if m:
        kind = next(name for name, pat in _EVENT_VERBS if re.fullmatch(pat, m.group("verb")))
        if kind == "enter" and m.group("rel") in ("after", "once") and \
                re.fullmatch(r"(?:was|were|being|been) in|(?:visit|trip) (?:to|in|at)|visit|visited|visiting", m.group("verb")):
            kind = "leave"  # "after I was in the kitchen", "after my visit to the kitchen": after its end
        rest = m.group("rest")
        clause, main = text[m.start():], text[:m.start()]
        cut = re.search(r"[,:;]", rest)
        if cut and not main.strip():  # "Before I moved the cup, where was it?"
            clause, main = text[m.start():m.start("rest") + cut.start()], rest[cut.end():]
            rest = rest[:cut.start()]
        which = "first" if re.search(r"\bfirst\b", clause) else "last"
        subject = _subject_of(rest, vocab, kind)
        if not subject and kind in ("enter", "leave"):  # "I was in the kitchen earlier. Where did I go when I left it?"
            subject = next(iter(places_in(words(text[:m.start()]), vocab)), "")
        rel = {"when": "at", "while": "at", "once": "after", "since": "after", "until": "before", "on": "at",
               "upon": "at"}.get(m.group("rel"), m.group("rel"))
        return TimeRef(TimeKind.EVENT, rel, kind, subject, which, 0.0, clause.strip()), main
    m = _PICKED_FROM_RE.search(text) or _CLAUSE_PICK_RE.search(text)
    if m:  # "which room did I pick the cup up from", "I picked up the cup; which room was it in at the time"
        ref = TimeRef(TimeKind.EVENT, "before", "pick", _subject_of(m.group("rest"), vocab, "pick"), "last", 0.0,
                      m.group(0))
        return ref, text
    m = _CLAUSE_EVENT_RE.search(text)
    place = vocab.place_at(words(m.group("rest")), 0) if m else None
    if m and place:
        kind = "leave" if m.group("verb") in ("left", "exited", "came out of", "walked out of", "stepped out of") \
            else "enter"
        return TimeRef(TimeKind.EVENT, m.group("rel"), kind, place[0], "last", 0.0, m.group(0)), text[m.end():]
    m = _AGO_RE.search(text) or _BACK_RE.search(text)
    previous = _previous_place(text, vocab) if m is None else None  # "2 minutes before this": a duration
    if previous is not None:
        return previous
    if m:
        secs = sum(_number(n) * (3600.0 if u.startswith("h") else 60.0 if u.startswith("min") else 1.0)
                   for n, u in _PAIR_RE.findall(m.group(1)))
        return TimeRef(TimeKind.AGO, seconds=secs, text=m.group(0)), text[:m.start()] + text[m.end():]
    m = _ABS_RE.search(text)
    if m:
        if m.group(4):
            secs = float(m.group(4))
        else:
            secs = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
        return TimeRef(TimeKind.ABSOLUTE, seconds=secs, text=m.group(0)), text[:m.start()] + text[m.end():]
    if re.search(r"\bjust now\b|\ba (moment|second|little while) ago\b|\brecently\b", text):
        return TimeRef(TimeKind.JUST_NOW, text="just now"), text
    if re.search(r"\bat the (beginning|start)\b|\binitially\b|\boriginally\b|\bat first\b|\bin the beginning\b", text):
        return TimeRef(TimeKind.START, text="start"), text
    return TimeRef(TimeKind.NOW), text


def _previous_place(text: str, vocab: Vocabulary) -> Optional[tuple[TimeRef, str]]:
    """"before the kitchen" (before entering it last) and "before this one", "previously", "came from"
    (before entering the current place): a time just before the last entry into that place."""
    for pattern, relation, event in ((_INTO_FROM_RE, "before", "enter"), (_BEFORE_PLACE_RE, "before", "enter"),
                                     (_ON_WAY_RE, "before", "enter"),
                                     (_PRECEDED_RE, "before", "enter"), (_AFTER_PLACE_RE, "after", "leave"),
                                     (_FROM_PLACE_RE, "after", "leave"), (_FROM_START_RE, "after", "leave")):
        m = pattern.search(text)
        toks = words(m.group("rest")) if m else []
        place = vocab.place_at(toks, 0) if m else None
        obj = vocab.lookup(toks, 0) if place else None
        if m and place and not (obj and obj[1] > place[1]):  # "to get to the kitchen table" is no place
            ref = TimeRef(TimeKind.EVENT, relation, event, place[0], "last", 0.0, m.group(0).rstrip("?.! "))
            return ref, text[:m.start()]
    m = _PREVIOUS_RE.search(text)
    if m:
        ref = TimeRef(TimeKind.EVENT, "before", "enter", HERE, "last", 0.0, m.group(0))
        return ref, text[:m.start()] + text[m.end():]
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
_IN_THE = frozenset(("in", "inside", "into", "entered", "enter", "entering"))
_CLAUSE_END = frozenset(("?", ".", ",", "!", ";", "now", "currently", "today", "right", "at"))


def places_in(toks: list[str], vocab: Vocabulary) -> list[str]:
    """The place words of ``toks`` ("kitchen", "living room"), unless part of a longer object name; and a word
    no vocabulary knows, closing "in the ..." ("how many chairs are in the chapel?"): a place never seen, so
    that the question is not read as one about everywhere."""
    out = []
    for i in range(len(toks)):
        hit = vocab.place_at(toks, i)
        if hit and not (vocab.lookup(toks, i) and vocab.lookup(toks, i)[1] > hit[1]):
            out.append(hit[0])
        elif i >= 2 and toks[i - 1] == "the" and toks[i - 2] in _IN_THE and toks[i].isalpha() \
                and (i + 1 == len(toks) or toks[i + 1] in _CLAUSE_END) and toks[i] not in SCOPE_WORDS \
                and not vocab.lookup(toks, i) and not vocab.lookup([singular(toks[i])], 0):
            out.append(normalise(toks[i]))
    return out


# which way along my sequence of rooms a question looks, once it names one room
_SEQ_BEFORE = re.compile(r"\b(?:before(?:hand)?|previous(?:ly)?|prior|preceding|preceded|earlier than|ahead of|"
                         r"(?:come|came|coming) (?:in )?from|(?:had|have) (?:just )?(?:left|come out of|been in)|"
                         r"(?:enter\w*|reach\w*|come|came|got|get|walk\w*|go|went) (?:in ?to )?(?:it|that|this|there) "
                         r"from)\b")
_SEQ_AFTER = re.compile(r"\b(?:after(?:wards?)?|next(?! to\b)|then|following|followed|subsequently|onwards?|"
                        r"(?:went|go|moved|move|carried|carry) on to|headed|head to|"
                        r"(?:lead|leads|led|took|take|takes) (?:me|us) (?:in)?to)\b")


def sequence_time(text: str, vocab: Vocabulary) -> Optional[TimeRef]:
    """The time of a question on my route that names one room and looks one way from it, in words no time
    clause covers: "I ended up in the bathroom at some point. Which room was I in just before that?", "I was in
    the office and then I left. Where did I go?", "bedroom then where?", "the room before the kitchen, tracing my
    path back": before its last entry, or after its last exit. None when it names no room, several, or both ways."""
    places = list(dict.fromkeys(places_in(words(text), vocab)))
    if len(places) != 1:
        return None
    before, after = _SEQ_BEFORE.search(text), _SEQ_AFTER.search(text)
    if bool(before) == bool(after):
        return None
    m = before or after
    if before:
        return TimeRef(TimeKind.EVENT, "before", "enter", places[0], "last", 0.0, m.group(0))
    return TimeRef(TimeKind.EVENT, "after", "leave", places[0], "last", 0.0, m.group(0))


def route_time(text: str, ref: TimeRef, vocab: Vocabulary) -> TimeRef:
    """A question on my route: ``ref`` (parse_time's) made precise by :func:`sequence_time` where it says
    nothing ("now"), names no room ("the room before this one", HERE) or only when ("having been in the kitchen,
    where did I go next": at the entry, but the question looks past the exit)."""
    if ref.kind == TimeKind.NOW or (ref.kind == TimeKind.EVENT and ref.event in ("enter", "leave") and
                                    (ref.subject == HERE or ref.relation == "at")):
        seq = sequence_time(text, vocab)
        if seq is not None and (ref.kind == TimeKind.NOW or ref.subject in (HERE, seq.subject)):
            return seq
    return ref


_ASKED_NOW = re.compile(r"\b(?:now|currently|at the moment|at present|at this (?:moment|point|instant))\b")
_HYPOTHETICAL = re.compile(r"^(?:before|when|once|until|as soon as|after) (?:i|we) (?:\w+ly )?(?:go|walk|move|turn|head|"
                           r"leave|enter|get|step|come|sit|stand|look|reach|pick|grab|take|start|set off|do)\b")


def present_time(text: str, ref: TimeRef, last_clause: str) -> TimeRef:
    """Where an object is for me is asked now, whatever the scene-setting says: "before I move, which side is
    the cup on" (an act to come, not a past event), "I put my bag down a moment ago; where is the cup now" (the
    past belongs to an earlier sentence that the asking one overrides with "now")."""
    if ref.kind == TimeKind.EVENT and _HYPOTHETICAL.search(ref.text):
        return TimeRef(TimeKind.NOW)
    if ref.kind != TimeKind.NOW and last_clause and ref.text and ref.text not in last_clause and \
            _ASKED_NOW.search(last_clause):
        return TimeRef(TimeKind.NOW)
    return ref
