"""Question -> Intent: the asked primitive with a confidence, target objects (with colour / place
words), a reference object and relation, an imagined viewpoint and the time reference.

The kind of question is decided by exact cue rules first, then by meaning (query/classify.py:
sentence embeddings against labelled prototypes, calibrated); targets, references and viewpoints
come from noun phrases and relation phrases (query/phrases.py), the time reference from its clause
(query/timephrase.py). Questions memory geometry cannot answer get ``Primitive.OPEN``; without a
sentence model, phrasings no rule knows give ``Primitive.UNKNOWN`` with the "not_understood" flag.
Never a guess: a low confidence makes the geometric answerer abstain (see ``Intent.answerable``). The
result types (Intent, Target, Viewpoint, Primitive) live in query/parsed.py and are importable from here."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from ..types import Flag
from . import phrases as ph
from .asked import with_asked
from .calibrate import Calibration, default_calibration
from .classify import normalise_question
from .embed import CachedEmbedder
from .kinds import PhraseRules, Roles, kind_of_primitive, kind_spec, needing_target, with_kind
from .kinds.reading import Reading, Roled
from .kindvote import guess_kind
from .optionkinds import _from_options, _option_kinds, kind_with_options  # noqa: F401 (_from_options, _option_kinds re-exported)
from .parsed import (DEFAULT_PARSER, MIN_PARSE_CONFIDENCE, Intent, ParserConfig,  # noqa: F401 (re-exported)
                     Primitive, Target, Viewpoint)
from .targets import _CLOCK_WORDS, _dedupe, _norm_colour
from .timephrase import HERE, TimeKind, TimeRef, parse_time, places_in, present_time, route_time  # HERE, TimeKind, TimeRef: also imported from here
from .vocab import COLOURS, Vocabulary, canonical, words

_BINARY_START = re.compile(r"^(is|are|can|could|do|does|did|was|were|will|would|has|have|am|should)\b")


_CLOCK_FRAME_NOUNS = _CLOCK_WORDS | {"system", "method", "dial", "terms", "notation", "hours", "positions", "directions",
                                     "numbers", "number", "reading", "style"}

_FRAME_NOUNS = {"room", "rooms", "floor", "level", "storey", "color", "colour", "colors", "colours", "shape", "kind",
                "type", "sort", "side", "direction", "way", "place", "material", "size", "time", "number", "part",
                "brand", "name", "pattern", "one", "ones", "object", "objects", "item", "items", "thing", "things",
                "location", "area", "order", "route", "path", "distance", "clock"}
_WALKED_RE = re.compile(r"\bhow (?:far|much distance|many (?:meters|metres|steps|feet|km|kilometres|kilometers|miles|"
                        r"yards))\b|\bdistance\b")
_FRAME_PHRASES = {("room",), ("rooms",), ("place",), ("location",), ("spot",), ("part",), ("number",), ("amount",)}
# questions on what changed (answerers/changes.py): the moved / new / missing objects, or whether one is still there
_CHANGE_RE = re.compile(
    r"\b(?:what|which)(?: of (?:these|those|the following|them))?(?: (?:objects?|things?|items?|ones?))? (?:did|have|had) "
    r"(?:i|we) (?:move|moved|pick(?:ed)? up|"
    r"carr(?:y|ied)|take|taken|put (?:down|away))\b(?! (?:the|my|a|an|this|that)\b)"
    r"|\b(?:what|which)(?: of (?:these|those|the following|them))?(?: (?:objects?|things?|items?))?"
    r"(?:'s| is| are| was| were| has| have)? (?:been )?"
    r"(?:new|added|missing|gone|removed|taken away|different|changed|moved)\b"
    r"|\b(?:anything|something) (?:new|missing|different|moved|changed)\b|\bwhat (?:has|had) changed\b"
    r"|^(?:is|are) (?:the |my |that |those |these )?[\w' -]+? still (?:there|here|in|on|at|by|next to|where)\b")
_CHANGE_WORDS = {"new", "missing", "gone", "removed", "different", "changed", "moved", "anything", "something",
                 "thing", "things", "object", "objects", "item", "items"}
_CAME_FROM_RE = re.compile(r"\b(?:come|came) (?:out of|from)\b|\bhad (?:just )?(?:left|been in|exited)\b")
_QUANTITY_NOUNS = {"piece", "pieces", "pair", "pairs", "set", "sets", "bunch", "slice", "slices", "bit", "bits",
                   "lot", "lots", "couple", "group", "groups", "stack", "stacks", "pile", "piles", "kind", "kinds",
                   "type", "types", "sort", "sorts", "number", "amount"}
_ROUTE_NOUNS = {"route", "path", "way", "walk", "trajectory", "steps", "movements", "tracks", "journey", "order"}
_ANAPHORA = {"it", "them", "they", "one", "that", "this", "those", "these"}


@dataclass
class _Phrases:
    """The noun phrases of a question sorted by role."""

    toks: list[str]
    nps: list[ph.Phrase]
    asked: list[ph.Phrase]
    references: list[ph.Phrase]
    reference_text: str
    relation: str
    reference_is_place: bool
    reference_known: bool  # a relation other than in/at, a landmark the vocabulary knows or a structural part
    keep: list[ph.Phrase]  # every object phrase, in order


def _protected(toks: list[str], vocab: Vocabulary) -> frozenset[int]:
    """Tokens of multi-word object names that contain a function word ("trash can", "remote control")."""
    out: set[int] = set()
    end = len(toks)
    for i in range(len(toks) - 1, -1, -1):
        if ph.is_punct(toks[i]):
            end = i
            continue
        hit = vocab.lookup(toks[i:end], 0)
        if hit and hit[1] >= 2:
            out.update(range(i, i + hit[1]))
    return frozenset(out)


def _is_place(p: ph.Phrase, vocab: Vocabulary) -> bool:
    words_ = list(p.words)
    hit = vocab.place_at(words_, 0)
    return bool(hit and hit[1] == len(words_)) or p.words[-1] in ("room", "rooms", "house", "apartment", "home")


def _clauses_before(toks: list[str], i: int) -> bool:
    return any(t in (".", "?", "!", ";") for t in toks[:i])


def _analyse(text: str, vocab: Vocabulary, view: Optional[ph.Viewpoint]) -> _Phrases:
    toks = ph.tokens(text)
    nps = ph.noun_phrases(toks, frozenset(vocab.places), _protected(toks, vocab))
    view_words = {v.words for v in (view.at, view.facing) if v is not None} if view else set()
    keep: list[ph.Phrase] = []
    for p in nps:
        frame = p.start > 0 and toks[p.start - 1] in ("what", "which", "whats", "many") and p.words[0] in _FRAME_NOUNS \
            and not (p.words[0] in ("number", "amount", "count", "total") and p.words[1:2] == ("of",) and
                     len(p.words) > 2)  # "what number of cups": the cups are asked
        if frame and (vocab.lookup(list(p.words), 0) or ("", 0))[1] < 2:  # "how many side tables": an object
            continue  # "which room", "what colour", "what kind of": the question's frame, not an object
        if p.start >= 2 and toks[p.start - 1] == "of" and toks[p.start - 2] in ("kind", "type", "sort", "kinds", "types"):
            continue  # "what type of room"
        if p.words[0] == "clock" and len(p.words) > 1 and all(w in _CLOCK_FRAME_NOUNS for w in p.words[1:]):
            continue  # "using the clock system": the frame of the answer
        if all(w.isdigit() for w in p.words):
            continue  # "treating straight ahead as 12": a number, no object
        if len(p.words) == 1 and p.words[0].endswith("ing") and (p.start == 0 or ph.is_punct(toks[p.start - 1])) and \
                not vocab.lookup(list(p.words), 0):
            continue  # a participle opening a clause: "Treating straight ahead as twelve, ..."
        if len(p.words) == 1 and toks[p.end:p.end + 1] == ["out"] and toks[p.end + 1:p.end + 2] != ["of"] and \
                p.start > 0 and toks[p.start - 1] not in ph.DETERMINERS:
            continue  # a phrasal verb: "trying to work out which room", "can you suss out"
        if p.words[0] == "clock" and toks[p.start - 1:p.start] == ["a"] and len(nps) > 1 and \
                toks[max(0, p.start - 2):p.start - 1] != ["see"] and not re.search(r"\b(?:seen|saw|spot\w*|notic\w*)\b",
                                                                                   text):
            continue  # "in terms of a clock", "on a clock face": an imagined clock, the frame of the answer
        before = [t for t in toks[:p.start] if t not in ph.DETERMINERS][-1:]
        if p.generic or (p.words in _FRAME_PHRASES and len(nps) > 1 and not set(before) & ph.PREPOSITIONS):
            continue  # "the room where I left the cup" (but "in the other room" is a place)
        keep.append(p)
    rels = ph.relations(toks)
    asked: list[ph.Phrase] = []
    references: list[ph.Phrase] = []
    ref_text, relation = "", ""
    ref_is_place = False
    ref_known = True
    for r in rels:  # the first relation followed by a landmark phrase
        after = [p for p in keep if p.start >= r.end and all(t in ph.DETERMINERS or t in ph.REGION_NOUNS
                                                              for t in toks[r.end:p.start])]
        if not after or after[0].words in view_words:
            continue
        first = after[0]
        if first.words[-1] in ph.STRUCTURAL:  # "in the corner by the coat rack": the landmark object wins
            later = [p for p in keep if p.start > first.end and p.words[-1] not in ph.STRUCTURAL and
                     any(q.start == first.end or first.end <= q.start < p.start for q in rels if q.start >= first.end)
                     and not _is_place(p, vocab)]
            if later and later[0].start - first.end <= 3:
                first = later[0]
        if r.name == "between":
            j = first.end
            while j < len(toks) and toks[j] in ph.DETERMINERS:
                j += 1
            second = next((p for p in keep if p.start > first.start and toks[first.end:first.end + 1] == ["and"]
                           and all(t in ph.DETERMINERS or t == "and" for t in toks[first.end:p.start])), None)
            references = [first] + ([second] if second else [])
            end = (second or first).end
            ref_text = " ".join(w for w in toks[first.start:end])
        else:
            references = [first]
            ref_text = first.text
        relation = r.name
        ref_is_place = _is_place(first, vocab) and not any(t in ph.REGION_NOUNS or t == "corner"
                                                           for t in toks[r.start:r.end])  # "in the center of the room"
        # "in the corner": a part of the room, never a picture's content ("in the tapestry")
        ref_known = vocab.lookup(list(first.words), 0) is not None or r.name not in ("in", "at") or \
            (after[0].words[-1] in ph.STRUCTURAL and not _is_place(after[0], vocab))
        asked = [p for p in keep if p.end <= r.start and p.words not in view_words]
        break
    if not references:
        asked = [p for p in keep if p.words not in view_words]
    return _Phrases(toks, nps, asked, references, ref_text, relation, ref_is_place, ref_known, keep)


def _core(ps: _Phrases, vocab: Vocabulary) -> list[ph.Phrase]:
    """The asked phrases of a non-relational question: the first, the ones coordinated with it ("the
    cup or the plate") and none that only modify it ("the lamp in the living room")."""
    cands = [p for p in ps.keep if not _is_place(p, vocab) or p in ps.asked]
    toks = ps.toks
    cands = _prefer_determined(cands, toks, vocab)
    if not cands:
        return []
    out = [cands[0]]
    for p in cands[1:]:
        gap = toks[out[-1].end:p.start]
        if gap and all(t in ph.DETERMINERS or t in (",", "and", "or") for t in gap) and ("or" in gap or "and" in gap
                                                                                       or "," in gap):
            out.append(p)
        elif gap and gap[-1] in ph.PREPOSITIONS or (gap and gap[-1] in ph.DETERMINERS and len(gap) >= 2 and
                                                      gap[-2] in ph.PREPOSITIONS):
            continue  # a post-modifier
        elif "," in gap or any(t in (".", "?", "!") for t in gap):
            if _is_place(p, vocab):
                continue
            out.append(p)  # "Which is closer to me now, the cup or the plate?" after the comma
    return out


def _prefer_determined(phrases: list[ph.Phrase], toks: list[str], vocab: Vocabulary) -> list[ph.Phrase]:
    """Without the bare words no object name explains when a determiner opens another phrase: "guide me to the
    cup", "from memory, where is the cup", "if I spin round to face the sofa" ask about the cup and the sofa.
    A bare phrase coordinated with another ("the mug or kettle") stays."""
    def determined(p: ph.Phrase) -> bool:
        return p.start > 0 and toks[p.start - 1] in ph.DETERMINERS

    if not any(determined(p) for p in phrases):
        return phrases
    return [p for p in phrases if determined(p) or toks[p.start - 1:p.start] in (["and"], ["or"], [","]) or
            (vocab.lookup(list(p.words), 0) or ("", 0))[1] == len(p.words)]


def _to_target(p: ph.Phrase, vocab: Vocabulary, toks: list[str]) -> Target:
    """A phrase as a Target: the vocabulary key of its head (longest known name ending at the head),
    its colour and a following "in the <place>"."""
    words_ = list(p.words)
    while len(words_) > 2 and words_[1] == "of" and words_[0] in _QUANTITY_NOUNS:  # "pieces of dough"
        words_ = [w for w in words_[2:] if w not in ("the", "a", "an")] or words_
    head_i = next((i - 1 for i, w in enumerate(words_) if w in ("of", "with") and i > 0), len(words_) - 1)
    key = ""
    for i in range(0, head_i + 1):
        hit = vocab.lookup(words_[i:head_i + 1], 0)
        if hit and hit[1] == head_i + 1 - i:
            key = hit[0]
            break
    if not key:
        nouns = [w for w in words_[:head_i + 1] if w not in COLOURS]
        key = canonical(" ".join(nouns or words_[:head_i + 1]))
    colour = next((w for w in words_[:head_i] if w in COLOURS), None)
    place = None
    if p.end + 2 < len(toks) + 1 and toks[p.end:p.end + 2] in (["in", "the"], ["at", "the"], ["inside", "the"]):
        hit = vocab.place_at(toks, p.end + 2)
        place = hit[0] if hit else None
    return Target(key, p.text, colour=_norm_colour(colour), place=place)


def _objects_in(text: str, vocab: Vocabulary) -> list[Target]:
    """The objects a stretch of text names (noun phrases that are no place): the names the vocabulary knows, then
    the other nouns a determiner or "how many" opens ("the stove")."""
    toks = ph.tokens(re.sub(r"'s\b|\(s\)", "", text))
    found = [(p, _to_target(p, vocab, toks)) for p in ph.noun_phrases(toks, frozenset(vocab.places),
                                                                        _protected(toks, vocab))
             if not p.generic and not _is_place(p, vocab)]
    known = [t for p, t in found if vocab.lookup(words(t.key), 0)]  # then unknown names after a determiner
    return known + [t for p, t in found if t not in known and p.start > 0 and (toks[p.start - 1] in ph.DETERMINERS
                                                                               or toks[p.start - 1] == "many")]


def _resolve_anaphora(text: str, ps: _Phrases, vocab: Vocabulary) -> list[ph.Phrase]:
    """"I'm looking for a bottle with a red cap. Where is it?": the pronoun's phrase from an earlier sentence."""
    toks = ps.toks
    last_q = max((i for i, t in enumerate(toks[:-1]) if t in (".", "!", "?", ";")), default=-1)
    if last_q < 0 or not any(t in _ANAPHORA for t in toks[last_q + 1:]):
        return []
    in_last = [p for p in ps.asked if p.start > last_q]
    if in_last:
        return []
    earlier = [p for p in ps.asked if p.end <= last_q and not _is_place(p, vocab)]
    return earlier[:1]


def parse_question(question: str, options: Sequence[str] = (), vocab: Optional[Vocabulary] = None,
                   embedder: Optional[CachedEmbedder] = None, use_model: bool = True,
                   settings: Optional[ParserConfig] = None, calibration: Optional[Calibration] = None) -> Intent:
    """Parse one question (with its options, if any) into an Intent. Never raises on odd text.

    ``embedder``: the sentence model of the kind classifier, which votes on every question and decides when
    no cue rule does (None: the shared ``auto`` one; an embedder named ``none``/``string``, or ``use_model=False``: rules only).
    ``settings``: how far each kind of evidence is trusted (None: the defaults, config ``query.parser``).
    ``calibration``: maps the votes on the kind to the parse's confidence (None: the packaged one,
    query/calibration.json)."""
    settings = settings or DEFAULT_PARSER
    vocab = vocab or default_vocabulary()
    text = normalise_question(question)
    time_ref, main = parse_time(text, vocab)
    view = ph.viewpoint(text, frozenset(vocab.places), lambda toks: _protected(toks, vocab))
    ps = _analyse(main if main.strip() else text, vocab, view)
    guess, votes = guess_kind(text, bool(ps.references), ps.reference_is_place, ps.reference_known, embedder,
                              use_model, vocab, settings)
    kind, confidence, how = kind_with_options(guess, options, vocab, settings)
    votes = replace(votes, kind=kind)
    calibration = calibration or default_calibration()
    primitive = kind_spec(kind).primitives[0]
    if how == "none":
        primitive = Primitive.UNKNOWN
    elif kind_spec(kind).roles == Roles.OWN:  # a kind that reads its phrases' roles itself (query/kinds)
        own = kind_spec(kind).read(Reading(question, text, tuple(options), lambda s: _objects_in(s, vocab), time_ref))
        if own is not None:
            if how == guess.how and votes.decider != "none":
                confidence = calibration.probability(votes)
            return with_kind(with_asked(_own_flags(replace(own, how=how, votes=votes), kind, confidence, settings)),
                             kind)
        kind = kind_spec(kind).refines or kind  # its words are absent: the kind it refines reads the question
    # --- roles of the phrases for this kind (its Roles and PhraseRules, query/kinds)
    toks = ps.toks
    references: list[ph.Phrase] = []
    relation = ""
    roles, rules = kind_spec(kind).roles, kind_spec(kind).phrases
    if roles == Roles.RELATION:
        asked, references, relation = _prefer_determined(ps.asked, toks, vocab), ps.references, ps.relation
    elif roles in (Roles.DISTANCE, Roles.COMPARED):
        ref = _reference_from(ps)
        asked = [p for p in _core_all(ps, vocab) if p is not ref]
        alternatives = _alternatives(toks, asked)
        if roles == Roles.COMPARED and len(alternatives) >= 2:  # "which is handier, the A or the B": A and B
            asked = [p for p in asked if p in alternatives]
        if ref is None and roles == Roles.DISTANCE and len(asked) >= 2:  # "how far apart are the A and the B"
            ref, asked = asked[1], asked[:1]
        references = [ref] if ref is not None else []
    else:
        frame = [p for p in ps.keep if p.words == ("clock",) and toks[p.start - 2:p.start] in
                 (["on", "the"], ["by", "the"], ["using", "the"], ["of", "the"])]
        if rules.clock_frame and frame and len(ps.keep) > len(frame):  # "where on the clock is the cup"
            asked = _core(replace(ps, keep=[p for p in ps.keep if p not in frame],
                                  asked=[p for p in ps.asked if p not in frame]), vocab)
        else:
            asked = _core(ps, vocab)
            if roles == Roles.OBJECT and asked and all(_is_place(p, vocab) for p in asked):
                # "I just came from the hallway; where is the stove": the room opens the question, the object is asked
                asked = _core(replace(ps, keep=[p for p in ps.keep if not _is_place(p, vocab)],
                                      asked=[p for p in ps.asked if not _is_place(p, vocab)]), vocab)
    if roles == Roles.PLACE and not asked and ps.references and not ps.reference_is_place:
        asked = ps.references[:1]  # "which room is the plant in" parsed "in" as a relation
        references = []
    if rules.rooms_scope:
        asked = [p for p in asked if not _is_place(p, vocab) or (roles == Roles.PLACE and toks[p.start - 1:p.start]
                                                                 not in (["which"], ["what"]))]
    if roles == Roles.ROUTE and any(_handled(p, toks) for p in asked):
        # "which room did I end up leaving the cup in": the route of an object I handled, not mine
        primitive = Primitive.OBJECT_TRAJECTORY
        kind, roles, rules = _kind_of(primitive)
    if rules.asking_sentence and asked:
        tail = ph.last_clause(toks, [p for p in ps.keep if not _is_place(p, vocab)])
        if tail and asked[0] not in tail:  # "I put my bag down; where is the cup now?": the asking sentence's object
            asked = [p for p in asked if p in tail] or tail[:1]
    if not asked and roles != Roles.RELATION:
        asked = _resolve_anaphora(text, ps, vocab)
    targets = [_to_target(p, vocab, toks) for p in asked]
    ref_targets = [_to_target(p, vocab, toks) for p in references]
    viewpoint = None
    if view is not None and roles == Roles.RELATION:
        at = _to_target(view.at, vocab, ph.tokens(view.at.text)) if view.at else None
        facing = _to_target(view.facing, vocab, ph.tokens(view.facing.text)) if view.facing else None
        viewpoint = Viewpoint(view.text, at, facing)
    named = {t.key for t in targets + ref_targets}  # a word no vocabulary knows, named as an object: not a place
    places = [p for p in places_in(ph.tokens(main), vocab) if p not in named or vocab.place_at([p], 0)]
    if rules.present:
        time_ref = present_time(text, time_ref, re.split(r"[.;!?](?=[^.;!?]*\w)", text)[-1])
    if time_ref.kind == TimeKind.EVENT and not time_ref.subject and targets:
        time_ref = replace(time_ref, subject=targets[0].key)  # "before I picked it up"
    if time_ref.kind == TimeKind.START and targets and (rules.since_first_move or re.search(
            r"\bwhere (?:was|were|had)\b|\bused to\b", text)):
        # "where was the vase originally": before its first move
        time_ref = TimeRef(TimeKind.EVENT, "before", "pick", targets[0].key, "first", 0.0, time_ref.text)
    if not targets and time_ref.event in ("pick", "put") and time_ref.subject:
        targets = [Target(time_ref.subject, time_ref.subject)]  # "Before I moved the cup, where was it?"
    if all(vocab.place_at(words(t.key), 0) or t.key in _ROUTE_NOUNS or not vocab.lookup(words(t.key), 0)
           for t in targets) and (
            roles == Roles.ROUTE or (roles == Roles.PLACE and not re.search(
            r"\b(?:am|are) (?:i|we)\b|\bnow\b|\bcurrently\b", text))):
        routed = route_time(text, time_ref, vocab)  # "I ended up in the bathroom. Which room was I in before that?"
        if routed != time_ref and roles == Roles.PLACE:
            targets = []  # "bedroom, then where?": my route, not where the bedroom is
        time_ref = routed
    comparison = ""
    within = kind_spec(kind).within  # the primitive within the kind (query/kinds/<kind>.py)
    if within is not None:
        q = within(Roled(text, kind, primitive, tuple(targets), tuple(ref_targets), viewpoint, relation, time_ref))
        primitive, targets, ref_targets, comparison = q.primitive, list(q.targets), list(q.references), q.comparison
        if q.kind != kind:
            kind, roles, rules = _kind_of(primitive)
    if primitive in (Primitive.CATEGORY_RECALL, Primitive.COUNT) and time_ref.kind == TimeKind.EVENT and \
            time_ref.event == "enter" and time_ref.relation == "at" and re.search(r"\b(?:when|while) (?:i|we) "
                                                                             r"(?:was|were) in\b", text):
        places.append(time_ref.subject)  # "when I was in the bathroom, which of these did I see": a place, not a time
        time_ref = TimeRef(TimeKind.NOW)
    if primitive == Primitive.MY_TRAJECTORY and time_ref.kind == TimeKind.EVENT and time_ref.relation == "at" and \
            time_ref.event == "enter" and _CAME_FROM_RE.search(text):  # "which room had I come out of when I entered X"
        time_ref = replace(time_ref, relation="before")
    all_targets = _dedupe(targets + [t for t in ref_targets if t not in targets])
    if viewpoint is not None:
        all_targets = _dedupe(all_targets + [t for t in (viewpoint.at, viewpoint.facing) if t is not None])
    if how == guess.how and votes.decider != "none":  # a kind the options gave keeps its configured confidence
        confidence = calibration.probability(votes)  # (no labelled question has options to calibrate it on)
        if votes.decider == "meaning" and votes.p_meaning(kind) >= settings.unsure_meaning and \
                kind in _option_kinds(options, vocab):  # options agreeing with meaning
            confidence = max(confidence, settings.meaning_and_options)
    flags: list[Flag] = []
    needs = primitive in needing_target() or (primitive == Primitive.OBJECTS_AROUND and not ref_targets and
                                           (viewpoint is None or viewpoint.at is None))
    if needs and not (targets or ref_targets):
        flags.append(Flag.NO_TARGET)
        confidence = min(confidence, 0.3)
    if primitive == Primitive.UNKNOWN:
        confidence = 0.0
    if primitive == Primitive.UNKNOWN or (confidence < settings.min_confidence and Flag.NO_TARGET not in flags):
        flags.append(Flag.NOT_UNDERSTOOD)
    ref_text = ps.reference_text if references is ps.references else " and ".join(p.text for p in references)
    if not ref_text and viewpoint is not None and viewpoint.at is not None:
        ref_text = viewpoint.at.text
    walked = primitive == Primitive.MY_TRAJECTORY and bool(_WALKED_RE.search(text))
    if _CHANGE_RE.search(text):  # a high-precision cue: it decides whatever the kind classifier said
        votes = replace(votes, kind=kind_of_primitive(Primitive.CHANGES), decider="rule", rule="changes")
        primitive, confidence, how = Primitive.CHANGES, calibration.probability(votes), "rule"
        flags = [f for f in flags if f not in (Flag.NO_TARGET, Flag.NOT_UNDERSTOOD)]
        all_targets = [t for t in all_targets if t.key not in _CHANGE_WORDS and canonical(t.key) not in
                       {canonical(p) for p in places}]
    return with_kind(with_asked(Intent(
        question=question, primitive=primitive, targets=tuple(all_targets), time_ref=time_ref,
        places=tuple(dict.fromkeys(places)), comparison=comparison, binary=bool(_BINARY_START.match(text)),
        flags=tuple(flags), confidence=float(confidence), relation=relation, references=tuple(ref_targets),
        reference_text=ref_text, viewpoint=viewpoint, how=how, walked=walked, votes=votes)))


def _kind_of(primitive: Primitive) -> tuple[str, Roles, PhraseRules]:
    """The kind whose question ``primitive`` answers, with its roles and phrase rules (a parse that changed kind)."""
    spec = kind_spec(kind_of_primitive(primitive) or "open")
    return spec.name, spec.roles, spec.phrases


def _own_flags(intent: Intent, kind: str, confidence: float, settings: ParserConfig) -> Intent:
    """A parse a kind module read (``Roles.OWN``) with its confidence and the flags of a missing object."""
    flags: list[Flag] = []
    solves = kind_spec(kind).solves(intent.primitive)
    if (solves.needs_target if solves else kind_spec(kind).needs_target) and not intent.targets:
        flags.append(Flag.NO_TARGET)
        confidence = min(confidence, 0.3)
    elif confidence < settings.min_confidence:
        flags.append(Flag.NOT_UNDERSTOOD)
    return replace(intent, confidence=float(confidence), flags=tuple(flags))


_HANDLING_VERBS = frozenset((
    "leave", "leaving", "left", "put", "putting", "take", "taking", "took", "taken", "carry", "carrying", "carried",
    "move", "moving", "moved", "drop", "dropping", "dropped", "set", "setting", "place", "placing", "placed", "bring",
    "bringing", "brought", "pick", "picking", "picked", "grab", "grabbing", "grabbed", "stash", "stashed", "store",
    "stored", "lay", "laid", "hide", "hid", "hidden", "relocate", "relocated", "shift", "shifted", "fetch", "fetched"))


def _handled(p: ph.Phrase, toks: list[str]) -> bool:
    """Whether the phrase is the object of a verb of handling ("leaving the cup", "moved my keys")."""
    i = p.start - 1
    while i >= 0 and toks[i] in ph.DETERMINERS:
        i -= 1
    return i >= 0 and toks[i] in _HANDLING_VERBS


def _reference_from(ps: _Phrases) -> Optional[ph.Phrase]:
    """"closer to the window", "how far is the table from the fridge": the phrase distances are measured from.
    Phrases joined by "or" ("am I closer to the sink or to the bath") are the compared alternatives, never it."""
    toks = ps.toks
    alternatives = _alternatives(toks, ps.asked + ps.references)
    for p in ps.asked + ps.references:
        if p in alternatives:
            continue
        before = toks[max(0, p.start - 3):p.start]
        if any(t in ("to", "from") for t in before) and all(t in ph.DETERMINERS or t in ("to", "from")
                                                             for t in before[before.index(next(
                                                                 t for t in before if t in ("to", "from"))):]):
            if toks[p.start - 1] in ph.DETERMINERS or toks[p.start - 1] in ("to", "from"):
                return p
    first = min(alternatives, key=lambda p: p.start) if alternatives else None
    if first is not None and any(t in ("to", "from") for t in toks[max(0, first.start - 3):first.start]):
        subject = [p for p in ps.asked + ps.references if p not in alternatives and p.end <= first.start]
        if len(subject) == 1:  # "is the plant nearer to the couch or to the TV": from the plant
            return subject[0]
    return None


def _alternatives(toks: list[str], phrases: list[ph.Phrase]) -> set[ph.Phrase]:
    """Phrases coordinated by "or" with only determiners, commas and a repeated preposition between them
    ("the sink or the bath", "to the sink or to the bath")."""
    out: set[ph.Phrase] = set()
    ordered = sorted(set(phrases), key=lambda p: p.start)
    for a, b in zip(ordered, ordered[1:]):
        gap = toks[a.end:b.start]
        if "or" in gap and all(t in ph.DETERMINERS or t in ("or", ",", "to", "from", "either") for t in gap):
            out.update((a, b))
    return out


def _core_all(ps: _Phrases, vocab: Vocabulary) -> list[ph.Phrase]:
    """Asked phrases of a distance question: every object phrase (the reference is taken out after)."""
    return [p for p in ps.asked + ps.references if not _is_place(p, vocab)]


_DEFAULT_VOCAB: list[Vocabulary] = []


def default_vocabulary() -> Vocabulary:
    if not _DEFAULT_VOCAB:
        _DEFAULT_VOCAB.append(Vocabulary())
    return _DEFAULT_VOCAB[0]
