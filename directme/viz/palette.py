"""Class colours: a qualitative palette (matplotlib's tab20, then tab20b) handed out in the sorted order
of the classes present, so every class present gets its own colour (up to ``len(QUALITATIVE)`` classes;
beyond that colours repeat). The same palette gives rerun's class ids (``class_id``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

# tab20's darker half, tab20b's darkest, tab20's lighter half, then more of tab20b, as uint8 RGB (the most
# distinct first). Greys (gone objects, the trajectory) and
# reds (the answer's arrows) are left out: they mean something else in the pictures.
QUALITATIVE = np.array([
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (148, 103, 189), (140, 86, 75), (227, 119, 194),
    (188, 189, 34), (23, 190, 207),
    (57, 59, 121), (99, 121, 57), (140, 109, 49), (123, 65, 115),
    (174, 199, 232), (255, 187, 120), (152, 223, 138), (197, 176, 213), (196, 156, 148), (247, 182, 210),
    (219, 219, 141), (158, 218, 229),
    (82, 84, 163), (140, 162, 82), (189, 158, 57), (165, 81, 148), (107, 110, 207), (231, 186, 82),
], dtype=np.uint8)
UNKNOWN_RGB = np.array((110, 110, 110), dtype=np.uint8)  # a label the palette was not built with


def class_key(label: str) -> str:
    """The class a label belongs to (case and surrounding space ignored)."""
    return " ".join(str(label).split()).lower()


@dataclass(frozen=True)
class ClassPalette:
    """Colours and 1-based class ids for a fixed set of classes (``classes``: sorted class keys)."""

    classes: tuple[str, ...] = ()

    @staticmethod
    def of(labels: Iterable[str]) -> "ClassPalette":
        """The palette of the classes among ``labels`` (duplicates and case ignored)."""
        return ClassPalette(tuple(sorted({class_key(lb) for lb in labels if str(lb).strip()})))

    def with_labels(self, labels: Iterable[str]) -> "ClassPalette":
        """This palette extended by new classes, appended in sorted order (old ids and colours kept)."""
        new = sorted({class_key(lb) for lb in labels if str(lb).strip()} - set(self.classes))
        return self if not new else ClassPalette(self.classes + tuple(new))

    def class_id(self, label: str) -> int:
        """1-based id of the label's class (0: not in the palette)."""
        try:
            return self.classes.index(class_key(label)) + 1
        except ValueError:
            return 0

    def color(self, label: str) -> np.ndarray:
        """uint8 RGB of the label's class (grey for a class the palette does not know)."""
        i = self.class_id(label)
        return QUALITATIVE[(i - 1) % len(QUALITATIVE)] if i else UNKNOWN_RGB

    def colors(self) -> dict[str, tuple[int, int, int]]:
        """Class key -> RGB, in palette order (written to the report's index.json)."""
        return {c: tuple(int(v) for v in self.color(c)) for c in self.classes}
