"""A realistic, seeded synthetic fleet snapshot (the format of docs/fleet.md).

``kassign synth --groups N --out DIR [--seed S]`` writes ``members.parquet``,
``partitions.parquet``, ``offsets.parquet`` and ``groups.parquet``. Everything is vectorised with
numpy and written with pyarrow directly, so 10,000 groups (about two million member rows) take
seconds.

The shape of the fleet:

* clusters: about sqrt(N)/12 (2 to 8), groups spread over them with Zipf weights; each cluster has
  3, 4 or 6 racks (``<cluster>-az<i>``).
* group sizes: log-normal (median 45 members, heavy tail, capped at 3,000); about 1% of groups are
  empty (committed offsets, no members: state ``Empty``).
* topics per group: geometric (half the groups read one topic, capped at 8). Most topics are the
  group's own; small groups also read shared, popular topics of their cluster (Zipf popularity).
  A topic has a "nice" partition count (1, 3, 6, 12, 24, ...) big enough for its largest consumer
  group at 1-3 partitions per member, except over-provisioned groups (15%) that run more members
  than partitions.
* subscriptions: 15% of multi-topic groups are heterogeneous (each member drops each topic with
  probability 0.35, keeping at least one), as during a rolling deploy of a new subscription.
* membership: 20% of groups use static membership (``group.instance.id``); 75% set ``client.rack``
  (members spread over the racks); 5% carry a failover priority in user data (int32 big-endian).
* history: owned partitions are the previous generation's assignment, computed by
  :func:`kassign.assign` with the group's current strategy (``groups.protocol``: range 55%,
  cooperative-sticky 20%, sticky 15%, roundrobin 10%, drawn among the strategies this build has;
  no rack awareness, as older clients); 30% of groups saw churn since, so some members are new
  (generation -1, nothing owned) and some partitions lost their owner (members that left).
* replicas: replication factor 3 (20%: 2) placed on consecutive racks, as Kafka's rack-aware
  placement does, so partitions are not on every rack.
* offsets: per-partition log volume log-normal per topic; committed offsets trail the end offset by
  a Zipf-skewed lag: inside a group the partition of (shuffled) rank r lags ~ r^-s with s drawn
  in [0, 1.2) per group (from even backlogs to a few hot partitions), times log-normal noise; 30% of
  groups are caught up (lag < 3); 1% of partitions have no committed offset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .snapshot import (
    GROUPS_SCHEMA,
    MEMBERS_SCHEMA,
    OFFSETS_SCHEMA,
    PARTITIONS_SCHEMA,
    write,
)

_NICE_COUNTS = np.array(
    [
        1,
        2,
        3,
        4,
        6,
        8,
        10,
        12,
        16,
        20,
        24,
        30,
        32,
        36,
        48,
        50,
        60,
        64,
        72,
        96,
        100,
        120,
        128,
        150,
        192,
        200,
        256,
        300,
        384,
        400,
        500,
        512,
        600,
        768,
        800,
        1000,
        1024,
        1200,
        1536,
        2000,
        2048,
        3000,
        4096,
        5000,
        6000,
        8192,
        10000,
        12000,
        16384,
        20000,
    ]
)
_WORDS = (
    "orders payments clicks events audit metrics logs users inventory shipments sessions alerts "
    "billing search ads fraud ledger pricing catalog checkout email push sms recs profile geo "
    "telemetry invoices refunds returns reviews ratings carts wishlist loyalty coupons tax cdc"
).split()
_TEAMS = "core data growth infra risk ml web mobile ops fin ads search".split()
_ASSIGNORS = np.array(["range", "cooperative-sticky", "roundrobin", "sticky"])
_ASSIGNOR_WEIGHTS = np.array([0.55, 0.2, 0.1, 0.15])


def _ragged_arange(lengths: np.ndarray) -> np.ndarray:
    """[0..l0-1, 0..l1-1, ...] for the given lengths."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    out: np.ndarray = np.arange(total, dtype=np.int64) - starts
    return out


def _offsets(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=out[1:])
    return out


def _available_assignors(chosen: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Replace current strategies this build does not have by ones it has (same weights)."""
    import kassign

    have = np.isin(_ASSIGNORS, np.array(kassign.STRATEGIES))
    if have.all():
        return chosen
    w = _ASSIGNOR_WEIGHTS * have
    repl = rng.choice(_ASSIGNORS, size=len(chosen), p=w / w.sum())
    return np.where(np.isin(chosen, _ASSIGNORS[have]), chosen, repl)


def _previous_assignment(
    G: int,
    g_assignor: np.ndarray,
    g_size: np.ndarray,
    g_old: np.ndarray,
    g_departed: np.ndarray,
    g_k: np.ndarray,
    e_topic: np.ndarray,
    t_names: list[str],
    t_parts: np.ndarray,
    s_counts: np.ndarray,
    s_topic: np.ndarray,
    member_ids: list[str],
) -> pa.ListArray:
    """Each group's previous generation, assigned by kassign with the group's strategy: the members
    that were already there plus the members that left since (``departed-<i>``, subscribed to all
    the group's topics). Members that joined since own nothing."""
    import kassign
    from kassign import Member

    topics_of = [t_names[t] for t in s_topic.tolist()]
    s_off = _offsets(s_counts).tolist()
    e_off = _offsets(g_k).tolist()
    e_topics = e_topic.tolist()
    parts = t_parts.tolist()
    owned_topic: list[str] = []
    owned_part: list[int] = []
    counts = np.zeros(len(member_ids), dtype=np.int64)
    m_start = 0
    for g in range(G):
        size, old = int(g_size[g]), int(g_old[g])
        if size == 0:
            continue
        gtopics = {t_names[t]: parts[t] for t in e_topics[e_off[g] : e_off[g + 1]]}
        prev = {member_ids[i]: Member(topics_of[s_off[i] : s_off[i + 1]]) for i in range(m_start, m_start + old)}
        for j in range(int(g_departed[g])):
            prev[f"departed-{j}"] = Member(gtopics)
        result = kassign.assign(str(g_assignor[g]), prev, gtopics)
        for i in range(m_start, m_start + old):
            tps = result[member_ids[i]]
            counts[i] = len(tps)
            for tp in tps:
                owned_topic.append(tp[0])
                owned_part.append(tp[1])
        m_start += size
    values = pa.StructArray.from_arrays(
        [pa.array(owned_topic, type=pa.string()), pa.array(owned_part, type=pa.int32())],
        fields=list(MEMBERS_SCHEMA.field("owned_partitions").type.value_type),
    )
    return pa.ListArray.from_arrays(pa.array(_offsets(counts)), values)


def _hex_ids(rng: np.random.Generator, n: int) -> list[str]:
    hi = rng.integers(0, 2**63, size=n, dtype=np.int64)
    lo = rng.integers(0, 2**48, size=n, dtype=np.int64)
    return [f"{a:016x}-{b:012x}" for a, b in zip(hi.tolist(), lo.tolist())]


@dataclass
class SynthStats:
    groups: int
    empty_groups: int
    clusters: int
    members: int
    topics: int
    partitions: int
    offsets: int

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def generate(groups: int, seed: int = 0) -> dict[str, pa.Table]:
    """Generate the four snapshot tables for ``groups`` consumer groups."""
    if groups < 1:
        raise ValueError(f"groups: expected >= 1, got {groups}")
    rng = np.random.default_rng(seed)
    G = groups

    # -- clusters and racks ------------------------------------------------------------------
    n_clusters = int(min(8, max(2, round(np.sqrt(G) / 12)))) if G >= 4 else 1
    cluster_names = [
        f"kafka-{name}"
        for name in ("prod-eu1", "prod-us1", "prod-ap1", "prod-us2", "staging-eu1", "prod-eu2", "analytics", "edge")
    ][:n_clusters]
    cluster_racks = rng.choice(np.array([3, 3, 4, 6]), size=n_clusters)
    cw = 1.0 / np.arange(1, n_clusters + 1)
    g_cluster = rng.choice(n_clusters, size=G, p=cw / cw.sum())

    # -- groups -------------------------------------------------------------------------------
    g_size = np.clip(rng.lognormal(np.log(45), 1.9, size=G), 1, 3000).astype(np.int64)
    g_empty = rng.random(G) < 0.01
    if G >= 3 and not g_empty.any():
        g_empty[rng.integers(G)] = True
    g_size[g_empty] = 0
    g_k = np.minimum(rng.geometric(0.5, size=G), 8).astype(np.int64)
    g_hetero = (rng.random(G) < 0.15) & (g_k >= 2)
    g_static = rng.random(G) < 0.20
    g_has_rack = rng.random(G) < 0.75
    g_failover = rng.random(G) < 0.05
    g_gen = rng.integers(1, 2000, size=G)
    g_churned = rng.random(G) < 0.30
    g_overprov = rng.random(G) < 0.15
    g_ppm = np.where(g_overprov, rng.uniform(0.3, 1.0, size=G), rng.uniform(1.0, 3.0, size=G))
    g_assignor = rng.choice(_ASSIGNORS, size=G, p=_ASSIGNOR_WEIGHTS)
    g_assignor = _available_assignors(g_assignor, rng)
    g_names = [f"{_TEAMS[i % len(_TEAMS)]}-{_WORDS[(i * 7) % len(_WORDS)]}-consumer-{i:05d}" for i in range(G)]
    # members that joined since the previous generation / members that left since
    g_new = np.where(g_churned, np.floor(g_size * rng.uniform(0.0, 0.15, size=G)), 0).astype(np.int64)
    g_new = np.minimum(g_new, np.maximum(g_size - 1, 0))
    g_departed = np.where(g_churned, rng.integers(0, 4, size=G), 0).astype(np.int64)
    g_old = g_size - g_new

    # -- topics: each group-topic slot is a private topic or a popular shared one -----------------
    e_group = np.repeat(np.arange(G), g_k)
    E = len(e_group)
    shared_p = np.where(g_size[e_group] <= 50, 0.35, 0.0)
    e_shared = rng.random(E) < shared_p
    g_per_cluster = np.bincount(g_cluster, minlength=n_clusters)
    pool = np.maximum(5, g_per_cluster // 4)
    pool_start = np.concatenate([[0], np.cumsum(pool)[:-1]])
    n_shared = int(pool.sum())
    # Zipf popularity inside each cluster's pool
    rank = np.minimum(rng.zipf(1.3, size=E) - 1, pool[g_cluster[e_group]] - 1)
    shared_id = pool_start[g_cluster[e_group]] + rank
    private_id = n_shared + np.cumsum(~e_shared) - 1
    e_topic = np.where(e_shared, shared_id, private_id)
    # drop duplicate (group, topic) slots
    key = e_group.astype(np.int64) * (n_shared + E + 1) + e_topic
    _, first = np.unique(key, return_index=True)
    first.sort()
    e_group, e_topic = e_group[first], e_topic[first]
    g_k = np.bincount(e_group, minlength=G)
    n_topics = n_shared + int((~e_shared).sum())
    t_cluster = np.empty(n_topics, dtype=np.int64)
    t_cluster[:n_shared] = np.repeat(np.arange(n_clusters), pool)
    # private topics belong to their group's cluster
    priv_mask = e_topic >= n_shared
    t_cluster[e_topic[priv_mask]] = g_cluster[e_group[priv_mask]]
    # partition counts: big enough for the largest consumer group at its partitions-per-member
    need = np.ceil(np.maximum(g_size[e_group], 1) * g_ppm[e_group] / np.maximum(g_k[e_group], 1))
    t_need = np.zeros(n_topics)
    np.maximum.at(t_need, e_topic, need)
    base = rng.choice(np.array([1, 3, 6, 6, 12, 12, 12, 24, 32, 48, 64]), size=n_topics)
    t_need[:n_shared] = np.maximum(t_need[:n_shared], base[:n_shared])
    t_parts = _NICE_COUNTS[np.minimum(np.searchsorted(_NICE_COUNTS, np.maximum(t_need, 1)), len(_NICE_COUNTS) - 1)]
    # over-provisioned groups: round down instead of up on their private topics
    t_overprov = np.zeros(n_topics, dtype=bool)
    t_overprov[e_topic[priv_mask & g_overprov[e_group]]] = True
    down = _NICE_COUNTS[np.maximum(np.searchsorted(_NICE_COUNTS, np.maximum(t_need, 1), side="right") - 1, 0)]
    t_parts = np.where(t_overprov, down, t_parts).astype(np.int64)
    t_used = np.zeros(n_topics, dtype=bool)
    t_used[e_topic] = True
    t_names = [f"{_WORDS[i % len(_WORDS)]}.{'shared' if i < n_shared else 'svc'}-{i:05d}" for i in range(n_topics)]
    t_rf = np.where(rng.random(n_topics) < 0.8, 3, 2)
    t_rate = rng.lognormal(np.log(2e6), 2.0, size=n_topics)
    t_retained = rng.random(n_topics) < 0.4

    # -- partitions table (topics that some group reads) --------------------------------------
    used = np.flatnonzero(t_used)
    p_topic = np.repeat(used, t_parts[used])
    p_part = _ragged_arange(t_parts[used])
    P = len(p_topic)
    p_cluster = t_cluster[p_topic]
    n_racks = cluster_racks[p_cluster]
    rf = np.minimum(t_rf[p_topic], n_racks)
    start = (p_topic * 7 + p_part) % n_racks
    rr_len = rf
    rr_pos = _ragged_arange(rr_len)
    rack_idx = (np.repeat(start, rr_len) + rr_pos) % np.repeat(n_racks, rr_len)
    rack_cluster = np.repeat(p_cluster, rr_len)
    rack_names = np.array([f"{cluster_names[c]}-az{r + 1}" for c in range(n_clusters) for r in range(6)])
    rack_values = pa.array(rack_names).take(pa.array(rack_cluster * 6 + rack_idx))
    volume = np.floor(t_rate[p_topic] * rng.uniform(0.5, 1.5, size=P)).astype(np.int64) + 1
    begin = np.where(t_retained[p_topic], np.floor(volume * rng.uniform(0.0, 0.6, size=P)), 0).astype(np.int64)
    end = begin + volume
    topic_name_arr = pa.array(t_names)
    cluster_arr = pa.array(cluster_names)
    partitions = pa.Table.from_arrays(
        [
            cluster_arr.take(pa.array(p_cluster)),
            topic_name_arr.take(pa.array(p_topic)),
            pa.array(p_part.astype(np.int32)),
            pa.ListArray.from_arrays(pa.array(_offsets(rr_len)), rack_values),
            pa.array(begin),
            pa.array(end),
        ],
        schema=PARTITIONS_SCHEMA,
    )
    # position of (topic, partition 0) in the partitions table
    t_first = np.zeros(n_topics, dtype=np.int64)
    t_first[used] = np.cumsum(t_parts[used]) - t_parts[used]

    # -- (group, partition) rows: previous owners and committed offsets -------------------------
    order = np.lexsort((e_topic, e_group))
    e_group, e_topic = e_group[order], e_topic[order]
    gp_len = t_parts[e_topic]
    gp_group = np.repeat(e_group, gp_len)
    gp_topic = np.repeat(e_topic, gp_len)
    gp_part = _ragged_arange(gp_len)
    GP = len(gp_group)
    g_total = np.bincount(gp_group, weights=None, minlength=G)

    # lags: Zipf-skewed inside a group (lag of the partition of rank r ~ r^-s, ranks shuffled,
    # exponent s uniform in [0, 1.2) per group, log-normal noise); 30% of groups caught up
    g_scale = np.where(rng.random(G) < 0.3, rng.uniform(0, 3, size=G), rng.lognormal(np.log(3000), 1.8, size=G))
    g_zipf = rng.uniform(0.0, 1.2, size=G)
    shuffle = np.lexsort((rng.random(GP), gp_group))
    rank = np.empty(GP, dtype=np.int64)
    rank[shuffle] = np.arange(GP) - np.repeat(np.cumsum(g_total) - g_total, g_total)
    lag = g_scale[gp_group] * (rank + 1.0) ** -g_zipf[gp_group] * rng.lognormal(0.0, 0.5, size=GP)
    p_index = t_first[gp_topic] + gp_part
    p_volume = volume[p_index]
    lag = np.minimum(np.floor(lag), p_volume).astype(np.int64)
    committed = end[p_index] - lag
    has_commit = rng.random(GP) >= 0.01
    group_arr = pa.array(g_names)
    sel = np.flatnonzero(has_commit)
    offsets = pa.Table.from_arrays(
        [
            cluster_arr.take(pa.array(g_cluster[gp_group[sel]])),
            group_arr.take(pa.array(gp_group[sel])),
            topic_name_arr.take(pa.array(gp_topic[sel])),
            pa.array(gp_part[sel].astype(np.int32)),
            pa.array(committed[sel]),
        ],
        schema=OFFSETS_SCHEMA,
    )

    # -- members ---------------------------------------------------------------------------------
    M = int(g_size.sum())
    m_group = np.repeat(np.arange(G), g_size)
    m_idx = _ragged_arange(g_size)
    # subscriptions: the group's topics, minus dropped ones in heterogeneous groups
    g_e_start = np.concatenate([[0], np.cumsum(g_k)[:-1]])
    s_len = g_k[m_group]
    s_member = np.repeat(np.arange(M), s_len)
    s_edge = np.repeat(g_e_start[m_group], s_len) + _ragged_arange(s_len)
    keep = ~(g_hetero[m_group[s_member]] & (rng.random(len(s_member)) < 0.35))
    kept_per_member = np.bincount(s_member[keep], minlength=M)
    first_slot = np.concatenate([[0], np.cumsum(s_len)[:-1]])
    none_left = np.flatnonzero(kept_per_member == 0)
    keep[first_slot[none_left]] = True
    s_member, s_edge = s_member[keep], s_edge[keep]
    s_counts = np.bincount(s_member, minlength=M)
    topics_col = pa.ListArray.from_arrays(pa.array(_offsets(s_counts)), topic_name_arr.take(pa.array(e_topic[s_edge])))
    is_new = m_idx >= g_old[m_group]
    generation = np.where(is_new, -1, g_gen[m_group]).astype(np.int32)
    # identities
    client_ids = [f"{g_names[g]}-{i}" for g, i in zip(m_group.tolist(), m_idx.tolist())]
    uuids = _hex_ids(rng, M)
    static = g_static[m_group]
    instance_ids = [
        f"{g_names[g]}-instance-{i}" if s else None
        for g, i, s in zip(m_group.tolist(), m_idx.tolist(), static.tolist())
    ]
    member_ids = [f"{inst if inst is not None else cid}-{u}" for inst, cid, u in zip(instance_ids, client_ids, uuids)]
    # owned partitions: the previous generation's assignment by the group's current strategy
    owned_col = _previous_assignment(
        G,
        g_assignor,
        g_size,
        g_old,
        g_departed,
        g_k,
        e_topic,
        t_names,
        t_parts,
        s_counts,
        e_topic[s_edge],
        member_ids,
    )
    ip = rng.integers(0, 2**24, size=M)
    hosts = [f"/10.{(x >> 16) & 255}.{(x >> 8) & 255}.{x & 255}" for x in ip.tolist()]
    m_cluster = g_cluster[m_group]
    m_nracks = cluster_racks[m_cluster]
    m_rack_idx = (m_idx + rng.integers(0, 6, size=G)[m_group]) % m_nracks
    rack_valid = g_has_rack[m_group]
    member_racks = pa.array(rack_names).take(pa.array(m_cluster * 6 + m_rack_idx, mask=~rack_valid))
    prio = rng.integers(0, 10, size=M).astype(">i4")
    user_data = [p.tobytes() if f else None for p, f in zip(prio, g_failover[m_group].tolist())]
    members = pa.Table.from_arrays(
        [
            cluster_arr.take(pa.array(m_cluster)),
            group_arr.take(pa.array(m_group)),
            pa.array(member_ids),
            pa.array(instance_ids, type=pa.string()),
            pa.array(client_ids),
            pa.array(hosts),
            member_racks,
            topics_col,
            owned_col,
            pa.array(generation),
            pa.array(user_data, type=pa.binary()),
            pa.nulls(len(member_ids), type=pa.binary()),  # built-in assignors: no assignment user data
        ],
        schema=MEMBERS_SCHEMA,
    )

    # -- groups ----------------------------------------------------------------------------------
    state = np.where(g_empty, "Empty", np.where(g_churned & (g_new > 0), "PreparingRebalance", "Stable"))
    groups_t = pa.Table.from_arrays(
        [
            cluster_arr.take(pa.array(g_cluster)),
            group_arr,
            pa.array(state.tolist()),
            pa.array(["consumer"] * G),
            pa.array(np.where(g_empty, "", g_assignor).tolist()),
            pa.array(["classic"] * G),  # synthetic groups run the classic protocol
        ],
        schema=GROUPS_SCHEMA,
    )
    return {"members": members, "partitions": partitions, "offsets": offsets, "groups": groups_t}


def synth(groups: int, out: str, seed: int = 0) -> SynthStats:
    """Generate a fleet of ``groups`` consumer groups and write it to ``out``."""
    tables = generate(groups, seed)
    write(tables, out, source={"kind": "synth", "groups": groups, "seed": seed})
    m, p, o, g = tables["members"], tables["partitions"], tables["offsets"], tables["groups"]
    state = g.column("state").to_pylist()
    return SynthStats(
        groups=g.num_rows,
        empty_groups=state.count("Empty"),
        clusters=len(set(g.column("cluster").to_pylist())),
        members=m.num_rows,
        topics=len(set(zip(p.column("cluster").to_pylist(), p.column("topic").to_pylist()))),
        partitions=p.num_rows,
        offsets=o.num_rows,
    )


def main_summary(stats: SynthStats, out: str, seconds: float | None = None) -> str:
    took = f" in {seconds:.1f}s" if seconds is not None else ""
    return f"wrote {out}{took}: " + json.dumps(stats.as_dict())
