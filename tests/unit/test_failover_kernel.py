"""``failover``'s winners from the Rust core (``_core.failover_winners``) against the Python loop
they replaced (``tests/support/failover_oracle.py``), on seeded random groups: priorities equal,
distinct, missing, malformed (too short, too long) and at the int32 bounds; shared and distinct
subscriptions. Then the kernel's argument checks."""

from __future__ import annotations

import random
import struct

import pytest

import kassign
from kassign import Member, _core
from kassign.assignors import failover
from kassign.assignors._greedy import Inputs
from support import failover_oracle as oracle
from support.lag_aware_oracle import owner_lists


def random_user_data(rng: random.Random) -> bytes | None:
    kind = rng.random()
    if kind < 0.15:
        return None
    if kind < 0.25:
        return bytes(rng.randint(0, 255) for _ in range(rng.choice([0, 1, 3, 5, 8])))
    return struct.pack(">i", rng.choice([-(2**31), -1, 0, 1, 2, 3, 10, 2**31 - 1, rng.randint(-(2**31), 2**31 - 1)]))


@pytest.mark.parametrize("seed", range(300))
def test_failover_kernel_equals_python(seed: int) -> None:
    rng = random.Random(seed)
    topics = [f"t{k}" for k in range(rng.randint(1, 8))]
    partitions_per_topic = {t: rng.choice([0, 1, 2, 5, 9]) for t in topics}
    shapes = [rng.sample(topics, rng.randint(1, len(topics))) for _ in range(rng.randint(1, 4))]
    members = {
        f"m{rng.randint(0, 10**6):07d}-{i}": Member(topics=rng.choice(shapes), user_data=random_user_data(rng))
        for i in range(rng.randint(1, 25))
    }
    new = owner_lists(failover.owners_of(Inputs(members, partitions_per_topic)))
    old = oracle.owners_of(Inputs(members, partitions_per_topic))
    assert new == old
    assert list(new) == list(old)


def test_options_still_rejected() -> None:
    members = {"a": Member(["t"])}
    with pytest.raises(TypeError, match="assign: strategy 'failover' takes no options, got mode"):
        kassign.assign("failover", members, {"t": 1}, mode="x")


def test_kernel_argument_checks() -> None:
    with pytest.raises(ValueError):
        _core.failover_winners([None], [(0, 1)])  # member out of range
    with pytest.raises(ValueError):
        _core.failover_winners([None, None], [()])  # an empty eligible set
    with pytest.raises(TypeError):
        _core.failover_winners(["ab"], [(0,)])  # user data is bytes
