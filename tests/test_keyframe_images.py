"""Keyframe images held unencoded (memory/keyframes.py ImageStore): the same JPEG bytes as an encode at once."""
import pickle

import numpy as np

from directme.memory.keyframes import ImageStore


def _frames(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, (48, 64, 3), dtype=np.uint8) for _ in range(n)]


def test_held_frames_encode_to_the_bytes_of_an_encode_at_once():
    frames = _frames(6)
    eager, lazy = ImageStore(32, 80, pending_bytes=0), ImageStore(32, 80, pending_bytes=1 << 20)
    for store in (eager, lazy):
        for i, rgb in enumerate(frames):
            store.acquire(i, rgb)
        store.acquire(2, frames[2])
        store.release(1)  # dropped before it was ever encoded
        store.release(2)  # still referred to once
    assert not eager.pending and set(lazy.pending) == {0, 2, 3, 4, 5}
    frames[3][:] = 0  # the caller reuses its buffer: the held copy is unchanged
    assert np.array_equal(lazy.get(3), eager.get(3)) and 3 not in lazy.pending
    assert lazy.get(1) is None and lazy.refs == eager.refs
    copied = pickle.loads(pickle.dumps(lazy))
    assert lazy.images == eager.images and copied.images == eager.images  # reading the dict encodes the rest
    assert not lazy.pending and sorted(eager.images) == [0, 2, 3, 4, 5]


def test_held_frames_stay_within_the_budget_oldest_encoded_first():
    frames = _frames(5)
    store = ImageStore(32, 80, pending_bytes=2 * frames[0].nbytes)
    for i, rgb in enumerate(frames):
        store.acquire(i, rgb)
    assert list(store.pending) == [3, 4] and store._held == 2 * frames[0].nbytes
    assert sorted(store._images) == [0, 1, 2]
    store.release(4)
    assert list(store.pending) == [3] and store._held == frames[0].nbytes
