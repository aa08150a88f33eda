"""The fleet's churn events (``_core.churn_events``) against an independent Python model.

The model below re-implements SplitMix64 from its published definition (Steele, Lea and Flood,
OOPSLA 2014; Vigna's ``splitmix64.c``), the unbiased draw from ``0..n`` and the replay's event
rules (docs/fleet.md, Churn replay), and must produce the same events for random groups, seeds
and round counts. The replays' moves are compared elsewhere (the core's evaluation against
``oracles.fleet_group.evaluate_group``, which replays these events with ``kassign.assign``).
"""

from __future__ import annotations

import random

import pytest

from kassign import _core

MASK = 2**64 - 1


class SplitMix64:
    def __init__(self, seed: int) -> None:
        self.state = seed & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        # Keep draws below the largest multiple of n that fits in 64 bits.
        cut = (2**64 // n) * n
        while True:
            x = self.next()
            if x < cut:
                return x % n


def model_events(ids: list[str], rounds: int, seed: int) -> list[tuple[str, str, str | None]]:
    rng = SplitMix64(seed)
    current = {i: i for i in ids}  # member id -> the snapshot member whose profile it has
    departed: list[str] = []
    out: list[tuple[str, str, str | None]] = []
    for r in range(rounds):
        if ((r % 2 == 0 and len(current) > 1) or not departed) and len(current) > 1:
            gone = sorted(current)[rng.below(len(current))]
            departed.append(current.pop(gone))
            out.append(("leave", gone, None))
        else:
            like = departed.pop() if departed else current[sorted(current)[rng.below(len(current))]]
            current[f"kassign-churn-{r}"] = like
            out.append(("join", f"kassign-churn-{r}", like))
    return out


def test_splitmix64_reference_outputs() -> None:
    g = SplitMix64(1234567)
    assert [g.next() for _ in range(3)] == [6457827717110365317, 3203168211198807973, 9817491932198370423]


@pytest.mark.parametrize("seed", range(200))
def test_events_equal_the_model(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 12)
    ids = [f"{rng.choice('abkz')}-{rng.randint(0, 10**6)}-{i}" for i in range(n)]
    if rng.random() < 0.2:
        ids.append("kassign-churn-1")  # a member id the replay's joiners use
    rounds = rng.randint(0, 12)
    group_seed = rng.choice([0, 1, rng.randrange(2**32), 2**64 - 1])
    assert _core.churn_events(ids, rounds, group_seed) == model_events(ids, rounds, group_seed)


def test_events_depend_on_the_seed() -> None:
    ids = [f"m{i:02d}" for i in range(40)]
    seen = {tuple(_core.churn_events(ids, 8, s)) for s in range(20)}
    assert len(seen) > 10


def test_duplicate_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="more than once"):
        _core.churn_events(["a", "b", "a"], 2, 0)
