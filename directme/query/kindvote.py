"""The kind of a question and the votes that chose it: the exact cue rules (query/cues.py, in their order),
a relation to a named landmark, and the sentence classifier (query/classify.py), which votes on every question
it can embed, so that the calibration (query/calibrate.py) sees whether meaning agrees with the rule."""
from __future__ import annotations

import re
from typing import Optional

from .calibrate import Votes
from .classify import KindGuess, classifier_for, relation_cue
from .embed import CachedEmbedder
from .kinds import cue_kind, cue_rules
from .parsed import DEFAULT_PARSER, ParserConfig
from .vocab import Vocabulary

_EXISTS = re.compile(r"^(?:is|are|was|were) there\b|^(?:do|does) (?:this|the) \w+ have\b")


def _decider(how: str) -> str:
    if how in ("rule:relation", "rule:in_place", "rule:exists"):
        return "relation"
    return "rule" if how.startswith("rule:") else "meaning" if how == "embedding" else "none"


def guess_kind(text: str, has_reference: bool, reference_is_place: bool, reference_known: bool,
               embedder: Optional[CachedEmbedder], use_model: bool, vocab: Optional[Vocabulary] = None,
               settings: ParserConfig = DEFAULT_PARSER) -> tuple[KindGuess, Votes]:
    """(the kind guess, the votes) for ``text`` (normalised). A cue rule decides first; a relation to a named
    object next (unless the landmark is a word no vocabulary knows and meaning disagrees); then meaning."""
    meaning = classifier_for(embedder, settings).classify(text, vocab) if use_model else KindGuess("open", 0.0, "none")
    rule_kinds = tuple(dict.fromkeys(k for k, r in cue_rules() if r.search(text)))
    guess = cue_kind(text)
    if guess is None:
        guess = relation_cue(text, has_reference, reference_is_place)
        if guess is not None and not reference_known and meaning.how == "embedding" and meaning.kind != guess.kind:
            guess = meaning  # "what is in the <unknown word>": meaning decides
    if guess is None and _EXISTS.search(text):
        guess = KindGuess("category_recall", 1.0, "rule:exists")
    if guess is None:
        guess = meaning if use_model else KindGuess("open", 0.0, "none")
    votes = Votes(guess.kind, _decider(guess.how), guess.how[5:] if guess.how.startswith("rule:") else "", rule_kinds,
                  meaning.scores if meaning.how == "embedding" else ())
    return guess, votes
