"""Everything a user could pick instead of kassign, driven on the same JSON scenarios.

Each contender runs in its own process (``python peers/contenders.py run ...`` for the Python
ones, the Java and Go harnesses for the peers) and speaks one line protocol on stdout::

    {"event": "ready", "setup_s": x}          inputs built (not timed)
    {"event": "warmup"|"sample", "seconds": x, "cpu": y} one call each (wall and process CPU seconds)
    {"event": "done", "median": x, "samples": [...]}

so the driver (:mod:`run_all`) can cap every single call and report "> cap" instead of hanging.
Inputs are built the way each library's own group leader receives them and are not timed:

* ``kassign``: :func:`kassign.assign` end to end (validation, conversion, Rust, result objects).
* ``kassign-owners``: ``kassign.assign_owners`` end to end (owner arrays, no object per partition).
* ``kassign-core``: only the extension call ``kassign._core.assign`` on ready ``Member`` objects.
* ``kassign-wire``: a leader's whole job on bytes, :func:`kassign.protocol.assign_wire`: every
  member's subscription bytes (as kassign's members send them, history included) in, every
  member's assignment bytes out. The counterpart of the franz-go and Java peer calls.
* ``kassign-protocol``: the same job through Python objects: a :class:`kassign.Member` per member
  (read from the bytes with the leader's history rule, ``kassign._core.members_from_wire``),
  :func:`kassign.assign`, :func:`kassign.protocol.encode_assignment` per member.
* ``kassign-kafka-python`` / ``kassign-aiokafka``: the adapter class's ``assign(cluster, members)``
  on member metadata produced by each member's own adapter instance, encoded to bytes and decoded
  by the library as its coordinator does; timed up to the SyncGroup bytes the leader sends (the
  classes return them; the client encodes anything else).
* ``kassign-reference``: :func:`kassign_reference.assign` (pure Python, at the repository root).
* ``kafka-python`` / ``aiokafka``: their built-in assignors, inputs produced the same way, timed
  up to the same bytes (their ``assign`` and the client's ``encode()`` of each assignment).
* ``java`` / ``franz-go``: see ``peers``.

This module also holds the quality metrics reported beside the times.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

PEERS = Path(__file__).resolve().parent
REPO = PEERS.parent
JAVA_DIR = PEERS / "java"
JAVA_JAR = JAVA_DIR / "target" / "kassign-java-harness.jar"
GO_DIR = PEERS / "go"
GO_BIN = GO_DIR / "kassign-go-harness"

STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")
#: KIP-848 broker-side assignors (issue 16): kassign's server-uniform / server-range against the
#: broker's own UniformAssignor / RangeAssignor (kafka-group-coordinator, peers/java
#: ServerBench); only these contenders have them.
SERVER_STRATEGIES = ("server-uniform", "server-range")
SERVER_CONTENDERS = ("kassign", "kassign-owners", "kassign-core", "java")

Assignment = dict[str, list[tuple[str, int]]]


# --------------------------------------------------------------------------------------------
# Quality
# --------------------------------------------------------------------------------------------


def quality(doc: dict, assignment: Assignment) -> dict[str, Any]:
    """Quality columns of one assignment of the scenario ``doc``.

    * ``valid``: every assigned partition exists, goes to a subscriber, and at most once.
    * ``unassigned``: partitions of subscribed topics nobody got (cooperative withholding).
    * ``spread``: max - min partition count over all members.
    * ``topic_spread``: max over topics of (max - min of that topic's count over its subscribers).
    * ``moves``: partitions owned (validly, uncontested) in the input whose owner changed or
      that were withheld; ``moves_lb``: the lower bound sum(h_i) - kept* of docs/oracles.md (Stickiness)
      (uniform subscriptions only, else None).
    """
    topics: dict[str, int] = doc["topics"]
    members: dict[str, dict] = doc["members"]
    subs = {mid: set(m["topics"]) for mid, m in members.items()}
    owner: dict[tuple[str, int], str] = {}
    valid = True
    for mid, tps in assignment.items():
        if mid not in members:
            valid = False
            continue
        for t, p in tps:
            key = (t, p)
            if t not in subs[mid] or not (0 <= p < topics.get(t, 0)) or key in owner:
                valid = False
            owner[key] = mid
    subscribed = set().union(*subs.values()) if subs else set()
    total = sum(topics.get(t, 0) for t in subscribed)
    counts = [len(assignment.get(mid, ())) for mid in members]
    per_topic: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for mid, tps in assignment.items():
        for t, _ in tps:
            per_topic[t][mid] += 1
    topic_spread = 0
    subscribers: dict[str, list[str]] = defaultdict(list)
    for mid, s in subs.items():
        for t in s:
            subscribers[t].append(mid)
    for t, ms in subscribers.items():
        if topics.get(t, 0) == 0:
            continue
        c = [per_topic[t].get(mid, 0) for mid in ms]
        topic_spread = max(topic_spread, max(c) - min(c))
    # History: valid claims, the highest generation wins, ties invalidate (docs/oracles.md, Ownership).
    claims: dict[tuple[str, int], list[tuple[int, str]]] = defaultdict(list)
    for mid, m in members.items():
        gen = m.get("generation", -1)
        for t, p in m.get("owned", ()):
            if t in subs[mid] and 0 <= p < topics.get(t, 0):
                claims[(t, p)].append((gen, mid))
    prev: dict[tuple[str, int], str] = {}
    for key, cs in claims.items():
        cs.sort(reverse=True)
        if len(cs) == 1 or cs[0][0] > cs[1][0]:
            prev[key] = cs[0][1]
    moves = sum(1 for key, mid in prev.items() if owner.get(key) != mid)
    moves_lb = None
    if len({frozenset(s) for s in subs.values()}) == 1 and members:
        n = len(members)
        q, r = divmod(total, n)
        h = defaultdict(int)
        for mid in prev.values():
            h[mid] += 1
        hs = [h.get(mid, 0) for mid in members]
        kept = sum(min(x, q) for x in hs) + min(r, sum(1 for x in hs if x >= q + 1))
        moves_lb = sum(hs) - kept
    return {
        "valid": valid,
        "unassigned": total - len(owner),
        "spread": (max(counts) - min(counts)) if counts else 0,
        "topic_spread": topic_spread,
        "moves": moves if prev else None,
        "moves_lb": moves_lb if prev else None,
    }


def read_assignment(text: str) -> Assignment:
    return {mid: [(t, p) for t, p in tps] for mid, tps in json.loads(text).items()}


# --------------------------------------------------------------------------------------------
# Python contenders: prepare(doc, strategy) -> (call, to_assignment)
# --------------------------------------------------------------------------------------------


class _Cluster:
    """The part of kafka-python's / aiokafka's ClusterMetadata that assignors read."""

    def __init__(self, topics: dict[str, int]):
        self._topics = dict(topics)

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self._topics)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self._topics.get(topic)
        return None if n is None else set(range(n))

    available_partitions_for_topic = partitions_for_topic

    def brokers(self) -> set:
        return set()

    def broker_metadata(self, broker_id: Any) -> None:
        return None

    def leader_for_partition(self, partition: Any) -> int:
        return 0


def _scenario(doc: dict):
    from kassign.scenario import parse_scenario

    return parse_scenario(doc)


def _pairs(result: dict) -> Assignment:
    return {m: [tuple(tp) for tp in tps] for m, tps in result.items()}


def _prep_kassign_api(api: str, to_assignment: Callable[[Any], Assignment]) -> Callable:
    """The prepare function of a public ``kassign`` entry point with ``assign``'s signature
    (``kassign.assign``, ``kassign.assign_owners``), timed end to end."""

    def prep(doc: dict, strategy: str):
        import kassign

        if strategy not in kassign.STRATEGIES:
            return None
        sc = _scenario(doc)
        fn = getattr(kassign, api)
        racks = sc.partition_racks

        def call():
            return fn(strategy, sc.members, sc.partitions_per_topic, partition_racks=racks)

        return call, to_assignment

    return prep


_prep_kassign = _prep_kassign_api("assign", _pairs)
_prep_kassign_owners = _prep_kassign_api("assign_owners", lambda r: _pairs(r.to_dict()))


def _prep_kassign_core(doc: dict, strategy: str):
    import kassign
    from kassign import _core
    from kassign._inputs import check_partition_racks

    if strategy not in kassign.STRATEGIES or strategy not in set(_core.rust_strategies()):
        return None
    sc = _scenario(doc)
    members = dict(sc.members)
    partitions = dict(sc.partitions_per_topic)
    racks = check_partition_racks(sc.partition_racks) or None
    tp = kassign.TopicPartition

    def call():
        return _core.assign(strategy, members, partitions, racks, tp)

    return call, _pairs


def _wire_subscriptions(doc: dict, strategy: str) -> dict[str, bytes]:
    """Each member's JoinGroup metadata as a kassign member of ``strategy`` sends it (not timed)."""
    from kassign._adapter_common import ConsumerState, encode_member_metadata
    from kassign._types import TopicPartition

    out = {}
    for mid, m in doc["members"].items():
        owned = tuple(TopicPartition(t, p) for t, p in (m.get("owned") or []))
        gen = m.get("generation", -1)
        state = ConsumerState(owned=owned, generation=gen, assigned=bool(owned) or gen >= 0)
        out[mid] = encode_member_metadata(strategy, m["topics"], state, rack=m.get("rack"))
    return out


def _decode_assignments(r: dict) -> dict:
    from kassign import protocol

    return {mid: [tuple(tp) for tp in protocol.decode_assignment(b).partitions] for mid, b in r.items()}


def _wire_inputs(doc: dict, strategy: str):
    """What a kassign leader holds before its assignment (not timed): every member's subscription
    bytes, group instance ids, partition counts and partition racks; None without ``strategy``."""
    import kassign

    if strategy not in kassign.STRATEGIES:
        return None
    sc = _scenario(doc)
    instances = {mid: m.get("group_instance_id") for mid, m in doc["members"].items()}
    return _wire_subscriptions(doc, strategy), instances, dict(sc.partitions_per_topic), sc.partition_racks


def _prep_kassign_wire(doc: dict, strategy: str):
    from kassign import protocol

    inputs = _wire_inputs(doc, strategy)
    if inputs is None:
        return None
    subs, instances, counts, racks = inputs
    static = {mid: i for mid, i in instances.items() if i} or None

    def call():
        return protocol.assign_wire(strategy, subs, counts, group_instance_ids=static, partition_racks=racks)

    return call, _decode_assignments


def _prep_kassign_protocol(doc: dict, strategy: str):
    import kassign
    from kassign import protocol

    inputs = _wire_inputs(doc, strategy)
    if inputs is None:
        return None
    subs, instances, counts, racks = inputs

    def call():
        members, _ = kassign._core.members_from_wire(strategy, subs, instances)
        result = kassign.assign(strategy, members, counts, partition_racks=racks)
        return {mid: protocol.encode_assignment(tps) for mid, tps in result.items()}

    return call, _decode_assignments


def _prep_reference(doc: dict, strategy: str):
    try:
        if str(REPO) not in sys.path:
            sys.path.append(str(REPO))  # kassign_reference/ lives at the repository root, beside benches/
        ref = importlib.import_module("kassign_reference")
    except ImportError:
        return None
    fn = getattr(ref, "assign", None)
    if fn is None:
        return None
    supported = getattr(ref, "STRATEGIES", ("sticky", "cooperative-sticky"))
    if strategy not in supported:
        return None
    sc = _scenario(doc)

    def call():
        return fn(strategy, sc.members, sc.partitions_per_topic, partition_racks=sc.partition_racks)

    return call, _pairs


def _assignor_name(cls: type) -> str | None:
    """An assignor's protocol name: a class attribute, or a property read from an instance."""
    name = getattr(cls, "name", None)
    if isinstance(name, str):
        return name
    try:
        name = cls().name
    except Exception:
        return None
    return name if isinstance(name, str) else None


def _assignor_classes(module_name: str, base: type) -> dict[str, type]:
    """Protocol name -> the concrete subclasses of ``base`` (a client's abstract assignor) that
    ``module_name`` defines or imports; {} when the module is absent."""
    try:
        mod = importlib.import_module(module_name)
    except ImportError:
        return {}
    out: dict[str, type] = {}
    for obj in vars(mod).values():
        if isinstance(obj, type) and issubclass(obj, base) and not getattr(obj, "__abstractmethods__", None):
            name = _assignor_name(obj)
            if isinstance(name, str) and name not in out:
                out[name] = obj
    return out


def _kafka_python_classes(module_name: str) -> dict[str, type]:
    from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor

    return _assignor_classes(module_name, AbstractPartitionAssignor)


def _aiokafka_classes(module_name: str) -> dict[str, type]:
    from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor

    return _assignor_classes(module_name, AbstractPartitionAssignor)


#: The modules of each client's own assignors.
KAFKA_PYTHON_BUILTINS = (
    "kafka.coordinator.assignors.range",
    "kafka.coordinator.assignors.roundrobin",
    "kafka.coordinator.assignors.sticky.sticky_assignor",
    "kafka.coordinator.assignors.cooperative_sticky",
)
AIOKAFKA_BUILTINS = (
    "aiokafka.coordinator.assignors.range",
    "aiokafka.coordinator.assignors.roundrobin",
    "aiokafka.coordinator.assignors.sticky.sticky_assignor",
)


def kafka_python_metadata(cls: type, doc: dict) -> list[tuple[str, str | None, bytes]]:
    """(member id, group instance id, JoinGroup metadata bytes) of every member of ``doc``, each
    written by its own instance of ``cls`` after its history (owned, generation) was given to it
    through ``on_assignment`` (not timed)."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    out = []
    for mid, m in doc["members"].items():
        inst = cls()
        owned = m.get("owned") or []
        gen = m.get("generation", -1)
        if owned or gen >= 0:
            by_topic: dict[str, list[int]] = defaultdict(list)
            for t, p in owned:
                by_topic[t].append(p)
            inst.on_assignment(
                ConsumerProtocolAssignment(version=0, assigned_partitions=list(by_topic.items()), user_data=b""), gen
            )
        md = inst.metadata(set(m["topics"]))
        raw = md if isinstance(md, (bytes, bytearray)) else md.encode()
        out.append((mid, m.get("group_instance_id"), bytes(raw)))
    return out


def kafka_python_decode(raws: list[tuple[str, str | None, bytes]]) -> list[Any]:
    """What kafka-python's coordinator hands its assignor: ``JoinGroupResponseMember``s, each
    metadata decoded with ``ConsumerProtocolSubscription.decode`` (its ``_perform_assignment``)."""
    from kafka.protocol.consumer.group import JoinGroupResponse
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    member = JoinGroupResponse.JoinGroupResponseMember
    return [
        member(member_id=mid, group_instance_id=inst, metadata=ConsumerProtocolSubscription.decode(raw))
        for mid, inst, raw in raws
    ]


def aiokafka_metadata(cls: type, doc: dict) -> dict[str, bytes]:
    """Member id -> JoinGroup metadata bytes of every member of ``doc``, each written by its own
    instance of ``cls`` (or the class) after its history was given to it (not timed)."""
    from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment
    from aiokafka.structs import TopicPartition

    out = {}
    for mid, m in doc["members"].items():
        owned = m.get("owned") or []
        gen = m.get("generation", -1)
        inst = cls() if _instantiable(cls) else cls
        if hasattr(inst, "_metadata") and (owned or gen >= 0):
            # aiokafka's sticky assignor: what metadata() sends after on_assignment() and
            # on_generation_assignment() (its state lives on the class, so call _metadata directly).
            md = inst._metadata(m["topics"], [TopicPartition(t, p) for t, p in owned], gen)
        else:
            if owned and hasattr(inst, "on_assignment"):
                by_topic: dict[str, list[int]] = defaultdict(list)
                for t, p in owned:
                    by_topic[t].append(p)
                try:
                    inst.on_assignment(ConsumerProtocolMemberAssignment(0, list(by_topic.items()), b""))
                    if hasattr(inst, "on_generation_assignment"):
                        inst.on_generation_assignment(gen)
                except TypeError:
                    pass
            md = inst.metadata(m["topics"])
        raw = md if isinstance(md, (bytes, bytearray)) else md.encode()
        out[mid] = bytes(raw)
    return out


def aiokafka_decode(raws: dict[str, bytes]) -> dict[str, Any]:
    """What aiokafka's coordinator hands its assignor: each metadata decoded with
    ``ConsumerProtocol.METADATA`` (v0)."""
    from aiokafka.coordinator.protocol import ConsumerProtocol

    return {mid: ConsumerProtocol.METADATA.decode(raw) for mid, raw in raws.items()}


def _instantiable(cls: type) -> bool:
    try:
        cls()
        return True
    except TypeError:
        return False


def _kafka_python_assignment(raw: bytes) -> list[tuple[str, int]]:
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    return [(t, p) for t, ps in ConsumerProtocolAssignment.decode(raw).assigned_partitions for p in ps]


def _aiokafka_assignment(raw: bytes) -> list[tuple[str, int]]:
    from aiokafka.coordinator.protocol import ConsumerProtocol

    return [(tp.topic, tp.partition) for tp in ConsumerProtocol.ASSIGNMENT.decode(raw).partitions()]


#: client -> (assignor classes of a module, member metadata, the coordinator's decode, one
#: assignment's bytes back to pairs).
_CLIENTS: dict[str, tuple[Callable, Callable, Callable, Callable]] = {
    "kafka-python": (_kafka_python_classes, kafka_python_metadata, kafka_python_decode, _kafka_python_assignment),
    "aiokafka": (_aiokafka_classes, aiokafka_metadata, aiokafka_decode, _aiokafka_assignment),
}


def _prep_client(client: str, modules: tuple[str, ...]) -> Callable:
    """The prepare function of a client's assignor classes (its own, or kassign's drop-in ones):
    each member's metadata written by its own instance and decoded as the client's coordinator
    does (not timed); the timed call is the leader's ``assign(cluster, members)`` up to the
    SyncGroup bytes (both clients encode what is not bytes already)."""
    find, metadata, decode, assignment = _CLIENTS[client]

    def prep(doc: dict, strategy: str):
        classes: dict[str, type] = {}
        for module in modules:
            classes = classes | find(module)
        cls = classes.get(strategy)
        if cls is None:
            return None
        members = decode(metadata(cls, doc))
        cluster = _Cluster(doc["topics"])
        leader = cls() if _instantiable(cls) else cls

        def call():
            return {
                mid: a if isinstance(a, bytes) else a.encode() for mid, a in leader.assign(cluster, members).items()
            }

        return call, lambda r: {mid: assignment(b) for mid, b in r.items()}

    return prep


_prep_kafka_python = _prep_client("kafka-python", KAFKA_PYTHON_BUILTINS)
_prep_kassign_kafka_python = _prep_client("kafka-python", ("kassign.kafka_python",))
_prep_aiokafka = _prep_client("aiokafka", AIOKAFKA_BUILTINS)
_prep_kassign_aiokafka = _prep_client("aiokafka", ("kassign.aiokafka",))


#: name -> (prepare function, one-line description). Order = column order in the report.
PYTHON_CONTENDERS: dict[str, tuple[Callable, str]] = {
    "kassign": (_prep_kassign, "kassign.assign end to end"),
    "kassign-owners": (_prep_kassign_owners, "kassign.assign_owners end to end: the same assignment as owner arrays"),
    "kassign-core": (_prep_kassign_core, "kassign._core.assign on ready Members (Rust + result objects)"),
    "kassign-wire": (_prep_kassign_wire, "kassign.protocol.assign_wire: subscription bytes in, assignment bytes out"),
    "kassign-protocol": (
        _prep_kassign_protocol,
        "the leader route through Python objects: a Member per member, assign, encode_assignment",
    ),
    "kassign-kafka-python": (
        _prep_kassign_kafka_python,
        "kassign's kafka-python adapter, assign(cluster, members) up to the SyncGroup bytes",
    ),
    "kassign-aiokafka": (
        _prep_kassign_aiokafka,
        "kassign's aiokafka adapter, assign(cluster, members) up to the SyncGroup bytes",
    ),
    "kassign-reference": (_prep_reference, "kassign_reference (pure Python)"),
    "kafka-python": (_prep_kafka_python, "kafka-python built-in assignors"),
    "aiokafka": (_prep_aiokafka, "aiokafka built-in assignors"),
}
PEER_CONTENDERS = {
    "java": "Apache Kafka Java assignors (kafka-clients), assign(cluster, groupSubscription)",
    "franz-go": (
        "franz-go kgo balancers, MemberBalancer(members) + Balance(topics) + IntoSyncAssignment() (the SyncGroup bytes)"
    ),
}
ALL_CONTENDERS = tuple(PYTHON_CONTENDERS) + tuple(PEER_CONTENDERS)


def python_supports(contender: str, strategy: str) -> bool:
    """Cheap availability check (no scenario needed).

    False only when the contender says it has no such strategy (its prepare function returns
    None: kassign without that strategy in ``kassign.STRATEGIES``, ``kassign_reference`` not
    importable, a library without that assignor). A prepare function that raises is a real error:
    the cell is run, so the report shows the error instead of hiding it as "n/a".
    """
    try:
        return (
            PYTHON_CONTENDERS[contender][0]({"topics": {"t": 1}, "members": {"m": {"topics": ["t"]}}}, strategy)
            is not None
        )
    except Exception:
        return True


# --------------------------------------------------------------------------------------------
# Peers
# --------------------------------------------------------------------------------------------


def build_java(quiet: bool = True) -> Path:
    """``mvn -q package`` once; rebuilt when a source file is newer than the jar."""
    sources = [JAVA_DIR / "pom.xml", *sorted((JAVA_DIR / "src").rglob("*"))]
    newest = max(p.stat().st_mtime for p in sources if p.is_file())
    if not JAVA_JAR.exists() or JAVA_JAR.stat().st_mtime < newest:
        import subprocess

        subprocess.run(
            ["mvn", "-q", "-B", "package"], cwd=JAVA_DIR, check=True, stdout=subprocess.DEVNULL if quiet else None
        )
    return JAVA_JAR


def build_go() -> Path:
    sources = [GO_DIR / "go.mod", GO_DIR / "go.sum", *sorted(GO_DIR.glob("*.go"))]
    newest = max(p.stat().st_mtime for p in sources if p.is_file())
    if not GO_BIN.exists() or GO_BIN.stat().st_mtime < newest:
        import subprocess

        # -buildvcs=false: the harness lives inside the kassign checkout; no VCS stamping needed.
        subprocess.run(["go", "build", "-buildvcs=false", "-o", str(GO_BIN), "."], cwd=GO_DIR, check=True)
    return GO_BIN


def java_command(java_heap: str = "10g") -> list[str]:
    return ["java", f"-Xmx{java_heap}", "-XX:+UseParallelGC", "-jar", str(JAVA_JAR)]


def peer_command(contender: str, mode: str, strategy: str, scenario: str, extra: list[str] = ()) -> list[str]:
    base = java_command() if contender == "java" else [str(GO_BIN)]
    return base + [mode, "--strategy", strategy, *extra, scenario]


def peer_assign(contender: str, strategy: str, scenario_path: str, timeout: float = 600) -> Assignment:
    """The peer's assignment of a scenario file (differential-testing oracle)."""
    import subprocess

    (build_java if contender == "java" else build_go)()
    out = subprocess.run(
        peer_command(contender, "assign", strategy, scenario_path),
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return read_assignment(out.stdout)


# --------------------------------------------------------------------------------------------
# The child: time one Python contender on one scenario
# --------------------------------------------------------------------------------------------


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def run_child(
    contender: str,
    strategy: str,
    scenario: str,
    repeat: int,
    budget: float,
    warmup: float,
    out: str | None,
    min_time: float = 1.0,
) -> int:
    t0 = time.perf_counter()
    doc = json.loads(Path(scenario).read_text())
    prep = PYTHON_CONTENDERS[contender][0](doc, strategy)
    if prep is None:
        _emit({"event": "unsupported"})
        return 0
    call, convert = prep
    _emit({"event": "ready", "setup_s": time.perf_counter() - t0})
    import gc

    samples: list[float] = []
    result = None
    # Warm-up: at least one call. A first call slower than 1 s also counts as a sample (no JIT
    # here; this keeps slow contenders within the time budget).
    spent_w, n_w = 0.0, 0
    while n_w < 1 or (spent_w < warmup and n_w < 50):
        c = time.process_time()
        s = time.perf_counter()
        result = call()
        d = time.perf_counter() - s
        cpu = time.process_time() - c
        spent_w += d
        n_w += 1
        _emit({"event": "warmup", "seconds": d})
        if d > 1.0:
            samples.append(d)
            _emit({"event": "sample", "seconds": d, "cpu": cpu, "from_warmup": True})
            break
    spent = sum(samples)
    # Every call starts with no garbage pending: gc.collect() before each. The set-up's objects (the
    # inputs, the libraries' modules, what the warm-up cached) are frozen out of the collector's
    # reach first, so that collection walks only what earlier calls left, not the whole heap: a
    # collection of a large heap just before a sub-millisecond call would flush the caches the call
    # reads and make its time a measure of that. The call's own collections still run in it.
    gc.collect()
    gc.freeze()
    # min_time counts the loop's wall time (the gc.collect() before each call included), so short
    # calls of a library with a large heap do not spend minutes collecting garbage between samples.
    # A warm-up call kept as a sample counts too: a call longer than min_time is not run twice for it.
    loop_start = time.perf_counter() - spent
    while (
        not samples
        or (len(samples) < repeat and spent < budget)
        or (time.perf_counter() - loop_start < min_time and len(samples) < 200)
    ):
        result = None
        gc.collect()
        c = time.process_time()
        s = time.perf_counter()
        result = call()
        d = time.perf_counter() - s
        cpu = time.process_time() - c
        spent += d
        samples.append(d)
        _emit({"event": "sample", "seconds": d, "cpu": cpu})
    if out:
        assignment = convert(result)
        Path(out).write_text(json.dumps({m: [[t, p] for t, p in tps] for m, tps in assignment.items()}))
    _emit({"event": "done", "median": statistics.median(samples), "samples": sorted(samples)})
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="time one Python contender (line protocol on stdout)")
    r.add_argument("--contender", required=True, choices=sorted(PYTHON_CONTENDERS))
    r.add_argument("--strategy", required=True)
    r.add_argument("--repeat", type=int, default=5)
    r.add_argument("--budget", type=float, default=20.0)
    r.add_argument("--warmup", type=float, default=0.5)
    r.add_argument("--min-time", type=float, default=1.0, help="sample short calls until this many seconds")
    r.add_argument("--out")
    r.add_argument("scenario")
    a = sub.add_parser("assign", help="print a contender's assignment of a scenario as JSON")
    a.add_argument("--contender", required=True, choices=ALL_CONTENDERS)
    a.add_argument("--strategy", required=True)
    a.add_argument("scenario")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        return run_child(
            args.contender, args.strategy, args.scenario, args.repeat, args.budget, args.warmup, args.out, args.min_time
        )
    if args.contender in PEER_CONTENDERS:
        result = peer_assign(args.contender, args.strategy, args.scenario)
    else:
        doc = json.loads(Path(args.scenario).read_text())
        prep = PYTHON_CONTENDERS[args.contender][0](doc, args.strategy)
        if prep is None:
            print(f"{args.contender} has no {args.strategy!r}", file=sys.stderr)
            return 2
        call, convert = prep
        result = convert(call())
    print(json.dumps({m: [[t, p] for t, p in tps] for m, tps in result.items()}))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
