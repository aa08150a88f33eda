"""The broker soak test's ownership checker (tests/support/soak_ownership.py) on hand-made callback
histories: it passes clean handovers, excuses only librdkafka's stale first assignment, and fails
every other double ownership."""

from __future__ import annotations

import json
import math
from pathlib import Path

from support.soak_ownership import Ledger, overlaps, spans

P0 = ("t", 0)
P1 = ("t", 1)


def history(*events: tuple[str, str, float, list[tuple[str, int]]]) -> dict:
    """(member, event, time, partitions) -> the Ledger's ownership map, for group ``g``."""
    out: dict = {}
    for member, ev, mono, parts in events:
        out.setdefault(("g", member), []).append((ev, mono, parts))
    return out


def test_revoke_before_the_next_assign_is_a_clean_handover() -> None:
    own = history(("a", "assign", 1.0, [P0, P1]), ("a", "revoke", 5.0, [P1]), ("b", "assign", 5.5, [P1]))
    assert overlaps(own, {}) == ([], [], 0)


def test_a_partition_assigned_while_its_owner_still_holds_it_fails() -> None:
    # a has held P1 since its first assignment and revoked it earlier; it got it again (not its
    # first assignment after joining) and b is given P1 before a revokes it: a real double owner.
    own = history(
        ("a", "assign", 1.0, [P0, P1]),
        ("a", "revoke", 2.0, [P1]),
        ("a", "assign", 3.0, [P1]),
        ("b", "assign", 4.0, [P1]),
        ("a", "revoke", 6.0, [P1]),
    )
    found, excused, _ = overlaps(own, {})
    assert len(found) == 1 and "('g', 't', 1)" in found[0] and excused == []


def test_librdkafkas_stale_first_assignment_is_excused_and_counted() -> None:
    # a's first assignment (both partitions) is reconciled late; the coordinator had already moved
    # P1 to b, which got it first; a revokes P1 when the newer assignment reaches it.
    own = history(
        ("b", "assign", 1.5, [P1]),
        ("a", "assign", 2.0, [P0, P1]),
        ("a", "revoke", 4.0, [P1]),
    )
    found, excused, _ = overlaps(own, {})
    assert found == [] and len(excused) == 1
    # The same with a's stale callback first.
    own = history(("a", "assign", 1.0, [P0, P1]), ("b", "assign", 1.5, [P1]), ("a", "revoke", 4.0, [P1]))
    found, excused, _ = overlaps(own, {})
    assert found == [] and len(excused) == 1


def test_a_first_assignment_never_revoked_is_not_excused() -> None:
    own = history(("a", "assign", 1.0, [P0, P1]), ("b", "assign", 1.5, [P1]))
    found, excused, _ = overlaps(own, {})
    assert len(found) == 1 and excused == []


def test_a_first_assignment_that_outlasts_the_other_owner_is_not_excused() -> None:
    # b (in the group before, so not in its first assignment) gave P1 up while a, in its first
    # assignment, still held it: not the stale shape.
    own = history(
        ("b", "assign", 0.5, []),
        ("a", "assign", 1.0, [P0, P1]),
        ("b", "assign", 1.5, [P1]),
        ("b", "revoke", 2.0, [P1]),
        ("a", "revoke", 4.0, [P1]),
    )
    found, excused, _ = overlaps(own, {})
    assert len(found) == 1 and excused == []


def test_the_first_assignment_after_a_lost_callback_is_again_a_first_after_joining() -> None:
    own = history(
        ("a", "assign", 1.0, [P0]),
        ("a", "lost", 2.0, [P0]),
        ("b", "assign", 2.5, [P1]),
        ("a", "assign", 3.0, [P0, P1]),
        ("a", "revoke", 4.0, [P1]),
    )
    found, excused, unjudged = overlaps(own, {})
    assert found == [] and len(excused) == 1 and unjudged == 1
    by_partition, _ = spans(own, {})
    assert [s.first_after_join for s in by_partition[("g", "t", 0)]] == [True]


def test_a_killed_member_owns_until_its_kill() -> None:
    own = history(("a", "assign", 1.0, [P0, P1]), ("a", "revoke", 2.0, [P1]), ("b", "assign", 8.0, [P0]))
    assert overlaps(own, {("g", "a"): 7.0})[0] == []
    assert len(overlaps(own, {("g", "a"): 9.0})[0]) == 1
    assert len(overlaps(own, {})[0]) == 1  # still running: owns to the end


def test_ledger_reads_complete_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    lines = [
        {"ev": "assign", "mono": 1.0, "g": "g", "m": "a", "p": [["t", 0]]},
        {"ev": "records", "mono": 1.1, "g": "g", "m": "a", "v": [3, 4]},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines) + '{"ev": "clos')
    ledger = Ledger()
    ledger.read([path])
    assert ledger.values == {"g": {3, 4}} and ledger.callbacks["assign"] == 1
    with open(path, "a") as fh:
        fh.write('ing", "mono": 2.0}\n')
    ledger.read([path])
    assert ledger.closing == {path: 2.0}
    assert spans(ledger.ownership, {("g", "a"): ledger.closing[path]})[0][("g", "t", 0)][0].end == 2.0
    assert spans(ledger.ownership, {})[0][("g", "t", 0)][0].end == math.inf
