"""Noun phrases and spatial relations of a question, without a tagger: a closed list of function
words (determiners, pronouns, auxiliaries, prepositions, common verbs and adverbs) splits the
question into content runs; a run is a noun phrase, extended by a content or part phrase
("picture of the flowers", "bottle with a red cap") and cut before a locative one ("lamp in the
living room" -> "lamp"). Relation phrases ("to the left of", "on top of", "between") tie an
asked phrase to a reference; "if I sit on X" / "facing X" clauses give an imagined viewpoint.

Everything here works on lower-case tokens and returns plain data (no Intent), so the parser
(intent.py) decides what the phrases mean."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

DETERMINERS = frozenset((
    "the", "a", "an", "my", "your", "our", "his", "her", "their", "its", "this", "that", "these", "those", "some",
    "any", "each", "every", "another", "other", "only", "all", "both", "no", "one", "two", "three", "four", "five",
    "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "several", "few", "many", "much", "more", "most", "same", "certain"))
PRONOUNS = frozenset((
    "i", "me", "you", "we", "us", "he", "she", "it", "they", "them", "him", "someone", "anyone", "anything",
    "something", "everything", "nothing", "somebody", "anybody", "everybody", "here", "there", "itself", "myself",
    "yourself", "i'm", "it's", "you're", "we're", "they're", "he's", "she's", "i've", "i'd", "i'll", "you'd",
    "theres", "there's", "thats", "that's", "mine", "yours", "ours", "theirs", "what's", "whats", "where's", "wheres",
    "who's", "how's", "let's", "lets", "whatever", "whichever", "wherever", "whoever", "what", "where", "which",
    "who", "whom", "whose", "why", "how", "when", "whether", "whereabouts", "whereabout"))
AUXILIARIES = frozenset((
    "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done", "has", "have", "had",
    "can", "could", "will", "would", "shall", "should", "may", "might", "must", "isn't", "aren't", "don't",
    "doesn't", "didn't", "can't", "cannot", "won't", "wasn't", "weren't", "haven't", "hasn't", "wouldn't",
    "couldn't", "shouldn't", "'s", "'re", "'m"))
PREPOSITIONS = frozenset((
    "on", "in", "at", "to", "of", "from", "with", "without", "by", "for", "into", "onto", "over", "under",
    "underneath", "beneath", "below", "above", "behind", "beside", "besides", "between", "among", "near", "next",
    "across", "opposite", "inside", "outside", "around", "against", "along", "through", "toward", "towards", "up",
    "down", "off", "out", "about", "after", "before", "during", "since", "until", "upon", "within", "via", "like",
    "than", "as", "per", "past", "throughout", "beyond", "alongside", "atop"))
CONJUNCTIONS = frozenset(("and", "or", "but", "so", "if", "then", "because", "while", "whereas", "nor", "either",
                          "neither", "though", "although", "unless", "once", "suppose", "supposing", "assuming",
                          "imagine", "please", "kindly", "hey", "ok", "okay", "well", "also", "too",
                          # discourse markers and interjections: "hmm, ...", "quick one: ...", "right, so ..."
                          "hmm", "hm", "um", "umm", "uh", "er", "erm", "ah", "oh", "alright", "yeah", "yes", "yep",
                          "quick", "quickly", "cheers", "anyhow", "besides", "otherwise"))
ADVERBS = frozenset((
    "now", "right", "currently", "presently", "still", "just", "already", "again", "very", "exactly", "directly",
    "really", "actually", "approximately", "roughly", "possibly", "probably", "ever", "never", "always", "usually",
    "often", "quite", "less", "least", "far", "away", "close", "closer", "nearer", "farther", "further",
    "closest", "nearest", "farthest", "furthest", "moment", "anymore", "ago", "yet", "else", "even", "not",
    "later", "earlier", "today", "tonight", "yesterday", "first", "last", "finally", "immediately", "soon",
    "somewhere", "anywhere", "everywhere", "nowhere", "back", "forward", "ahead", "straight", "around",
    "currently", "exact", "precisely", "relative", "relatively", "compared", "originally", "initially", "overall",
    "so", "far", "anyway", "maybe", "perhaps", "sure", "thanks", "thank", "o'clock", "clockwise", "instead",
    "enough", "how", "much", "ever", "apart", "distant", "shortest", "longest", "quickest", "total",
    "whichever", "wherever", "longer", "shorter", "quicker", "nearby", "presently", "present", "currently",
    "whereabouts", "approx", "about", "roughly", "thereabouts", "terms", "good", "solid", "wise", "versus", "vs"))
VERBS = frozenset((
    "located", "locate", "placed", "place", "put", "putting", "kept", "keep", "stored", "store", "hanging",
    "hang", "hung", "sitting", "sit", "sat", "lying", "lie", "lay", "laying", "standing", "stand", "stood",
    "leaning", "lean", "leaned", "mounted", "attached", "displayed", "positioned", "set", "resting", "rest",
    "found", "find", "see", "seen", "saw", "seeing", "look", "looking", "looked", "leave", "left", "go", "went",
    "gone", "going", "come", "came", "coming", "get", "got", "getting", "take", "took", "taken", "taking",
    "bring", "brought", "carry", "carried", "move", "moved", "moving", "reach", "reached", "touch", "grab",
    "face", "facing", "faced", "turn", "turned", "turning", "walk", "walked", "walking", "enter", "entered",
    "entering", "enters", "leaving", "exit", "exited", "use", "used", "using", "need", "needs", "want", "wants",
    "show", "shows", "shown", "tell", "know", "think", "make", "made", "picked", "pick", "drop", "dropped",
    "count", "help", "point", "happen", "happened", "appear", "appears", "appeared", "visible", "remember",
    "notice", "noticed", "spot", "spotted", "pass", "passed", "visit", "visited", "stay", "stayed", "head",
    "headed", "end", "ended", "start", "started", "lost", "lose", "misplaced", "hidden", "hide", "sitting",
    "seated", "say", "says", "said", "let", "give", "wait", "try", "trying", "seems", "seem", "look", "looks",
    "stuck", "kept", "belong", "belongs", "contain", "contains", "containing", "holding", "hold", "held", "fit",
    "manage", "able", "walk", "stack", "stacked", "lined", "sits", "stands", "lies", "hangs", "rests", "go",
    "were", "wearing", "relocated", "displaced", "removed", "added", "changed", "remain", "remaining", "remained",
    "compare", "situated", "installed", "parked", "propped", "tucked", "lain", "observed", "encountered",
    "encounter", "presented", "shelved", "away", "reachable", "accessible", "answer", "choose", "select",
    "respond", "reply", "pick", "written", "write", "printed", "drawn", "painted", "depicted", "shown",
    "labeled", "labelled", "marked", "called", "named", "served", "sold", "bought", "worn", "lit", "turned",
    "switched", "plugged", "unplugged", "filled", "covered", "folded", "opened", "closed", "shut", "locked",
    "unlocked", "broken", "cleaned",
    # polite and indirect frames: "would you mind telling me", "I wonder", "do you know", "I'd like to know"
    "mind", "telling", "tells", "told", "wonder", "wondering", "wondered", "curious", "reckon", "recall",
    "recalling", "hi", "hello", "excuse", "sorry", "appreciate", "remind", "reminding", "comparing", "compared",
    "done", "finished", "centred", "centered", "based", "oriented", "orientated", "check", "checking",
    # thinking and asking ("trying to figure out", "sorry to bother you", "to work out which")
    "figure", "figured", "figuring", "bother", "bothering", "guess", "suppose",
    "assume", "believe", "forget", "forgot", "forgotten", "realise", "realize", "understand", "decide", "mean",
    "ask", "asking", "asked", "confirm", "recollect", "reckoned", "gather", "determine", "establish",
    # moving about ("before heading into", "where did I wander off to", "which hour points to")
    "heading", "heads", "wander", "wandered", "wandering", "reaching", "reaches", "arrive", "arrived", "arriving",
    "stepping", "stepped", "stroll", "strolled", "departed", "departing", "went", "exiting", "exits",
    "points", "pointing", "pointed", "lies", "lying", "located", "sits", "stands", "happen", "happened",
    "occupied", "occupy", "spent", "spend", "spending", "visiting", "returned", "return", "returning",
    "describe", "describing", "explain", "having", "laid", "treating", "treat", "counting", "taking",
    # wanting and needing, given ("if I wanted to look at", "given the way I'm facing"), where a thing falls
    "wanted", "wanting", "needed", "needing", "given", "fall", "falls", "fell", "falling",
    # turning up somewhere ("when I showed up in the kitchen")
    "showed", "showing",
    # lining up with a direction ("which number on the clock lines up with the cup")
    "lines", "aligns", "align", "matches", "corresponds", "correspond"))
# Predicate adjectives of states ("is the door closed?") and time words end a noun phrase too.
STATES = frozenset(("open", "closed", "clean", "dirty", "empty", "full", "messy", "tidy", "wet", "dry", "ajar",
                    "on", "off", "running", "working", "occupied", "vacant", "lit", "unlit"))
TIME_WORDS = frozenset(("moment", "moments", "second", "seconds", "minute", "minutes", "hour", "hours", "min",
                        "mins", "sec", "secs", "time", "times", "instant", "while", "today", "tonight", "now",
                        "morning", "evening", "afternoon", "night", "yesterday", "beginning", "start", "end"))
# A noun phrase never contains these; every other word may be part of one.
FUNCTION_WORDS = DETERMINERS | PRONOUNS | AUXILIARIES | PREPOSITIONS | CONJUNCTIONS | ADVERBS | VERBS | STATES | \
    TIME_WORDS
GENERIC_HEADS = frozenset(("object", "objects", "thing", "things", "item", "items", "stuff", "one", "ones",
                           "something", "anything", "furniture", "appliance", "appliances", "following", "followings",
                           # body parts: "without moving my feet", "get my hand on"
                           "feet", "foot", "hand", "hands", "arm", "arms", "leg", "legs", "finger", "fingers", "eye", "body",
                           "eyes", "shoulder", "shoulders",
                           # a measure of walking: "without taking any steps"
                           "step", "steps", "pace", "paces"))
# Words that never make an object phrase alone: polite formulas ("any idea which way", "if it's not too much
# trouble") and the wearer's own frame of reference ("from my perspective", "compared with my current heading").
NOT_OBJECT_WORDS = frozenset(("idea", "ideas", "clue", "notion", "trouble", "bother", "chance", "favour", "favor",
                              "perspective", "viewpoint", "standpoint", "vantage", "point", "view", "heading",
                              "orientation", "current", "eyes", "eyeline", "line", "sight", "name", "names", "question", "questions", "query"))
# Nouns that name a part of space, not an object: "the left of", "the top of", "the center of".
REGION_NOUNS = frozenset(("left", "right", "front", "back", "side", "top", "bottom", "middle", "center", "centre",
                          "edge", "end", "rear", "hand", "part", "direction", "way", "position", "location",
                          "area", "spot", "vicinity", "directions", "sides", "ways", "positions", "locations",
                          "areas", "spots", "parts", "ends", "edges", "distance", "distances", "bearing", "bearings",
                          "whereabouts",
                          # what the wearer sees or faces: "lost sight of the cup", "out of view", "my heading"
                          "sight", "view", "track", "glimpse", "heading", "orientation"))
# References used only when no landmark object is named (README of the intent labels).
STRUCTURAL = frozenset(("wall", "walls", "ceiling", "corner", "floor", "ground", "room", "doorway"))

_CLOCK_FRAME = frozenset(("hour", "hours", "term", "terms", "position", "positions", "direction", "directions", "face",
                          "wise", "reading", "time", "notation", "number", "numbers", "dial"))
_SIDE_WORDS = frozenset(("left", "right", "back", "front", "top", "bottom", "rear", "far"))
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[,.;:?!]")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens with clause punctuation (, . ; : ? !) kept as tokens."""
    t = text.lower().replace("’", "'").replace("`", "'").replace("-", " ").replace("_", " ").replace('"', " ")
    return _TOKEN_RE.findall(t)


def is_punct(tok: str) -> bool:
    return tok in {",", ".", ";", ":", "?", "!"}


@dataclass(frozen=True)
class Phrase:
    """A noun phrase: token span [start, end) in ``tokens(question)`` and its words (determiners dropped)."""

    start: int
    end: int
    words: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def head(self) -> str:
        """The head noun: the last word before a content/part extension ("picture" of "picture of the flowers")."""
        for i, w in enumerate(self.words):
            if w in ("of", "with") and i > 0:
                return self.words[i - 1]
        return self.words[-1]

    @property
    def generic(self) -> bool:
        """"object", "the thing", "items", "any idea", "my perspective": a phrase that names no kind of object."""
        return (len(self.words) == 1 and self.words[0] in GENERIC_HEADS) or all(w in NOT_OBJECT_WORDS for w in self.words)


@dataclass(frozen=True)
class Relation:
    """A spatial relation phrase at token span [start, end): ``name`` is left | right | front | behind |
    on | above | under | near | between | opposite | in | at."""

    name: str
    start: int
    end: int


# (name, token sequence) longest first; "left of" without "to the" also counts.
_RELATIONS = tuple(sorted((
    *((("left", f"{p} the left {s}".split()) for p in ("to", "on", "at") for s in ("of", "side of", "hand side of"))),
    *((("right", f"{p} the right {s}".split()) for p in ("to", "on", "at") for s in ("of", "side of", "hand side of"))),
    ("left", "left of".split()), ("right", "right of".split()),
    ("left", "on the left side of".split()), ("right", "on the right side of".split()),
    ("front", "in front of".split()), ("front", "at the front of".split()), ("front", "in the front of".split()),
    ("behind", ["behind"]), ("behind", "at the back of".split()), ("behind", "in back of".split()),
    ("behind", "on the back of".split()), ("behind", "back of".split()),
    ("on", "on top of".split()), ("on", "on the top of".split()), ("on", ["on"]), ("on", ["onto"]),
    ("on", ["upon"]), ("on", ["atop"]),
    ("above", ["above"]), ("above", ["over"]),
    ("under", ["under"]), ("under", ["underneath"]), ("under", ["beneath"]), ("under", ["below"]),
    ("near", "next to".split()), ("near", ["beside"]), ("near", ["by"]), ("near", ["near"]),
    ("near", "close to".split()), ("near", ["alongside"]), ("near", "adjacent to".split()),
    ("near", "near to".split()), ("near", ["around"]), ("near", ["against"]),
    ("between", ["between"]), ("between", "in between".split()),
    ("opposite", "across from".split()), ("opposite", ["opposite"]), ("opposite", "opposite to".split()),
    ("opposite", "opposite of".split()), ("opposite", "across the room from".split()),
    ("in", ["inside"]), ("in", ["in"]), ("in", ["within"]), ("in", ["into"]), ("in", "inside of".split()),
    ("in", "in the center of".split()), ("in", "in the centre of".split()), ("in", "in the middle of".split()),
    ("in", "in the corner of".split()),
    ("at", ["at"]),
), key=lambda r: -len(r[1])))
_RELATION_FIRST = {}
for _name, _seq in _RELATIONS:
    _RELATION_FIRST.setdefault(_seq[0], []).append((_name, _seq))


def relation_at(toks: list[str], i: int) -> Optional[Relation]:
    """The longest relation phrase starting at ``toks[i]``."""
    for name, seq in _RELATION_FIRST.get(toks[i], ()):
        if toks[i:i + len(seq)] == seq:
            return Relation(name, i, i + len(seq))
    return None


def relations(toks: list[str]) -> list[Relation]:
    out: list[Relation] = []
    i = 0
    while i < len(toks):
        r = relation_at(toks, i)
        if r is not None:
            out.append(r)
            i = r.end
        else:
            i += 1
    return out


def noun_phrases(toks: list[str], places: frozenset[str] = frozenset(),
                 protected: frozenset[int] = frozenset()) -> list[Phrase]:
    """Noun phrases in token order. ``places`` (normalised place words) are never merged into a
    phrase by "of" ("back wall of the dining room" -> "back wall"); tokens at ``protected``
    indices are content words whatever they look like (the "can" of "trash can")."""
    def content(i: int) -> bool:
        return i in protected or (not is_punct(toks[i]) and toks[i] not in FUNCTION_WORDS)

    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        if content(i):
            j = i
            while j < len(toks) and content(j):
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    out: list[Phrase] = []
    k = 0
    while k < len(runs):
        start, end = runs[k]
        if start >= 2 and toks[start - 1] in _SIDE_WORDS and toks[start - 2] in DETERMINERS:
            start -= 1  # "the right wall", "the back door", "the top shelf"
        words = list(toks[start:end])
        # "picture of the flowers", "bottle with a red cap": a content or part phrase stays in the phrase
        while k + 1 < len(runs):
            nxt_start, nxt_end = runs[k + 1]
            link = toks[end] if end < len(toks) else ""
            between = toks[end + 1:nxt_start]
            if link not in ("of", "with") or any(not (t in DETERMINERS) for t in between) or \
                    words[-1] in REGION_NOUNS or " ".join(toks[nxt_start:nxt_end]) in places or \
                    toks[nxt_start] in places or toks[nxt_end - 1] in ("room", "rooms"):
                break
            words += [link, *between, *toks[nxt_start:nxt_end]]
            end = nxt_end
            k += 1
        owner = next((i for i, w in enumerate(words[:-1]) if w.endswith("'s")), None)
        if owner is not None and all(w in REGION_NOUNS or w in _CLOCK_FRAME or w == "clock" for w in words[owner + 1:]):
            end -= len(words) - owner - 1  # "the umbrella's position", "the cup's clock position": the owner
            words = words[:owner + 1]
            words[-1] = words[-1][:-2]
        clock_frame = words[0] == "clock" and owner is None and (  # "the clock's position": the clock, an object
            len(words) > 1 and words[1] in _CLOCK_FRAME or len(words) == 1 and end < len(toks) and toks[end] in _CLOCK_FRAME)
        if words[-1] not in REGION_NOUNS and not clock_frame:  # "which side", "clock direction" name no object
            out.append(Phrase(start, end, tuple(words)))
        k += 1
    return out


@dataclass(frozen=True)
class Viewpoint:
    """An imagined viewpoint: the clause as written, where the observer is and what they face."""

    text: str
    at: Optional[Phrase] = None
    facing: Optional[Phrase] = None


_AT_RE = re.compile(r"\b(?:if|suppose|supposing|imagine|assuming|when|say)\b[^,.;?]*?\b(?:i|you|we|one)\b\s*"
                    r"(?:'m|am|are|were|was|'re|had)?\s*(?:to\s+)?(?:be\s+)?(?:sit|sat|sitting|stand|standing|stood|"
                    r"lie|lying|lay|seated|be)\s+(?:down\s+)?(?:on|at|in|by|next to|beside|near|in front of)\s+"
                    r"(?P<np>[^,.;?]+)")
_FACE_RE = re.compile(r"\b(?:face|faced|facing|facing towards?|turn to face|turned to face|turn towards|turned towards|"
                      r"turn toward|turned toward|turn to look at|turned to look at|look(?:ed|ing|s)? (?:straight |"
                      r"directly |right )?at|look towards|looking towards|turn(?:s|ed)? (?:(?:a)?round )?to(?= (?:the|a|an|my) ))"
                      r"\s+(?P<np>[^,.;?:]+)")
_IN_FRONT_RE = re.compile(r"\b(?P<with>with\s+)?(?:the|a|an|my)\s+(?P<np>(?:(?!(?:the|a|an|my|and|"
                          r"or)\b)[a-z']+\s+){1,4})(?:(?:is|was|are)\s+)?"
                          r"(?:directly\s+|right\s+|straight\s+)?in front of (?:me|you|us)\b")
_ENTER_RE = re.compile(r"\b(?:when|as|after)\s+(?:i|you|one|we)\s+(?:enter|enters|entered|walk in|walks in|come in|"
                       r"comes in)\b[^,.;?]*|\bfrom the (?:doorway|door|entrance)\b")
_HYPOTHETICAL = re.compile(r"\b(if|suppose|supposing|imagine|assuming|say)\b|\b(?:were (?:i|you|we) to|once (?:i|you|we))\b")


def viewpoint(text: str, places: frozenset[str] = frozenset(),
              protect: Optional[Callable[[list[str]], frozenset[int]]] = None) -> Optional[Viewpoint]:
    """The imagined viewpoint of "if I sit on the couch facing the TV ...", "facing the door, ...",
    "the TV is in front of me", "when one enters" (None when the question has none). ``protect(tokens)``
    gives the token indices that are object words whatever they look like (see noun_phrases)."""
    def _first_phrase(fragment: str, places: frozenset[str]) -> Optional[Phrase]:
        toks = tokens(fragment)
        nps = [p for p in noun_phrases(toks, places, protect(toks) if protect else frozenset()) if not p.generic]
        return nps[0] if nps else None

    low = " ".join(text.lower().replace("’", "'").split())
    at = facing = None
    parts = []
    m = _AT_RE.search(low)
    if m:
        at = _first_phrase(m.group("np"), places)
        parts.append(m.group(0))
    m = _FACE_RE.search(low)
    if m and (_HYPOTHETICAL.search(low[:m.start()]) or low.startswith(("facing", "face", "turned to", "turning to"))
              or re.search(r"\b(if|suppose|when)\b", low)):
        facing = _first_phrase(m.group("np"), places)
        parts.append(m.group(0))
    m = _IN_FRONT_RE.search(low)
    if m and facing is None and (_HYPOTHETICAL.search(low) or m.group("with")):
        facing = _first_phrase(m.group("np"), places)
        parts.append(m.group(0))
    m = _ENTER_RE.search(low)
    if m and at is None and facing is None:
        parts.append(m.group(0))
    if not parts:
        return None
    kept = [p.strip() for i, p in enumerate(parts) if not any(p.strip() in q for q in parts[:i])]
    return Viewpoint(text="; ".join(kept), at=at, facing=facing)


def last_clause(toks: list[str], phrases: list[Phrase]) -> list[Phrase]:
    """The phrases of the last sentence or clause (after the last . ; ! ? that does not end the text, or a comma
    before a wh-word) when an earlier one sets the scene: "I put my bag down a moment ago; where is the cup now?",
    "with my back to the wall, where is the cup?" ask about the cup."""
    ends = [i for i, t in enumerate(toks) if t in (".", ";", "!", "?") or
            (t == "," and toks[i + 1:i + 2] in (["where"], ["which"], ["what"], ["in"], ["on"], ["how"]) and
             (toks[i + 1] not in ("in", "on") or toks[i + 2:i + 3] in (["which"], ["what"])))]
    breaks = [i for i in ends if any(not is_punct(t) for t in toks[i + 1:])]
    if not breaks:
        return []
    return [p for p in phrases if p.start > breaks[-1]]
