"""What a question's options say about its kind: all numbers (a count), all directions or clock hours (where
an object is for me or for an imagined viewpoint), all routes, all rooms; and how that evidence is weighed
against the kind the cue rules or the sentence model found (query/intent.py). Options never make a question
the meaning found open geometric: they raise a weak geometric reading that agrees with them, or move a
geometric reading they rule out to the likeliest kind they allow."""
from __future__ import annotations

import re
from typing import Sequence

from .cues import KindGuess
from .options import OptionKind
from .parsed import DEFAULT_PARSER, ParserConfig, Primitive
from .vocab import Vocabulary, words


def _from_options(options: Sequence[str]) -> Primitive:
    """Primitive implied by the option texts alone (numbers -> count, directions -> ego)."""
    opts = [o.lower() for o in options if o.strip()]
    if not opts:
        return Primitive.UNKNOWN
    if all(re.fullmatch(r"\s*\d+\s*", o) for o in opts):
        return Primitive.COUNT
    if all(re.search(r"o'clock|\b(left|right|front|behind|ahead|back)\b", o) for o in opts):
        return Primitive.EGO_DIRECTION
    if all(re.search(r"->|→|\bthen\b", o) for o in opts):
        return Primitive.MY_TRAJECTORY
    return Primitive.UNKNOWN


_NUMBER_OPTION = re.compile(r"\s*(?:\d+|zero|one|two|three|four|five|six|seven|eight|nine|ten)\s*\.?\s*")


def _option_kinds(options: Sequence[str], vocab: Vocabulary) -> frozenset[str]:
    """The question kinds every option fits, by the option kinds each kind accepts (query/kinds): numbers
    (counts), directions or clock hours (where an object is for me or for an imagined viewpoint), rooms ("The
    kitchen." / "In the office."); routes fit the kinds that give their phrases route roles."""
    from .kinds import REGISTRY, Roles  # the registry imports this package's modules

    opts = [o.lower() for o in options if o.strip()]
    if not opts:
        return frozenset()
    if _from_options(opts) == Primitive.MY_TRAJECTORY:  # "kitchen -> hall" (never all numbers or directions)
        return frozenset(k for k, spec in REGISTRY.items() if spec.roles == Roles.ROUTE)
    shape = _option_shape(opts, vocab)
    return frozenset(k for k, spec in REGISTRY.items() if spec.options & shape)


def _option_shape(opts: list[str], vocab: Vocabulary) -> frozenset[OptionKind]:
    """The option kinds all of ``opts`` (lower case) are: numbers, directions and clock hours, or rooms."""
    if all(_NUMBER_OPTION.fullmatch(o) for o in opts):
        return frozenset((OptionKind.COUNT,))
    if _from_options(opts) == Primitive.EGO_DIRECTION:
        return frozenset((OptionKind.DIRECTION, OptionKind.CLOCK))
    rooms = [[t for t in words(o) if t not in ("the", "in", "a", "an", "my")] for o in opts]
    if all(toks and (vocab.place_at(toks, 0) or ("", 0))[1] == len(toks) for toks in rooms):
        return frozenset((OptionKind.PLACE,))
    return frozenset()


def _kind_options_allow(guess: KindGuess, fits: frozenset[str], kind: str, confidence: float,
                        how: str, settings: ParserConfig) -> tuple[str, float, str]:
    """A geometric kind the options rule out (room options for "what came before the kitchen", read as what I
    saw; clock hours for "the basket?") gives way to the likeliest kind they allow, when that is likelier than
    an open question. Never makes an open question geometric."""
    if not fits or kind in fits:
        return kind, confidence, how
    p = dict(guess.scores)
    best = max(fits, key=lambda k: p.get(k, 0.0))
    if p.get(best, 0.0) > p.get("open", 0.0):
        return best, settings.meaning_and_options, "embedding+options"
    return kind, confidence, how


def kind_with_options(guess: KindGuess, options: Sequence[str], vocab: Vocabulary,
                      settings: ParserConfig = DEFAULT_PARSER) -> tuple[str, float, str]:
    """(kind, confidence, how) of a question whose cue rules or meaning gave ``guess``, once its options are
    weighed in (no options: ``guess`` unchanged)."""
    from .kinds import kind_of_primitive  # the registry imports this package's modules

    kind, confidence, how = guess.kind, guess.confidence, guess.how
    if kind == "open" and confidence < settings.min_confidence and options:
        implied = _from_options(options)
        if implied != Primitive.UNKNOWN:  # the options say what is asked; weak evidence: an MLLM decides
            kind, confidence, how = kind_of_primitive(implied) or "open", settings.options_only, "options"
    elif how == "embedding" and settings.unsure_meaning <= confidence < settings.min_confidence and \
            kind in _option_kinds(options, vocab):  # two weak cues that agree: the meaning and what the options are
        confidence, how = settings.meaning_and_options, "embedding+options"
    elif how == "embedding" and kind != "open" and options:
        kind, confidence, how = _kind_options_allow(guess, _option_kinds(options, vocab), kind, confidence, how,
                                                    settings)
    return kind, confidence, how
