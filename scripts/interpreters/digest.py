"""The same seeded groups through kassign on any interpreter: a canonical text of every result and
its SHA-256, which must be identical wherever kassign runs (docs/interpreters.md).

Standalone on purpose (the standard library and an installed kassign, nothing else, no file of the
repository): it runs as it is on every interpreter of the matrix, under qemu or wine too.

    python digest.py [--groups N] [--out FILE]

prints ``kassign-digest <sha256> <lines> <kassign version>``; ``--out`` also writes the canonical
text (one line per result), so two runs can be diffed. The seeded inputs come from a small
generator of this file (not the ``random`` module), so every interpreter sees the same groups.

What each group goes through:
  - ``kassign.assign`` with every strategy of ``kassign.STRATEGIES`` (racks and lags included),
    and how many of the results meet the equal plain tuples in a set;
  - the wire path: every member's subscription encoded (``protocol.encode_subscription``), then
    ``protocol.assign_wire`` (bytes in, bytes out) with every strategy;
  - the decoders: ``decode_subscription`` / ``decode_assignment`` / ``decode_sticky_user_data`` /
    ``decode_generation`` / ``decode_priority`` of the encoded bytes, of truncations of them and
    of seeded junk (the result, or the error's type and message).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Any

import kassign
from kassign import Member, protocol

_MASK = (1 << 64) - 1


class Rng:
    """splitmix64: the seeded inputs, the same on every interpreter."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self.next() % n

    def chance(self, percent: int) -> bool:
        return self.below(100) < percent

    def pick(self, items: list[Any]) -> Any:
        return items[self.below(len(items))]

    def subset(self, items: list[Any]) -> list[Any]:
        return [x for x in items if self.chance(50)] or [self.pick(items)]


def group(rng: Rng) -> dict[str, Any]:
    """A seeded group: topics, members with history and racks, replica racks, lags."""
    topics = {f"t{i}": rng.below(24) for i in range(1 + rng.below(4))}
    names = list(topics)
    members = {}
    for i in range(rng.below(7)):
        subscribed = rng.subset(names) + (["gone"] if rng.chance(10) else [])
        owned = [(rng.pick(subscribed), rng.below(26) - 1) for _ in range(rng.below(6))]
        members[f"member-{i:02d}-{rng.below(1000)}"] = {
            "topics": subscribed,
            "owned": owned,
            "generation": rng.pick([-1, 1, 2, 7]),
            "rack": rng.pick([None, "r1", "r2"]),
        }
    racks = None
    if rng.chance(40):
        racks = {(t, p): rng.subset(["r1", "r2", "r3"]) for t, n in topics.items() for p in range(n)}
    lags = {(t, p): rng.below(100_000) for t, n in topics.items() for p in range(n)}
    return {"topics": topics, "members": members, "racks": racks, "lags": lags}


def canonical(value: Any) -> str:
    """One line for a result: JSON with bytes as hex and tuples as lists (key order kept)."""

    def plain(x: Any) -> Any:
        if isinstance(x, (bytes, bytearray, memoryview)):
            return {"hex": bytes(x).hex()}
        if isinstance(x, dict):
            return [[plain(k), plain(v)] for k, v in x.items()]
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        return x

    return json.dumps(plain(value), separators=(",", ":"), ensure_ascii=True)


def met(result: Any, topics: dict[str, int]) -> Any:
    """How many of an assignment's partitions meet the equal plain tuples in a set, and how many
    the plain tuples meet in a set of them (every one, wherever kassign's objects hash as tuples)."""
    if not isinstance(result, dict):
        return None
    plain = {(t, p) for t, n in topics.items() for p in range(n)}
    got = {tp for tps in result.values() for tp in tps}
    return [sum(1 for tp in got if tp in plain), sum(1 for t in plain if t in got)]


def attempt(call: Any, *args: Any, **kwargs: Any) -> Any:
    """The call's result, or its error's type and message (the errors are results too)."""
    try:
        return call(*args, **kwargs)
    except Exception as exc:  # every error is recorded and compared, not hidden
        return {"error": type(exc).__name__, "message": str(exc)}


def decoded(raw: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def subscription() -> Any:
        s = protocol.decode_subscription(raw)
        return [s.version, s.topics, s.user_data, s.owned_partitions, s.generation, s.rack]

    def assignment() -> Any:
        a = protocol.decode_assignment(raw)
        return [a.version, a.partitions, a.user_data]

    out["subscription"] = attempt(subscription)
    out["assignment"] = attempt(assignment)
    out["sticky"] = attempt(lambda: protocol.decode_sticky_user_data(raw))
    out["generation"] = attempt(lambda: protocol.decode_generation(raw))
    out["priority"] = attempt(lambda: protocol.decode_priority(raw))
    return out


def lines(n_groups: int) -> list[str]:
    out = [canonical(["strategies", kassign.STRATEGIES])]
    for seed in range(n_groups):
        rng = Rng(seed)
        g = group(rng)
        members = {mid: Member(m["topics"], m["owned"], m["generation"], m["rack"]) for mid, m in g["members"].items()}
        for strategy in kassign.STRATEGIES:
            kw: dict[str, Any] = {"lags": g["lags"]} if strategy == "lag-aware" else {}
            result = attempt(kassign.assign, strategy, members, g["topics"], partition_racks=g["racks"], **kw)
            out.append(canonical(["assign", seed, strategy, result, met(result, g["topics"])]))
        subscriptions = {}
        for mid, m in g["members"].items():
            user_data = protocol.encode_sticky_user_data(m["owned"], m["generation"]) if rng.chance(50) else None
            version = rng.below(protocol.MAX_VERSION + 1)
            subscriptions[mid] = protocol.encode_subscription(
                m["topics"], user_data, [tp for tp in m["owned"] if tp[1] >= 0], m["generation"], m["rack"], version
            )
        out.append(canonical(["subscriptions", seed, subscriptions]))
        for strategy in kassign.STRATEGIES:
            kw = {"lags": g["lags"]} if strategy == "lag-aware" else {}
            result = attempt(
                protocol.assign_wire, strategy, subscriptions, g["topics"], partition_racks=g["racks"], **kw
            )
            out.append(canonical(["assign_wire", seed, strategy, result]))
            if isinstance(result, dict):
                for mid, raw in result.items():
                    out.append(canonical(["decoded", seed, strategy, mid, decoded(raw)]))
        for mid, raw in subscriptions.items():
            out.append(canonical(["decoded", seed, "subscription", mid, decoded(raw)]))
            cut = rng.below(len(raw) + 1)
            out.append(canonical(["decoded", seed, "truncated", mid, cut, decoded(raw[:cut])]))
        junk = bytes(rng.below(256) for _ in range(rng.below(40)))
        out.append(canonical(["decoded", seed, "junk", junk, decoded(junk)]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=120, help="seeded groups (default 120)")
    parser.add_argument("--out", help="also write the canonical text here")
    args = parser.parse_args(argv)
    text = "".join(line + "\n" for line in lines(args.groups)).encode("ascii")
    if args.out:
        with open(args.out, "wb") as f:
            f.write(text)
    n_lines = text.count(b"\n")
    print(f"kassign-digest {hashlib.sha256(text).hexdigest()} {n_lines} {kassign.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
