"""Words the question parser knows: object labels (Objects365 + memory), synonyms, plurals,
colours and place words. Everything is normalised to lower-case singular "keys" so that
"sofas", "Sofa" and "couch" meet on one key."""
from __future__ import annotations

import re
import threading
from functools import lru_cache
from importlib import resources
from typing import Iterable, Optional

COLOURS = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "black", "white",
           "gray", "grey", "silver", "gold", "beige", "cyan", "violet", "tan")

PLACE_WORDS = ("kitchen", "living room", "bedroom", "bathroom", "restroom", "corridor", "hallway", "hall",
               "office", "dining room", "study", "garage", "balcony", "entrance", "lobby", "store", "shop",
               "street", "garden", "laundry room", "storage room", "classroom", "meeting room", "restaurant",
               "cafe", "supermarket", "milk tea shop", "stairs", "staircase", "elevator lobby",
               # the other rooms and places of a day, so that a question about one never entered is not read
               # as a question about everywhere ("how many chairs are in the attic?")
               "attic", "basement", "cellar", "sauna", "pantry", "porch", "patio", "nursery", "loft", "gym",
               "library", "conservatory", "mudroom", "closet", "walk-in closet", "foyer", "vestibule", "terrace",
               "yard", "backyard", "driveway", "workshop", "studio", "playroom", "spa",
               "swimming pool", "parking lot", "car park", "parking garage", "train station",
               "mall", "pharmacy", "bakery", "hospital", "clinic", "school", "church", "museum",
               "hotel", "lounge", "courtyard", "rooftop", "veranda", "greenhouse", "barn", "stairwell", "cloakroom",
               "washroom", "laboratory", "canteen", "cafeteria", "kitchenette",
               "grocery store", "bookstore", "pub", "theater", "theatre", "cinema", "playground", "subway", "airport")

# words after "in the" that name no place of their own ("in the room", "in the video", "in the morning")
SCOPE_WORDS = frozenset(("room", "house", "home", "apartment", "flat", "building", "place", "area", "space", "scene",
                         "video", "clip", "recording", "image", "view", "world", "total", "end", "beginning",
                         "middle", "meantime", "morning", "afternoon", "evening", "night", "day", "past", "future",
                         "moment", "corner", "distance", "background", "foreground", "open", "dark", "way",
                         "same", "other", "first", "last", "front", "back", "left", "right", "centre", "center",
                         "environment", "surroundings", "vicinity", "episode", "footage", "frame", "meanwhile"))

# "<word> room" names a place ("the boiler room"), except after these words ("this room", "the same room")
NOT_ROOM_NAMES = frozenset(("the", "a", "an", "this", "that", "these", "those", "which", "what", "each", "every",
                            "any", "another", "one", "same", "other", "next", "previous", "first", "second",
                            "third", "last", "whole", "entire", "my", "your", "our", "his", "her", "their", "its",
                            "big", "small", "large", "little", "main", "current", "new", "old", "empty", "dark",
                            "some", "no", "in", "of", "to", "from", "at", "and", "or"))

# Each group is one meaning; the first entry is the canonical key.
SYNONYM_GROUPS = (
    ("couch", "sofa", "settee"),
    ("refrigerator", "fridge"),
    ("elevator", "lift"),
    ("trash bin can", "trash can", "trash bin", "garbage can", "garbage bin", "rubbish bin", "dustbin",
     "waste bin", "bin"),
    ("cell phone", "phone", "mobile phone", "cellphone", "smartphone", "mobile"),
    ("cup", "mug"),
    ("television", "tv", "telly"),
    ("monitor", "screen", "computer monitor"),
    ("picture", "frame", "photo", "photograph", "painting", "picture frame"),
    ("laptop", "notebook computer"),
    ("potted plant", "plant", "houseplant", "flower pot"),
    ("bottle", "water bottle"),
    ("carpet", "rug"),
    ("cabinet", "cupboard"),
    ("shelf", "bookshelf", "bookcase", "shelves"),
    ("trolley", "cart"),
    ("microwave", "microwave oven"),
    ("sneakers", "sneaker", "trainers"),
    ("glasses", "spectacles", "eyeglasses"),
    ("person", "people", "man", "woman"),
    ("bathtub", "bath", "tub"),
    ("faucet", "tap"),
    ("pillow", "cushion"),
    ("remote", "remote control"),
    ("clock", "wall clock"),
    ("lamp", "light"),
    ("stool", "barstool"),
    ("dining table", "kitchen table"),
    ("whiteboard", "white board"),
    ("nightstand", "bedside table", "night table", "bedside cabinet"),
    ("toiletry", "toiletry bottle", "toiletries"),
)

_IRREGULAR = {"people": "person", "knives": "knife", "shelves": "shelf", "leaves": "leaf", "mice": "mouse",
              "feet": "foot", "children": "child", "men": "man", "women": "woman", "teeth": "tooth",
              "boxes": "box", "dishes": "dish", "scissors": "scissors", "tvs": "tv",
              "pants": "pants", "shorts": "shorts", "sneakers": "sneakers", "slippers": "slippers",
              "tongs": "tongs", "headphones": "headphones", "series": "series", "species": "species"}
_NO_SINGULAR_SUFFIX = ("ss", "us", "is", "ics")
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Lower-case word tokens ("o'clock" stays one token; other punctuation is dropped)."""
    return _WORD_RE.findall(text.lower().replace("-", " ").replace("_", " "))


def singular(word: str) -> str:
    """English singular of one word by rule (good enough for object nouns)."""
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if len(w) <= 3 or w.endswith(_NO_SINGULAR_SUFFIX):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "sses", "zes", "oes")):
        return w[:-2]
    if w.endswith("s"):
        return w[:-1]
    return w


def plural(word: str) -> str:
    """English plural of one singular word by rule (the inverse of ``singular`` for object nouns)."""
    w = word.lower()
    irregular = {s: p for p, s in _IRREGULAR.items() if p != s}
    if w in irregular:
        return irregular[w]
    if singular(w) != w or w in _IRREGULAR:  # already plural ("chairs", "scissors")
        return w
    if w.endswith("y") and len(w) > 1 and w[-2] not in "aeiou":
        return w[:-1] + "ies"
    if w.endswith(("s", "x", "z", "ch", "sh")):
        return w + "es"
    return w + "s"


def counted(n: int, phrase: str) -> str:
    """'1 chair', '2 chairs', '0 chairs': the phrase's last word in the number ``n`` asks for."""
    ws = phrase.split()
    if not ws:
        return str(n)
    ws[-1] = singular(ws[-1]) if n == 1 else plural(ws[-1])
    return f"{n} {' '.join(ws)}"


def normalise(phrase: str) -> str:
    """Key of a phrase: lower-case words, last word singular ("Dining Tables" -> "dining table")."""
    ws = words(phrase)
    if not ws:
        return ""
    ws[-1] = singular(ws[-1])
    return " ".join(ws)


def _synonym_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        canonical = normalise(group[0])
        for alias in group:
            index.setdefault(normalise(alias), canonical)
    return index


_SYNONYMS = _synonym_index()


def canonical(phrase: str) -> str:
    """Synonym-resolved key ("sofas" -> "couch", "lift" -> "elevator")."""
    key = normalise(phrase)
    return _SYNONYMS.get(key, key)


def label_keys(label: str) -> set[str]:
    """All keys a memory label answers to: "Cabinet/shelf" -> {"cabinet", "shelf", "cabinet shelf"}."""
    parts = [p for p in re.split(r"[/,|]", label) if p.strip()]
    keys = {canonical(p) for p in parts} | {normalise(p) for p in parts}
    keys.add(canonical(label))
    keys.discard("")
    return keys


@lru_cache(maxsize=1)
def objects365_labels() -> tuple[str, ...]:
    """The Objects365 class names shipped in directme/data/objects365.txt (empty if absent)."""
    try:
        text = resources.files("directme").joinpath("data/objects365.txt").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return ()
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


@lru_cache(maxsize=1)
def category_keys() -> frozenset[str]:
    """Every key of the Objects365 categories ("surfboard", "whiteboard", "couch", ...)."""
    return frozenset(k for label in objects365_labels() for k in label_keys(label))


class Vocabulary:
    """Phrase -> key lookup over labels, synonyms and place words, longest match first."""

    def __init__(self, labels: Iterable[str] = (), include_objects365: bool = True) -> None:
        self.key_to_labels: dict[str, set[str]] = {}
        all_labels = list(labels) + (list(objects365_labels()) if include_objects365 else [])
        for label in all_labels:
            for key in label_keys(label):
                self.key_to_labels.setdefault(key, set()).add(label)
        for alias, key in _SYNONYMS.items():
            self.key_to_labels.setdefault(key, set())
            self.key_to_labels.setdefault(alias, set())
        self.places = {normalise(p) for p in PLACE_WORDS}
        self.max_len = max((len(k.split()) for k in self.key_to_labels), default=1)
        self._lock = threading.Lock()  # questions in several threads add labels at once

    def __getstate__(self) -> dict:  # copy / pickle without the lock
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def add_labels(self, labels: Iterable[str]) -> None:
        labels = list(labels)
        with self._lock:
            for label in labels:
                for key in label_keys(label):
                    self.key_to_labels.setdefault(key, set()).add(label)
                    self.max_len = max(self.max_len, len(key.split()))

    def lookup(self, tokens: list[str], start: int) -> Optional[tuple[str, int]]:
        """Longest object phrase starting at ``tokens[start]``: (canonical key, n_tokens) or None."""
        for n in range(min(self.max_len, len(tokens) - start), 0, -1):
            phrase = " ".join(tokens[start:start + n])
            key = normalise(phrase)
            if key in self.key_to_labels and key not in _STOP_KEYS:
                return _SYNONYMS.get(key, key), n
        return None

    def place_at(self, tokens: list[str], start: int) -> Optional[tuple[str, int]]:
        """Longest place word starting at ``tokens[start]``."""
        for n in range(min(3, len(tokens) - start), 0, -1):
            key = normalise(" ".join(tokens[start:start + n]))
            if key in self.places:
                return key, n
        if len(tokens) - start >= 2 and tokens[start + 1] in ("room", "rooms") and tokens[start].isalpha() \
                and tokens[start] not in NOT_ROOM_NAMES and not self.lookup(tokens, start):
            return normalise(" ".join(tokens[start:start + 2])), 2
        return None


# Words that are labels in Objects365 but in questions are almost always something else.
_STOP_KEYS = {"it", "me", "i", "you", "side", "way", "path", "time", "left", "right", "front", "back", "now",
              "place", "room", "one", "thing", "object", "item", "o'clock", "clock direction", "direction"}
