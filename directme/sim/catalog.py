"""What the synthetic apartment is made of: room types, the object catalogue (Objects365
labels with plausible sizes and placements), spoken names used in questions and the
similarity groups used by the oracle's label confusion."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

ROOM_TYPES = ("kitchen", "living room", "bedroom", "bathroom", "office", "dining room", "laundry room")
CORRIDOR = "corridor"

# placements: "wall" = furniture standing on the floor against a wall; "floor" = small thing on the
# floor near a wall; "surface" = on top of a furniture piece that has ``surface=True``;
# "hang" = mounted on a wall at eye height.


@dataclass(frozen=True)
class ObjectKind:
    """One Objects365 class as the simulator builds it: box size (x along the wall, y depth, z height)."""

    label: str
    size_m: tuple[float, float, float]
    placement: str
    surface: bool = False  # other objects may be put on its top
    movable: bool = False  # the wearer may pick it up


_K = ObjectKind
CATALOG = {k.label: k for k in (
    _K("Refrigerator", (0.75, 0.7, 1.8), "wall"),
    _K("Cabinet/shelf", (1.2, 0.5, 0.9), "wall", surface=True),
    _K("Gas stove", (0.6, 0.6, 0.9), "wall"),
    _K("Dining Table", (1.4, 0.8, 0.75), "wall", surface=True),
    _K("Desk", (1.2, 0.6, 0.75), "wall", surface=True),
    _K("Coffee Table", (1.0, 0.55, 0.45), "wall", surface=True),
    _K("Side Table", (0.5, 0.45, 0.6), "wall", surface=True),
    _K("Nightstand", (0.45, 0.4, 0.55), "wall", surface=True),
    _K("Couch", (2.0, 0.9, 0.85), "wall"),
    _K("Bed", (2.0, 0.95, 0.5), "wall"),
    _K("Chair", (0.5, 0.5, 0.9), "wall"),
    _K("Stool", (0.4, 0.4, 0.5), "wall"),
    _K("Toilet", (0.45, 0.65, 0.75), "wall"),
    _K("Sink", (0.6, 0.45, 0.85), "wall"),
    _K("Bathtub", (1.6, 0.75, 0.55), "wall"),
    _K("Washing Machine/Drying Machine", (0.6, 0.6, 0.85), "wall", surface=True),
    _K("Printer", (0.45, 0.4, 0.3), "surface"),
    _K("Monitor/TV", (0.9, 0.12, 0.55), "surface"),
    _K("Microwave", (0.5, 0.38, 0.3), "surface"),
    _K("Toaster", (0.3, 0.2, 0.2), "surface"),
    _K("Kettle", (0.22, 0.18, 0.25), "surface", movable=True),
    _K("Cup", (0.12, 0.12, 0.14), "surface", movable=True),
    _K("Bottle", (0.12, 0.12, 0.3), "surface", movable=True),
    _K("Wine Glass", (0.12, 0.12, 0.2), "surface", movable=True),
    _K("Bowl/Basin", (0.22, 0.22, 0.1), "surface", movable=True),
    _K("Plate", (0.26, 0.26, 0.05), "surface", movable=True),
    _K("Pot", (0.3, 0.3, 0.2), "surface", movable=True),
    _K("Apple", (0.12, 0.12, 0.12), "surface", movable=True),
    _K("Vase", (0.16, 0.16, 0.32), "surface", movable=True),
    _K("Book", (0.24, 0.18, 0.06), "surface", movable=True),
    _K("Laptop", (0.34, 0.24, 0.04), "surface", movable=True),
    _K("Keyboard", (0.44, 0.15, 0.04), "surface"),
    _K("Lamp", (0.3, 0.3, 0.45), "surface"),
    _K("Toiletry", (0.12, 0.12, 0.22), "surface", movable=True),
    _K("Towel", (0.4, 0.3, 0.12), "surface", movable=True),
    _K("Storage box", (0.45, 0.35, 0.3), "floor", movable=True),
    _K("Basket", (0.45, 0.35, 0.3), "floor", movable=True),
    _K("Backpack", (0.35, 0.25, 0.45), "floor", movable=True),
    _K("Trash bin Can", (0.35, 0.35, 0.5), "floor"),
    _K("Potted Plant", (0.4, 0.4, 0.9), "floor"),
    _K("Barrel/bucket", (0.32, 0.32, 0.4), "floor", movable=True),
    _K("Umbrella", (0.15, 0.15, 0.9), "floor", movable=True),
    _K("Picture/Frame", (0.6, 0.04, 0.45), "hang"),
    _K("Mirror", (0.6, 0.04, 0.8), "hang"),
    _K("Clock", (0.35, 0.05, 0.35), "hang"),
    _K("Blackboard/Whiteboard", (1.2, 0.04, 0.8), "hang"),
)}

# Per room type: (label, min count, max count). Furniture first; surface objects go on any surface.
ROOM_CONTENTS = {
    "kitchen": (("Refrigerator", 1, 1), ("Cabinet/shelf", 1, 2), ("Gas stove", 1, 1), ("Microwave", 1, 1),
                ("Kettle", 1, 1), ("Toaster", 0, 1), ("Cup", 1, 3), ("Bottle", 1, 3), ("Bowl/Basin", 1, 2),
                ("Pot", 0, 1), ("Apple", 1, 3), ("Trash bin Can", 1, 1), ("Clock", 0, 1)),
    "living room": (("Couch", 1, 1), ("Coffee Table", 1, 1), ("Side Table", 1, 2), ("Monitor/TV", 1, 1),
                    ("Potted Plant", 1, 2), ("Lamp", 0, 1), ("Book", 1, 2), ("Cup", 0, 2), ("Vase", 0, 1),
                    ("Picture/Frame", 1, 2), ("Basket", 0, 1)),
    "bedroom": (("Bed", 1, 1), ("Nightstand", 1, 2), ("Cabinet/shelf", 1, 1), ("Lamp", 1, 1), ("Book", 1, 2),
                ("Backpack", 0, 1), ("Mirror", 0, 1), ("Clock", 0, 1), ("Laptop", 0, 1)),
    "bathroom": (("Toilet", 1, 1), ("Sink", 1, 1), ("Bathtub", 0, 1), ("Cabinet/shelf", 1, 1),
                 ("Towel", 1, 2), ("Toiletry", 1, 3), ("Mirror", 1, 1), ("Trash bin Can", 0, 1)),
    "office": (("Desk", 1, 2), ("Chair", 1, 2), ("Monitor/TV", 1, 1), ("Keyboard", 1, 1), ("Laptop", 0, 1),
               ("Printer", 0, 1), ("Cabinet/shelf", 1, 1), ("Book", 1, 3), ("Cup", 0, 1),
               ("Storage box", 1, 2), ("Potted Plant", 0, 1), ("Blackboard/Whiteboard", 0, 1)),
    "dining room": (("Dining Table", 1, 1), ("Chair", 2, 4), ("Cabinet/shelf", 1, 1), ("Plate", 1, 3),
                    ("Wine Glass", 1, 2), ("Cup", 0, 2), ("Vase", 0, 1), ("Bottle", 0, 1),
                    ("Picture/Frame", 0, 1), ("Apple", 0, 2)),
    "laundry room": (("Washing Machine/Drying Machine", 1, 2), ("Cabinet/shelf", 1, 1), ("Basket", 1, 2),
                     ("Towel", 1, 2), ("Barrel/bucket", 1, 1), ("Storage box", 0, 1)),
    CORRIDOR: (("Potted Plant", 0, 1), ("Umbrella", 0, 1), ("Picture/Frame", 1, 2)),
}

# Objects that may appear ("add" events) during an episode, by placement.
ADDABLE = ("Cup", "Bottle", "Book", "Apple", "Bowl/Basin", "Backpack", "Storage box", "Towel", "Plate")

# Spoken names for questions/options (singular, plural); others: label lower-cased + "s".
SPOKEN = {
    "Cabinet/shelf": ("shelf", "shelves"), "Bowl/Basin": ("bowl", "bowls"),
    "Trash bin Can": ("trash can", "trash cans"), "Monitor/TV": ("TV", "TVs"), "Couch": ("sofa", "sofas"),
    "Picture/Frame": ("picture", "pictures"), "Barrel/bucket": ("bucket", "buckets"),
    "Washing Machine/Drying Machine": ("washing machine", "washing machines"),
    "Blackboard/Whiteboard": ("whiteboard", "whiteboards"), "Storage box": ("storage box", "storage boxes"),
    "Wine Glass": ("wine glass", "wine glasses"), "Toiletry": ("toiletry bottle", "toiletry bottles"),
    "Gas stove": ("stove", "stoves"), "Bench": ("bench", "benches"), "Dining Table": ("dining table", "dining tables"),
}

# Label confusion of the oracle's `realistic` preset happens inside these groups.
SIMILARITY_GROUPS = (
    ("Cup", "Wine Glass", "Bottle", "Jug", "Flask"),
    ("Bowl/Basin", "Plate", "Pot"),
    ("Chair", "Stool", "Bench"),
    ("Couch", "Bed"),
    ("Desk", "Dining Table", "Coffee Table", "Side Table", "Nightstand"),
    ("Monitor/TV", "Laptop", "Tablet"),
    ("Keyboard", "Printer", "Computer Box"),
    ("Backpack", "Handbag/Satchel", "Luggage", "Briefcase"),
    ("Storage box", "Basket", "Barrel/bucket", "Trash bin Can"),
    ("Microwave", "Oven", "Toaster", "Rice Cooker", "Coffee Machine"),
    ("Kettle", "Tea pot", "Blender"),
    ("Refrigerator", "Washing Machine/Drying Machine", "Dishwasher", "Cabinet/shelf"),
    ("Gas stove", "Induction Cooker", "Oven"),
    ("Apple", "Orange/Tangerine", "Peach", "Pear"),
    ("Toilet", "Sink", "Bathtub", "Urinal"),
    ("Towel", "Pillow", "Napkin"),
    ("Picture/Frame", "Mirror", "Blackboard/Whiteboard", "Clock"),
    ("Potted Plant", "Flower", "Vase"),
    ("Lamp", "Lantern", "Candle"),
    ("Book", "Folder", "Notepaper"),
    ("Toiletry", "Soap", "Cosmetics", "Cleaning Products"),
    ("Umbrella", "Broom", "Mop"),
)


def spoken(label: str, plural: bool = False) -> str:
    """Natural name of an Objects365 label as used in question text ("Couch" -> "sofa")."""
    if label in SPOKEN:
        return SPOKEN[label][1 if plural else 0]
    name = label.split("/")[0].lower()
    if not plural:
        return name
    return name + ("es" if name.endswith(("s", "x", "ch", "sh")) else "s")


def similar_labels(label: str) -> tuple[str, ...]:
    """Other labels of ``label``'s similarity group (empty if it is in none)."""
    for group in SIMILARITY_GROUPS:
        if label in group:
            return tuple(g for g in group if g != label)
    return ()


@lru_cache(maxsize=1)
def objects365_labels() -> tuple[str, ...]:
    """The 365 Objects365 class names (directme/data/objects365.txt, one per line)."""
    text = resources.files("directme").joinpath("data/objects365.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip())
