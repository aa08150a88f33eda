//! `server-kassign`: kassign's own broker-side (KIP-848) assignor, the computation behind the
//! `kassign` assignor that `java/broker/` plugs into the group coordinator.
//!
//! On the consumer protocol's inputs (each member's subscribed topics, rack and *current target
//! assignment*; no generations, no user data) it returns, in this order of priority:
//!
//! 1. the most balanced assignment the subscriptions allow, judged on the whole load vector (no
//!    cost-reducing path, hence the smallest sum of squared member loads; with equal
//!    subscriptions, loads differ by at most one);
//! 2. among those, the most partitions kept from the current target assignment;
//! 3. then KIP-881 rack locality (a member's rack against the racks of a partition's replicas),
//!    never at the cost of 1 or 2.
//!
//! This is the sticky engine (`crate::sticky`, eager) with its claims taken from the current
//! target assignment by the server rule of [`super::current_owners`] (a partition two members
//! hold is owned by nobody; claims of unsubscribed topics are dropped), not from generations.
//!
//! [`assign_flat`] is the same computation on the flat arrays the JNI boundary hands over
//! (`rust/jni/src/`), including the coordinator's `isPartitionAssignable` (a partition that is
//! not assignable is left out of the problem and stays unassigned).

use std::time::Instant;

use crate::model::{
    by_hash, java_hash, Assignment, InputError, MemberIdx, PartId, Problem, ProblemBuilder, MAX_MEMBERS, NO_OWNER,
};

/// The optimiser's work budget ([`crate::sticky`]'s `Work`: members, classes and edges visited
/// while balancing heterogeneous subscriptions and maximising kept partitions). Every group of the
/// benchmark shapes needs far less (docs/broker.md, "Safety on the coordinator");
/// a pathological group that exhausts it gets [`super::uniform`]'s assignment instead.
pub const WORK_BUDGET: u64 = 400_000_000;

/// Run `server-kassign` on an interned problem, within [`WORK_BUDGET`].
pub fn assign(problem: &Problem) -> Assignment {
    assign_within(problem, WORK_BUDGET, None).0
}

/// Run `server-kassign` within `budget` units of work and, when given, until `deadline` (wall
/// time). When the heterogeneous optimiser runs out of either, the result is `server-uniform`'s
/// for the same inputs (valid, and as balanced and as sticky as the broker's own `uniform`) and
/// the flag is `true`. On homogeneous subscriptions (one linear pass, nothing iterative) the
/// deadline stops the KIP-881 rack matching where it is, and the rest of the deal places the
/// partitions it left (as balanced and as sticky; fewer rack matches); the flag stays `false`.
///
/// Ties (which member of several equal ones gets a partition) go by the members' order in
/// `server-kassign`: by [`crate::model::java_hash`] of the member id, then by id
/// ([`crate::model::by_hash`]). A problem in another order (by id, as [`Problem::build`] makes it)
/// is solved in that order and answered in its own.
pub fn assign_within(problem: &Problem, budget: u64, deadline: Option<Instant>) -> (Assignment, bool) {
    // A problem's ids are distinct (its builder checked), so ordering them cannot fail.
    match problem.by_hash() {
        Ok(Some((ordered, was))) => {
            let (mut plan, fell_back) = solve(&ordered, budget, deadline);
            for o in plan.owner.iter_mut().filter(|o| **o != NO_OWNER) {
                *o = was[*o as usize];
            }
            (plan, fell_back)
        }
        Ok(None) | Err(_) => solve(problem, budget, deadline),
    }
}

/// [`assign_within`] on a problem whose members are in `server-kassign`'s order.
fn solve(problem: &Problem, budget: u64, deadline: Option<Instant>) -> (Assignment, bool) {
    let mut work = crate::sticky::Work::until(budget, deadline);
    match crate::sticky::assign_from_owners(problem, super::current_owners(problem), &mut work) {
        Ok(plan) => (plan, false),
        Err(crate::sticky::OutOfWork) => (super::uniform::assign(problem), true),
    }
}

/// The largest group one broker call accepts: the caps bound the native memory of a call
/// (docs/broker.md, "Native memory"). [`Lengths::check`] applies them to the Java arrays' lengths
/// before anything is copied.
pub const BROKER_MAX_MEMBERS: usize = 500_000;
/// Topics one group subscribes to.
pub const BROKER_MAX_TOPICS: usize = 100_000;
/// Partitions of the subscribed topics, in total.
pub const BROKER_MAX_PARTITIONS: usize = 2_000_000;
/// Distinct rack names (members' and replicas').
pub const BROKER_MAX_RACKS: usize = 65_536;
/// Characters per string on average, for each kind of string (member ids, topic ids, racks).
pub const BROKER_MAX_CHARS_PER_STRING: usize = 64;
/// Subscription entries (topic indexes over all members' lists).
pub const BROKER_MAX_SUBSCRIPTION_ENTRIES: usize = 8_000_000;
/// Replica racks per partition, on average.
pub const BROKER_MAX_RACKS_PER_PARTITION: usize = 4;

/// The lengths of one broker call's arrays (`rust/jni/src/`, `assign0`'s parameters; a null
/// array has length 0), judged before anything is copied into native memory.
#[derive(Clone, Debug, Default)]
pub struct Lengths {
    pub member_ids: usize,
    pub member_id_chars: usize,
    pub member_racks: usize,
    pub rack_names: usize,
    pub rack_name_chars: usize,
    pub topics: usize,
    pub topic_chars: usize,
    pub partition_counts: usize,
    pub sub_offsets: usize,
    pub sub_topics: usize,
    pub owned_offsets: usize,
    pub owned_topics: usize,
    pub owned_partitions: usize,
    pub partition_rack_offsets: usize,
    pub partition_racks: usize,
    pub assignable: usize,
    /// The members' `String.hashCode`s ([`MemberKeys`]); 0 when not given.
    pub member_hashes: usize,
    /// `None` on the full read.
    pub member_counts: Option<usize>,
    pub free: Option<usize>,
}

fn over(what: &str, n: usize, cap: usize) -> Result<(), InputError> {
    if n > cap {
        Err(invalid(format!(
            "{what}: {n} exceeds the broker's maximum of {cap} (docs/broker.md, Native memory)"
        )))
    } else {
        Ok(())
    }
}

fn exactly(what: &str, n: usize, want: usize) -> Result<(), InputError> {
    if n != want {
        Err(invalid(format!("{what}: expected {want} entries, got {n}")))
    } else {
        Ok(())
    }
}

impl Lengths {
    /// The lengths of `countsFirst0`'s arrays, as a call's: `member_ids` is the number of member
    /// id end offsets, `member_id_chars` the length of their characters, and likewise for topics.
    #[allow(clippy::too_many_arguments)]
    pub fn counts_rule(
        member_ids: usize,
        member_id_chars: usize,
        member_hashes: usize,
        topics: usize,
        topic_chars: usize,
        partition_counts: usize,
        sub_offsets: usize,
        sub_topics: usize,
        member_counts: usize,
        free: usize,
    ) -> Lengths {
        Lengths {
            member_ids,
            member_id_chars,
            member_hashes,
            member_racks: member_ids,
            topics,
            topic_chars,
            partition_counts,
            sub_offsets,
            sub_topics,
            owned_offsets: member_ids + 1,
            member_counts: Some(member_counts),
            free: Some(free),
            ..Lengths::default()
        }
    }

    /// Every check that needs only the lengths: the caps, and the lengths fixed by the member and
    /// topic counts. Passing it, a call's arrays hold at most a fixed multiple of the caps.
    pub fn check(&self) -> Result<(), InputError> {
        let (m, t) = (self.member_ids, self.topics);
        over("members", m, BROKER_MAX_MEMBERS)?;
        over("topics", t, BROKER_MAX_TOPICS)?;
        over("racks", self.rack_names, BROKER_MAX_RACKS)?;
        over(
            "member id characters",
            self.member_id_chars,
            m.max(1) * BROKER_MAX_CHARS_PER_STRING,
        )?;
        over(
            "topic characters",
            self.topic_chars,
            t.max(1) * BROKER_MAX_CHARS_PER_STRING,
        )?;
        over(
            "rack name characters",
            self.rack_name_chars,
            self.rack_names.max(1) * BROKER_MAX_CHARS_PER_STRING,
        )?;
        exactly("member_racks", self.member_racks, m)?;
        if self.member_hashes != 0 {
            exactly("member_hashes", self.member_hashes, m)?;
        }
        exactly("partition_counts", self.partition_counts, t)?;
        if self.sub_offsets != 0 {
            exactly("sub_offsets", self.sub_offsets, m + 1)?;
        }
        over("subscription entries", self.sub_topics, BROKER_MAX_SUBSCRIPTION_ENTRIES)?;
        exactly("owned_offsets", self.owned_offsets, m + 1)?;
        exactly("owned_partitions", self.owned_partitions, self.owned_topics)?;
        over("current target partitions", self.owned_topics, BROKER_MAX_PARTITIONS)?;
        over(
            "partition_rack_offsets",
            self.partition_rack_offsets,
            BROKER_MAX_PARTITIONS + 1,
        )?;
        over(
            "replica racks",
            self.partition_racks,
            BROKER_MAX_PARTITIONS * BROKER_MAX_RACKS_PER_PARTITION,
        )?;
        over("assignable", self.assignable, BROKER_MAX_PARTITIONS)?;
        if let Some(n) = self.member_counts {
            exactly("member_counts", n, m)?;
        }
        over("free", self.free.unwrap_or(0), BROKER_MAX_PARTITIONS)?;
        Ok(())
    }

    /// The checks that need the partition total too ([`partition_total`] of the counts, which
    /// are copied after [`Lengths::check`]: at most [`BROKER_MAX_TOPICS`] of them).
    pub fn check_with_total(&self, total: usize) -> Result<(), InputError> {
        if self.partition_rack_offsets != 0 {
            exactly("partition_rack_offsets", self.partition_rack_offsets, total + 1)?;
        }
        over(
            "replica racks",
            self.partition_racks,
            total.max(1) * BROKER_MAX_RACKS_PER_PARTITION,
        )?;
        if self.assignable != 0 {
            exactly("assignable", self.assignable, total)?;
        }
        over("free", self.free.unwrap_or(0), total)?;
        over(
            "native memory bytes",
            native_bound(self, total),
            BROKER_MAX_NATIVE_BYTES,
        )
    }
}

/// Native bytes that interning and assigning one group may use at their peak, beyond the copied
/// input arrays ([`working_bound`], checked on the benchmark's kinds of group by
/// rust/core/tests/native_memory.rs): per member, per partition, per array entry (subscription entry,
/// current target pair or replica rack) and per character of the ids and names.
pub const WORKING_BYTES_PER_MEMBER: usize = 160;
pub const WORKING_BYTES_PER_PARTITION: usize = 64;
pub const WORKING_BYTES_PER_ENTRY: usize = 32;
pub const WORKING_BYTES_PER_CHAR: usize = 4;

/// The most native memory one broker call may use, all of it: a group whose [`native_bound`] is
/// larger is refused before anything is copied (docs/broker.md, "Native memory").
pub const BROKER_MAX_NATIVE_BYTES: usize = 512 << 20;

/// The working set of interning and assigning a group with these lengths (the copied inputs not
/// included): the per-member, per-partition, per-entry and per-character rates above, plus 64 KiB.
pub fn working_bound(l: &Lengths, total: usize) -> usize {
    let entries = l.sub_topics + l.owned_topics + l.partition_racks;
    let chars = l.member_id_chars + l.topic_chars + l.rack_name_chars;
    WORKING_BYTES_PER_MEMBER * l.member_ids
        + WORKING_BYTES_PER_PARTITION * total
        + WORKING_BYTES_PER_ENTRY * entries
        + WORKING_BYTES_PER_CHAR * chars
        + (64 << 10)
}

/// All the native memory of one call: [`working_bound`], the input arrays as copied (4 bytes an
/// int, 2 a UTF-16 character, 1 a flag), the strings made from them (at most 3 bytes of UTF-8 per
/// UTF-16 character; the member ids' twice, as one [`FlatIds`] buffer and, when the group is
/// interned, as strings) and the owners returned (at most two ints per partition).
pub fn native_bound(l: &Lengths, total: usize) -> usize {
    let ints = l.member_ids
        + l.member_hashes
        + l.member_racks
        + l.rack_names
        + l.topics
        + l.partition_counts
        + l.sub_offsets
        + l.sub_topics
        + l.owned_offsets
        + l.owned_topics
        + l.owned_partitions
        + l.partition_rack_offsets
        + l.partition_racks
        + l.member_counts.unwrap_or(0)
        + l.free.unwrap_or(0);
    let chars = l.member_id_chars + l.topic_chars + l.rack_name_chars;
    working_bound(l, total) + 4 * ints + 5 * chars + 3 * l.member_id_chars + l.assignable + 8 * total
}

/// The partitions of a group in total (negative counts count as 0; the model builder refuses
/// them), refused beyond [`BROKER_MAX_PARTITIONS`].
pub fn partition_total(partition_counts: &[i32]) -> Result<usize, InputError> {
    let total: u64 = partition_counts.iter().map(|&n| n.max(0) as u64).sum();
    over("partitions", total as usize, BROKER_MAX_PARTITIONS)?;
    Ok(total as usize)
}

/// A group as flat arrays, in the caller's order. Topics are identified by a string (the broker
/// uses the topic id's string form); member `i`'s subscription is
/// `sub_topics[sub_offsets[i]..sub_offsets[i + 1]]` (topic indexes), or all of `sub_topics` for
/// every member when `sub_offsets` is empty (a HOMOGENEOUS group crosses once), its current target
/// assignment the pairs `(owned_topics[k], owned_partitions[k])` for `k` in
/// `owned_offsets[i]..owned_offsets[i + 1]` (a topic index of -1 names a topic that is not in
/// `topics`; such claims are dropped). Partition-indexed arrays use the *input flat index*:
/// partition `p` of topic `t` is `sum(partition_counts[..t]) + p`.
#[derive(Clone, Debug, Default)]
pub struct FlatGroup<'a> {
    pub member_ids: Vec<String>,
    /// Index into `rack_names`, or -1.
    pub member_racks: &'a [i32],
    pub rack_names: Vec<String>,
    pub topics: Vec<String>,
    pub partition_counts: &'a [i32],
    pub sub_offsets: &'a [i32],
    pub sub_topics: &'a [i32],
    pub owned_offsets: &'a [i32],
    pub owned_topics: &'a [i32],
    pub owned_partitions: &'a [i32],
    /// Empty (no replica racks known), or one offset per input flat partition plus one into
    /// `partition_racks` (indexes into `rack_names`).
    pub partition_rack_offsets: &'a [i32],
    pub partition_racks: &'a [i32],
    /// Empty (every partition assignable), or one flag per input flat partition (0 = not assignable).
    pub assignable: &'a [u8],
}

fn invalid(msg: String) -> InputError {
    InputError::Invalid(msg)
}

/// Check a CSR offset array: `n + 1` entries, starting at 0, non-decreasing, ending at `len`.
fn check_offsets(name: &str, offsets: &[i32], n: usize, len: usize) -> Result<(), InputError> {
    if offsets.len() != n + 1 {
        return Err(invalid(format!(
            "{name}: expected {} offsets, got {}",
            n + 1,
            offsets.len()
        )));
    }
    if offsets[0] != 0 || offsets[n] as i64 != len as i64 || offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(invalid(format!(
            "{name}: offsets must start at 0, never decrease and end at {len}"
        )));
    }
    Ok(())
}

/// Check the subscription arrays: CSR over `m` members, or `sub_offsets` empty (one shared list).
fn check_subscriptions(sub_offsets: &[i32], sub_topics: &[i32], m: usize, t: usize) -> Result<(), InputError> {
    if !sub_offsets.is_empty() {
        check_offsets("sub_offsets", sub_offsets, m, sub_topics.len())?;
    }
    check_index("sub_topics", sub_topics, t, false)
}

/// Member `i`'s subscription (checked arrays, [`check_subscriptions`]).
fn subscription<'s>(sub_offsets: &[i32], sub_topics: &'s [i32], i: usize) -> &'s [i32] {
    if sub_offsets.is_empty() {
        sub_topics
    } else {
        &sub_topics[sub_offsets[i] as usize..sub_offsets[i + 1] as usize]
    }
}

fn check_index(name: &str, values: &[i32], n: usize, allow_none: bool) -> Result<(), InputError> {
    let lo = if allow_none { -1 } else { 0 };
    match values.iter().find(|&&v| v < lo || v as i64 >= n as i64) {
        Some(v) => Err(invalid(format!("{name}: index {v} out of range 0..{n}"))),
        None => Ok(()),
    }
}

/// Check every shape and index of a flat group, in one place, before anything is allocated per
/// partition: array lengths, CSR offsets and the indexes they hold. Returns the input flat
/// partition count (negative counts count as 0 here; the model builder rejects them with the
/// caps, [`crate::model::MAX_PARTITIONS`] and [`MAX_MEMBERS`], as for every other entry point).
fn check_shapes(g: &FlatGroup<'_>) -> Result<usize, InputError> {
    check_shapes_of(g, g.member_ids.len())
}

/// [`check_shapes`] for `m` members (whose ids may be held apart, [`FlatIds`]).
fn check_shapes_of(g: &FlatGroup<'_>, m: usize) -> Result<usize, InputError> {
    let t = g.topics.len();
    if m > MAX_MEMBERS {
        return Err(InputError::TooManyMembers(m));
    }
    if g.partition_counts.len() != t {
        return Err(invalid(format!(
            "partition_counts: expected {t} counts (one per topic), got {}",
            g.partition_counts.len()
        )));
    }
    if g.member_racks.len() != m {
        return Err(invalid(format!(
            "member_racks: expected {m} entries, got {}",
            g.member_racks.len()
        )));
    }
    check_index("member_racks", g.member_racks, g.rack_names.len(), true)?;
    check_subscriptions(g.sub_offsets, g.sub_topics, m, t)?;
    check_offsets("owned_offsets", g.owned_offsets, m, g.owned_topics.len())?;
    if g.owned_partitions.len() != g.owned_topics.len() {
        return Err(invalid("owned_partitions: must be as long as owned_topics".to_string()));
    }
    check_index("owned_topics", g.owned_topics, t, true)?;
    let total: usize = g.partition_counts.iter().map(|&n| n.max(0) as usize).sum();
    if !g.partition_rack_offsets.is_empty() {
        check_offsets(
            "partition_rack_offsets",
            g.partition_rack_offsets,
            total,
            g.partition_racks.len(),
        )?;
        check_index("partition_racks", g.partition_racks, g.rack_names.len(), false)?;
    }
    if !g.assignable.is_empty() && g.assignable.len() != total {
        return Err(invalid(format!(
            "assignable: expected {total} flags (one per partition), got {}",
            g.assignable.len()
        )));
    }
    Ok(total)
}

/// Run `server-kassign` on a flat group. Returns the owner of every input flat partition: the
/// member's index in `member_ids`, or -1 (not subscribed by anyone, or not assignable).
///
/// Bad shapes and indexes are clear errors ([`check_shapes`]), never a panic.
/// The group is taken by value: the member ids move into the problem (no copy per member).
pub fn assign_flat(g: FlatGroup<'_>) -> Result<Vec<i32>, InputError> {
    assign_flat_until(g, None)
}

/// `free` (the partitions in no member's current target, as flat indexes) must ascend, each once,
/// within `0..total`.
fn check_free(free: &[i32], total: usize) -> Result<(), InputError> {
    if free.windows(2).any(|w| w[0] >= w[1]) || free.iter().any(|&f| f < 0 || f as usize >= total) {
        return Err(invalid(format!(
            "free: partitions must be ascending, each once, within 0..{total}"
        )));
    }
    Ok(())
}

/// [`assign_flat`] with a deadline ([`assign_within`]).
pub fn assign_flat_until(g: FlatGroup<'_>, deadline: Option<Instant>) -> Result<Vec<i32>, InputError> {
    let total = check_shapes(&g)?;
    let built = Built::new(g, total)?;
    // Built in `server-kassign`'s member order ([`ProblemBuilder::build_by_hash`]).
    let plan = solve(&built.problem, WORK_BUDGET, deadline).0;
    Ok(built.owners(&plan.owner))
}

/// The counts-first rule of the broker plugin: which members' current target assignment must be
/// read element by element, when the others' can be judged from their sizes alone.
///
/// `member_counts[i]` is the number of partitions in member `i`'s current target (the sum of its
/// per-topic set sizes, whatever their topics and values), or -1 when that number cannot stand for
/// the member's claims (the caller found an empty per-topic set, which the full read treats
/// apart). The rule applies when every member subscribes to the same topics, all of `topics` (then
/// `server-kassign` is the constrained sticky deal, quota q = P div N over the P partitions of
/// those topics, and r = P mod N members end with q + 1): a member holding at most q partitions
/// keeps every one of them in the unique most-balanced, most-kept assignment, and the rest of the
/// deal depends only on how many it keeps. So does a member holding exactly q + 1 that gets one
/// of the r extra slots, which go to the members holding more than q in the member order
/// ([`by_hash`]: by [`java_hash`], then by id): when no
/// more than r members hold more than q, every one of them (a member joining a group where
/// everyone holds q + 1 of the new quota, for instance); otherwise the first ones in that order,
/// and `member_order(over, first)` is asked for the members over q in that order, as [`by_hash`]
/// answers (only then: the caller need not convert the ids otherwise): `first` is `Some(r)` when
/// every size is known, and then only which r come first matters.
/// Such a member's partitions need not be read. Returns `None` when the rule does not apply or
/// decides nobody (read everything: [`assign_flat`]); otherwise `read[i]` is whether member `i`
/// must be read, and [`assign_flat_counted`] finishes the assignment.
pub fn members_to_read(
    partition_counts: &[i32],
    sub_offsets: &[i32],
    sub_topics: &[i32],
    member_counts: &[i32],
    member_order: impl FnOnce(&[usize], Option<usize>) -> Result<Vec<MemberIdx>, InputError>,
) -> Result<Option<Vec<bool>>, InputError> {
    let m = member_counts.len();
    let t = partition_counts.len();
    if m > MAX_MEMBERS {
        return Err(InputError::TooManyMembers(m));
    }
    check_subscriptions(sub_offsets, sub_topics, m, t)?;
    if m == 0 {
        return Ok(None);
    }
    // Every member's subscription, as a set of topics, equal to the first's.
    let set = |i: usize| -> Vec<i32> {
        let mut v = subscription(sub_offsets, sub_topics, i).to_vec();
        v.sort_unstable();
        v.dedup();
        v
    };
    let first = set(0);
    if first.len() != t {
        return Ok(None); // a topic nobody subscribes to (not from the plugin, which lists only subscribed ones)
    }
    // One shared list (HOMOGENEOUS, `sub_offsets` empty) is everyone's.
    let mut prev = subscription(sub_offsets, sub_topics, 0);
    for i in (1..m).filter(|_| !sub_offsets.is_empty()) {
        let cur = subscription(sub_offsets, sub_topics, i);
        if cur != prev && set(i) != first {
            return Ok(None);
        }
        prev = cur;
    }
    let total: i64 = first
        .iter()
        .map(|&ti| partition_counts[ti as usize].max(0) as i64)
        .sum();
    let q = total / m as i64;
    let r = total % m as i64;
    // A member of unknown size (-1) may hold more than q: it counts as over.
    let over_q = |c: i32| c < 0 || c as i64 > q;
    let over: Vec<usize> = (0..m).filter(|&i| over_q(member_counts[i])).collect();
    let read: Vec<bool> = if over.len() as i64 <= r {
        // Every member over q gets an extra slot: one holding q + 1 keeps all of it.
        member_counts.iter().map(|&c| c < 0 || c as i64 > q + 1).collect()
    } else if member_counts.iter().any(|&c| c as i64 == q + 1) {
        // The extra slots go to the first r members over q in member order (the keep step's).
        // When every size is known, which r they are is all that matters (a selection); after a
        // member of unknown size nobody can tell how many are left, so their order is needed,
        // and the rest are read.
        let known_all = over.iter().all(|&i| member_counts[i] >= 0);
        let order = member_order(&over, known_all.then_some(r as usize))?;
        if order.len() != over.len() {
            return Err(invalid(format!(
                "member ids: expected {} members over the quota, got {}",
                over.len(),
                order.len()
            )));
        }
        let mut read = vec![false; m];
        let (mut extra, mut known) = (r, true);
        for i in order {
            let Some(&c) = member_counts.get(i as usize) else {
                return Err(invalid(format!("member ids: no member {i}")));
            };
            known &= c >= 0;
            let slot = known && extra > 0;
            if slot {
                extra -= 1;
            }
            read[i as usize] = !(slot && c as i64 == q + 1);
        }
        read
    } else {
        member_counts.iter().map(|&c| over_q(c)).collect()
    };
    Ok(read.iter().any(|&r| !r).then_some(read))
}

/// Finish a counts-first assignment ([`members_to_read`]). `g` lists the current target of the
/// members that rule says to read and nothing for the others; `member_counts` is the array given
/// to the rule; `free` lists, ascending, the input flat partitions in no member's current target
/// (the coordinator's `GroupSpec.isPartitionAssigned` is false).
///
/// The counted members' claims are trusted only when the counts add up: their sizes plus the
/// listed claims of known topics must equal the number of partitions not free, which holds
/// exactly when no claim names an unknown topic or a partition out of range and no partition is
/// claimed twice. Otherwise, or when some partition is not assignable, returns `Ok(None)`: read
/// every member and call [`assign_flat`].
///
/// On success returns [`assign_flat`]'s owners of every partition except those a counted member
/// keeps (it keeps all it holds, and most partitions are held that way): `k` input flat
/// partitions, ascending, then their `k` owners (member indexes).
pub fn assign_flat_counted(
    g: FlatGroup<'_>,
    member_counts: &[i32],
    free: &[i32],
    deadline: Option<Instant>,
) -> Result<Option<Vec<i32>>, InputError> {
    let total = check_shapes(&g)?;
    let m = g.member_ids.len();
    if member_counts.len() != m {
        return Err(invalid(format!(
            "member_counts: expected {m} entries, got {}",
            member_counts.len()
        )));
    }
    check_free(free, total)?;
    let id = |i: usize| g.member_ids[i].as_bytes();
    let order = |over: &[usize], first| Ok(by_hash(over, first, |i| java_hash(id(i)), Some(&id))?.expect("ids given"));
    let Some(read) = members_to_read(g.partition_counts, g.sub_offsets, g.sub_topics, member_counts, order)? else {
        return Ok(None);
    };
    if !g.assignable.is_empty() {
        return Ok(None);
    }
    let mut claimed: i64 = 0;
    for i in 0..m {
        let (o0, o1) = (g.owned_offsets[i] as usize, g.owned_offsets[i + 1] as usize);
        if read[i] {
            claimed += g.owned_topics[o0..o1].iter().filter(|&&ti| ti >= 0).count() as i64;
        } else if o0 != o1 {
            return Err(invalid(format!(
                "owned_offsets: member {i} is counted, its partitions must not be listed"
            )));
        } else {
            claimed += member_counts[i] as i64;
        }
    }
    if claimed != (total - free.len()) as i64 {
        return Ok(None);
    }
    let counted: Vec<u32> = member_counts
        .iter()
        .zip(&read)
        .map(|(&c, &r)| if r { 0 } else { c as u32 })
        .collect();
    let built = Built::new(g, total)?;
    let problem = &built.problem;
    if !problem.uniform_subscriptions() {
        return Ok(None);
    }
    let win = super::current_owners(problem);
    // Partitions neither free nor claimed by a listed member are the counted members'. (Every
    // partition is assignable here: input partition p of topic ti is the problem's p.)
    let mut taken: Vec<bool> = win.iter().map(|&w| w == NO_OWNER).collect();
    let input_topic = |f: usize| built.base.partition_point(|&b| b <= f) - 1;
    for &f in free {
        let f = f as usize;
        let ti = input_topic(f);
        taken[problem.topic_base[built.tids[ti] as usize] as usize + f - built.base[ti]] = false;
    }
    // Counted members in the problem's member order.
    let mut count = vec![0u32; m];
    for (pos, &idx) in problem.input_order.iter().enumerate() {
        count[idx as usize] = counted[pos];
    }
    let held = crate::sticky::constrained::Held {
        count: &count,
        taken: &taken,
    };
    let mut work = crate::sticky::Work::until(WORK_BUDGET, deadline);
    let plan = crate::sticky::assign_from_owners_held(problem, win, &held, &mut work);
    let caller = built.caller();
    let (mut at, mut owners) = (Vec::new(), Vec::new());
    for (ti, &n) in built.g.partition_counts.iter().enumerate() {
        let from = problem.topic_base[built.tids[ti] as usize] as usize;
        for (p, &o) in plan.owner[from..from + n.max(0) as usize].iter().enumerate() {
            if o != NO_OWNER {
                at.push((built.base[ti] + p) as i32);
                owners.push(caller[o as usize]);
            }
        }
    }
    at.extend_from_slice(&owners);
    Ok(Some(at))
}

/// Member ids as UTF-8 bytes back to back, `ends[i]` the end of id `i` (the JNI boundary's form):
/// no `String` per member unless the group needs interning ([`assign_flat_ids`]).
#[derive(Clone, Debug, Default)]
pub struct FlatIds {
    pub bytes: Vec<u8>,
    /// Non-decreasing, each at most `bytes.len()` (checked by [`FlatIds::new`]).
    pub ends: Vec<usize>,
}

impl FlatIds {
    /// Checked: `ends` never decreases and stays within `bytes`.
    pub fn new(bytes: Vec<u8>, ends: Vec<usize>) -> Result<FlatIds, InputError> {
        if ends.windows(2).any(|w| w[0] > w[1]) || ends.last().is_some_and(|&e| e > bytes.len()) {
            return Err(invalid(
                "member ids: end offsets out of order or past the bytes".to_string(),
            ));
        }
        Ok(FlatIds { bytes, ends })
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Id `i`'s bytes.
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// One `String` per id (invalid UTF-8 is an error).
    pub fn strings(&self) -> Result<Vec<String>, InputError> {
        let mut out = Vec::new();
        out.try_reserve_exact(self.len())
            .map_err(|_| invalid("member ids: cannot reserve native memory".to_string()))?;
        for i in 0..self.len() {
            let s =
                std::str::from_utf8(self.get(i)).map_err(|_| invalid(format!("member ids: id {i} is not UTF-8")))?;
            out.push(s.to_string());
        }
        Ok(out)
    }
}

/// What the flat path orders members by ([`by_hash`]): each member's [`java_hash`] (the
/// plugin's `String.hashCode`, when given, else computed from the id) and, when given, the ids,
/// needed only where two hashes tie.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemberKeys<'a> {
    pub hashes: Option<&'a [u32]>,
    pub ids: Option<&'a FlatIds>,
}

impl<'a> MemberKeys<'a> {
    /// The members `subset` in `server-kassign`'s order, as [`by_hash`] answers; `Ok(None)` when
    /// that needs ids not given.
    pub fn order(&self, subset: &[usize], first: Option<usize>) -> Result<Option<Vec<MemberIdx>>, InputError> {
        let id_of = self.ids.map(|ids| move |i: usize| ids.get(i));
        let id: Option<&dyn Fn(usize) -> &'a [u8]> = id_of.as_ref().map(|f| f as &dyn Fn(usize) -> &'a [u8]);
        match (self.hashes, self.ids) {
            (Some(h), _) => by_hash(subset, first, |i| h[i], id),
            (None, Some(ids)) => by_hash(subset, first, |i| java_hash(ids.get(i)), id),
            (None, None) => Ok(None),
        }
    }

    /// The number of members the keys are for, when anything is given.
    fn len(&self) -> Option<usize> {
        self.hashes.map(|h| h.len()).or(self.ids.map(|ids| ids.len()))
    }

    /// Hashes and ids, when both are given, are for the same members.
    fn check(&self) -> Result<(), InputError> {
        if let (Some(h), Some(ids)) = (self.hashes, self.ids) {
            if h.len() != ids.len() {
                return Err(invalid(format!(
                    "member hashes: expected {} (one per member id), got {}",
                    ids.len(),
                    h.len()
                )));
            }
        }
        Ok(())
    }
}

/// What [`assign_flat_ids`] answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlatAnswer {
    /// The owners: [`assign_flat_until`]'s (the full read) or [`assign_flat_counted`]'s (`k`
    /// partitions, then their `k` owners).
    Owners(Vec<i32>),
    /// Counted only: the counts do not add up ([`assign_flat_counted`]'s `None`); read every
    /// member and call again without counts.
    ReadAll,
    /// The member ids were not given and the answer needs them (two hashes tie where the order
    /// matters, or the group must be interned): call again with them.
    NeedIds,
}

/// [`assign_flat_until`] (`counted` None) or [`assign_flat_counted`] (`counted` = the member
/// counts and the free partitions), on a group whose member ids come as [`FlatIds`]
/// (`g.member_ids` is ignored). The same answers, as [`FlatAnswer`].
///
/// A group that every member subscribes to whole (HOMOGENEOUS: `sub_offsets` empty), with no
/// replica racks and every partition assignable, whose current target is judged from its sizes
/// and the lists of the members [`members_to_read`] reads (or nobody holds anything), is dealt
/// without interning it: the members the deal gives partitions to are ordered by their hashes
/// (`hashes`, the plugin's, or computed from the ids; the ids break equal hashes), and the
/// constrained path's keep step and deal ([`crate::sticky::constrained::deal`]) run on the counts.
/// Any other group is interned as before.
///
/// `ids` may be `None` only with `hashes` and `counted` given (the counted call of a group whose
/// hashes decide the order): then a group the flat deal does not answer gets
/// [`FlatAnswer::NeedIds`].
///
/// Member ids must be distinct. The interned path reports a duplicate; the flat deal reports one
/// among the members it orders and may answer otherwise (the broker's result map, keyed by member
/// id, refuses it: `KassignAssignor`).
pub fn assign_flat_ids(
    mut g: FlatGroup<'_>,
    ids: Option<&FlatIds>,
    hashes: Option<&[u32]>,
    counted: Option<(&[i32], &[i32])>,
    deadline: Option<Instant>,
) -> Result<FlatAnswer, InputError> {
    if ids.is_none() && (hashes.is_none() || counted.is_none()) {
        return Err(invalid(
            "member ids: may be left out only on the counted path, with the members' hashes".to_string(),
        ));
    }
    let keys = MemberKeys { hashes, ids };
    keys.check()?;
    if let Some(out) = dealt(&g, &keys, counted)? {
        return Ok(FlatAnswer::Owners(out));
    }
    let Some(ids) = ids else {
        return Ok(FlatAnswer::NeedIds);
    };
    g.member_ids = ids.strings()?;
    Ok(match counted {
        None => FlatAnswer::Owners(assign_flat_until(g, deadline)?),
        Some((counts, free)) => match assign_flat_counted(g, counts, free, deadline)? {
            Some(out) => FlatAnswer::Owners(out),
            None => FlatAnswer::ReadAll,
        },
    })
}

/// The flat deal of [`assign_flat_ids`], or `None` when the group must be interned (not that
/// kind of group, or anything the interning path reports: a duplicate topic, a negative count,
/// counts that do not add up).
fn dealt(
    g: &FlatGroup<'_>,
    keys: &MemberKeys<'_>,
    counted: Option<(&[i32], &[i32])>,
) -> Result<Option<Vec<i32>>, InputError> {
    let Some(m) = keys.len() else {
        return Ok(None);
    };
    check_shapes_of(g, m)?;
    if !g.sub_offsets.is_empty() || !g.partition_rack_offsets.is_empty() || !g.assignable.is_empty() {
        return Ok(None);
    }
    match flat_deal(
        &g.topics,
        g.partition_counts,
        g.sub_topics,
        m,
        keys,
        counted,
        Some((g.owned_offsets, g.owned_topics, g.owned_partitions)),
        false,
    )? {
        Flat::Dealt(out) => Ok(Some(out)),
        Flat::Intern | Flat::NeedIds => Ok(None),
    }
}

/// The answer of [`counts_first`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CountsFirst {
    /// Read every member's current target ([`members_to_read`] decides nobody).
    ReadAll,
    /// `read[i]`: read member `i`'s current target, then call [`assign_flat_ids`] with the counts.
    Read(Vec<bool>),
    /// The assignment, as [`assign_flat_counted`] answers it (`k` partitions, then their `k`
    /// owners): every member was judged from its size and the group was dealt flat.
    Dealt(Vec<i32>),
    /// The answer depends on the member ids' order: call again with them.
    NeedIds,
}

/// The broker's first counts-first call in one: [`members_to_read`], and when it reads nobody and
/// the partitions nobody holds are known (`free`: the caller found no replica racks and every
/// partition assignable), the flat deal of [`assign_flat_ids`] straight away, so a group whose
/// current target is judged whole from its sizes (round 2, a member leaving, a member joining the
/// N = P series) takes one native call. The member ids are read only where the answer depends on
/// their order ([`members_to_read`]'s tie, the members the deal gives partitions to); without
/// them (`ids` None) such a group answers [`CountsFirst::NeedIds`].
pub fn counts_first(
    topics: &[String],
    partition_counts: &[i32],
    sub_offsets: &[i32],
    sub_topics: &[i32],
    member_counts: &[i32],
    free: Option<&[i32]>,
    keys: MemberKeys<'_>,
) -> Result<CountsFirst, InputError> {
    keys.check()?;
    if let Some(n) = keys.len().filter(|&n| n != member_counts.len()) {
        return Err(invalid(format!(
            "member ids: expected {}, got {n}",
            member_counts.len()
        )));
    }
    if partition_counts.len() != topics.len() {
        return Err(invalid(format!(
            "partition_counts: expected {} counts (one per topic), got {}",
            topics.len(),
            partition_counts.len()
        )));
    }
    if let Some(free) = free {
        check_free(free, partition_counts.iter().map(|&n| n.max(0) as usize).sum())?;
    }
    let mut need = false;
    let read = members_to_read(
        partition_counts,
        sub_offsets,
        sub_topics,
        member_counts,
        |over, first| {
            keys.order(over, first)?.ok_or_else(|| {
                need = true;
                invalid("member ids: needed for their order".to_string())
            })
        },
    );
    if need {
        return Ok(CountsFirst::NeedIds);
    }
    let Some(read) = read? else {
        return Ok(CountsFirst::ReadAll);
    };
    if read.contains(&true) || !sub_offsets.is_empty() {
        return Ok(CountsFirst::Read(read));
    }
    let Some(free) = free else {
        return Ok(CountsFirst::Read(read));
    };
    match flat_deal(
        topics,
        partition_counts,
        sub_topics,
        member_counts.len(),
        &keys,
        Some((member_counts, free)),
        None,
        true,
    )? {
        Flat::Dealt(out) => Ok(CountsFirst::Dealt(out)),
        Flat::Intern => Ok(CountsFirst::Read(read)),
        Flat::NeedIds => Ok(CountsFirst::NeedIds),
    }
}

/// What [`flat_deal`] found.
enum Flat {
    /// The answer.
    Dealt(Vec<i32>),
    /// Not a group the flat deal takes: intern it.
    Intern,
    /// The answer depends on the order of member ids not given.
    NeedIds,
}

/// The deal of a HOMOGENEOUS group without replica racks, every partition assignable (checked
/// by the callers), of `m` members, from the members' counts and, for the members
/// [`members_to_read`] reads, their current targets (`listed`): the constrained keep step on
/// those lists (in member order, [`by_hash`], the extra slots going to the members over q in that order;
/// a member's claims kept in `keep_order`, partition then topic), then the deal of the free
/// partitions and of what the read members let go. Lists naming a partition twice, a free one,
/// or one out of range, and counts that do not add up, leave the group to the interning path.
///
/// Only the members the deal gives partitions to are ordered: those below the quota q, and
/// of those at exactly q the first ones in member order, as many as the extra slots the pool fills (chosen
/// by selection, then ordered). [`crate::sticky::constrained::deal`] on those members alone places
/// every partition as it does on all of them in member order: the others get nothing there.
/// Member ids must be distinct; a duplicate among the members ordered is an error, and the broker
/// checks the rest (a duplicate id cannot key two members of its result map).
/// `everyone_counted`: the caller found [`members_to_read`] reads nobody of `counted`.
#[allow(clippy::too_many_arguments)]
fn flat_deal(
    topics: &[String],
    partition_counts: &[i32],
    sub_topics: &[i32],
    m: usize,
    keys: &MemberKeys<'_>,
    counted: Option<(&[i32], &[i32])>,
    listed: Listed<'_>,
    everyone_counted: bool,
) -> Result<Flat, InputError> {
    let t = topics.len();
    if m == 0
        || m > MAX_MEMBERS
        || keys.len().is_some_and(|n| n != m)
        || partition_counts.len() != t
        || partition_counts.iter().any(|&n| n < 0)
    {
        return Ok(Flat::Intern);
    }
    let total: usize = partition_counts.iter().map(|&n| n as usize).sum();
    // Every topic subscribed, once; the problem's topic order is name order.
    let mut subscribed = vec![false; t];
    for &ti in sub_topics {
        match usize::try_from(ti).ok().filter(|&ti| ti < t) {
            Some(ti) => subscribed[ti] = true,
            None => return Ok(Flat::Intern),
        }
    }
    if subscribed.contains(&false) {
        return Ok(Flat::Intern);
    }
    let mut by_name: Vec<usize> = (0..t).collect();
    by_name.sort_unstable_by(|&a, &b| topics[a].cmp(&topics[b]));
    if by_name.windows(2).any(|w| topics[w[0]] == topics[w[1]]) {
        return Ok(Flat::Intern);
    }
    let base: Vec<usize> = partition_counts
        .iter()
        .scan(0usize, |acc, &n| Some(std::mem::replace(acc, *acc + n as usize)))
        .collect();
    let q = (total / m) as u32;
    let extra = (total % m) as u32;
    // The counts in input order.
    let mut count = vec![0u32; m];
    let Some((member_counts, free)) = counted else {
        if listed.is_some_and(|(_, ot, _)| !ot.is_empty()) {
            return Ok(Flat::Intern);
        }
        let (who, held) = match receivers(&count, q, total, keys) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(Flat::NeedIds),
            Err(_) => return Ok(Flat::Intern),
        };
        let mut out = vec![-1i32; total];
        let pool = by_name
            .iter()
            .flat_map(|&ti| base[ti]..base[ti] + partition_counts[ti] as usize);
        crate::sticky::constrained::deal(held, q, pool, |k, f| out[f] = who[k as usize] as i32);
        return Ok(Flat::Dealt(out));
    };
    if member_counts.len() != m {
        return Ok(Flat::Intern);
    }
    check_free(free, total)?;
    let mut read: Option<Vec<bool>> = None;
    if !everyone_counted {
        let mut need = false;
        let rule = members_to_read(partition_counts, &[], sub_topics, member_counts, |over, first| {
            keys.order(over, first)?.ok_or_else(|| {
                need = true;
                invalid("member ids: needed for their order".to_string())
            })
        });
        if need {
            return Ok(Flat::NeedIds);
        }
        match rule? {
            Some(r) if r.contains(&true) => read = Some(r),
            Some(_) => {}
            None => return Ok(Flat::Intern),
        }
    }
    // The partitions the members read list (their current targets), each valid and held once,
    // none of them free; every other partition not free is a counted member's.
    let mut listed_total: i64 = 0;
    if let Some(read) = &read {
        let Some((oo, ot, op)) = listed.filter(|(oo, _, _)| oo.len() == m + 1) else {
            return Ok(Flat::Intern);
        };
        let mut mark = vec![false; total];
        for &f in free {
            mark[f as usize] = true;
        }
        for (i, &r) in read.iter().enumerate() {
            let (a, b) = (oo[i] as usize, oo[i + 1] as usize);
            if !r {
                if a != b {
                    return Ok(Flat::Intern);
                }
                continue;
            }
            for k in a..b {
                let Some(f) = flat_of(ot[k], op[k], partition_counts, &base) else {
                    return Ok(Flat::Intern);
                };
                if std::mem::replace(&mut mark[f], true) {
                    return Ok(Flat::Intern);
                }
                listed_total += 1;
            }
        }
    } else if listed.is_some_and(|(_, ot, _)| !ot.is_empty()) {
        return Ok(Flat::Intern);
    }
    let held: i64 = member_counts
        .iter()
        .enumerate()
        .filter(|&(i, _)| !read.as_ref().is_some_and(|r| r[i]))
        .map(|(_, &c)| c as i64)
        .sum();
    if held + listed_total != (total - free.len()) as i64 {
        return Ok(Flat::Intern);
    }
    let Some(read) = read else {
        for (c, &n) in count.iter_mut().zip(member_counts) {
            *c = n as u32;
        }
        // A counted member over q holds q + 1 and takes one of the extra slots (the constrained
        // keep step's check).
        let over = count.iter().filter(|&&c| c > q).count() as u32;
        assert!(
            over <= extra,
            "sticky: a counted member over quota without an extra slot (internal error)"
        );
        let (who, held) = match receivers(&count, q, free.len(), keys) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(Flat::NeedIds),
            Err(_) => return Ok(Flat::Intern),
        };
        // The free partitions (indexes into `free`) in the problem's order: topics by name.
        let mut pool: Vec<u32> = Vec::with_capacity(free.len());
        for &ti in &by_name {
            let lo = free.partition_point(|&f| (f as usize) < base[ti]);
            let hi = free.partition_point(|&f| (f as usize) < base[ti] + partition_counts[ti] as usize);
            pool.extend(lo as u32..hi as u32);
        }
        let mut out = vec![0i32; 2 * free.len()];
        out[..free.len()].copy_from_slice(free);
        let owners = &mut out[free.len()..];
        crate::sticky::constrained::deal(held, q, pool, |k, j| owners[j as usize] = who[k as usize] as i32);
        return Ok(Flat::Dealt(out));
    };
    // Some members were read: the constrained keep step on their lists, in member order (the
    // extra slots go to the members over q in that order, counted or read), then the deal of the
    // free partitions and of what the read members let go.
    let (oo, ot, op) = listed.expect("checked above");
    // Only the members holding more than q take extra slots, so only their order matters: every
    // member the rule reads is one of them (a member it counts holds at most q + 1). When each is
    // sure to take a slot while some are left (counted at q + 1, or read and listing more than
    // q), only which `extra` of them come first matters: a selection, not an order.
    let over_q = |i: usize| member_counts[i] < 0 || member_counts[i] as i64 > q as i64;
    if (0..m).any(|i| read[i] && !over_q(i)) {
        return Ok(Flat::Intern);
    }
    let over: Vec<usize> = (0..m).filter(|&i| over_q(i)).collect();
    let sure = over.iter().all(|&i| {
        if read[i] {
            oo[i + 1] - oo[i] > q as i32
        } else {
            member_counts[i] >= 0
        }
    });
    let order = match keys.order(&over, sure.then_some(extra as usize)) {
        Ok(Some(order)) => order,
        Ok(None) => return Ok(Flat::NeedIds),
        Err(_) => return Ok(Flat::Intern),
    };
    for i in (0..m).filter(|&i| !read[i] && !over_q(i)) {
        count[i] = member_counts[i] as u32;
    }
    let mut rank = vec![0u32; t];
    for (r, &ti) in by_name.iter().enumerate() {
        rank[ti] = r as u32;
    }
    let mut extra_left = extra;
    let mut out: Vec<(i32, i32)> = Vec::with_capacity(free.len() + listed_total as usize);
    let mut pool: Vec<usize> = free.iter().map(|&f| f as usize).collect();
    let mut mine: Vec<(u32, u32, usize)> = Vec::new();
    for &i in &order {
        let i = i as usize;
        if !read[i] {
            count[i] = member_counts[i] as u32;
            if count[i] > q {
                let Some(left) = extra_left.checked_sub(1) else {
                    return Ok(Flat::Intern);
                };
                extra_left = left;
            }
            continue;
        }
        // Its claims in keep order: (partition, topic by name), as `keep_order` sorts them.
        mine.clear();
        for k in oo[i] as usize..oo[i + 1] as usize {
            let ti = ot[k] as usize;
            mine.push((op[k] as u32, rank[ti], base[ti] + op[k] as usize));
        }
        let mut keep = mine.len();
        if keep as u32 > q {
            keep = q as usize;
            if extra_left > 0 {
                extra_left -= 1;
                keep += 1;
            }
            // The first `keep` in keep order stay: a selection, not a sort (the claims are
            // distinct, so the split is the sorted one's; both halves are ordered later).
            if keep < mine.len() {
                mine.select_nth_unstable(keep);
            }
        }
        count[i] = keep as u32;
        out.extend(mine[..keep].iter().map(|&(_, _, f)| (f as i32, i as i32)));
        pool.extend(mine[keep..].iter().map(|&(_, _, f)| f));
    }
    let topic_of = |f: usize| base.partition_point(|&b| b <= f) - 1;
    pool.sort_unstable_by_key(|&f| (rank[topic_of(f)], f));
    let (who, held) = match receivers(&count, q, pool.len(), keys) {
        Ok(Some(r)) => r,
        Ok(None) => return Ok(Flat::NeedIds),
        Err(_) => return Ok(Flat::Intern),
    };
    crate::sticky::constrained::deal(held, q, pool.iter().copied(), |k, f| {
        out.push((f as i32, who[k as usize] as i32))
    });
    Ok(Flat::Dealt(by_partition(out, total)))
}

/// `(partition, owner)` pairs, each partition once and within `0..total`, as the counts-first
/// answer: the partitions ascending, then their owners. Many pairs (a sixteenth of `total` or
/// more) are placed by partition in one pass over `total`, fewer are sorted.
fn by_partition(mut pairs: Vec<(i32, i32)>, total: usize) -> Vec<i32> {
    let k = pairs.len();
    let mut answer = vec![0i32; 2 * k];
    if k.saturating_mul(16) >= total {
        let mut owner = vec![-1i32; total];
        for &(f, o) in &pairs {
            owner[f as usize] = o;
        }
        let (at, owners) = answer.split_at_mut(k);
        let mut j = 0;
        for (f, &o) in owner.iter().enumerate().filter(|&(_, &o)| o >= 0) {
            at[j] = f as i32;
            owners[j] = o;
            j += 1;
        }
        debug_assert_eq!(j, k, "by_partition: a partition given twice");
    } else {
        pairs.sort_unstable();
        for (j, &(f, o)) in pairs.iter().enumerate() {
            answer[j] = f;
            answer[k + j] = o;
        }
    }
    answer
}

/// The current-target lists of the members read (`owned_offsets`, `owned_topics`,
/// `owned_partitions` as [`FlatGroup`] has them), when given.
type Listed<'a> = Option<(&'a [i32], &'a [i32], &'a [i32])>;

/// The input flat index of partition `p` of input topic `ti`, when both are in range.
fn flat_of(ti: i32, p: i32, partition_counts: &[i32], base: &[usize]) -> Option<usize> {
    let ti = usize::try_from(ti).ok().filter(|&ti| ti < partition_counts.len())?;
    let p = usize::try_from(p).ok().filter(|&p| p < partition_counts[ti] as usize)?;
    Some(base[ti] + p)
}

/// The members [`crate::sticky::constrained::deal`] gives some of `pool` partitions to, given
/// every member's count (input order; each at most q + 1, and the pool exactly what fills the
/// quotas and the extra slots left), in member order ([`by_hash`]) as the deal takes them, with
/// their counts: every member below q (in that order), then the members at exactly q that the
/// extra slots left over reach (the first ones; selected in linear time, then ordered). An error
/// names a duplicate id among them; `None`: their order needs ids not given.
#[allow(clippy::type_complexity)]
fn receivers(
    count: &[u32],
    q: u32,
    pool: usize,
    keys: &MemberKeys<'_>,
) -> Result<Option<(Vec<MemberIdx>, Vec<u32>)>, InputError> {
    let under: Vec<usize> = (0..count.len()).filter(|&i| count[i] < q).collect();
    let need: usize = under.iter().map(|&i| (q - count[i]) as usize).sum();
    let slots = pool.saturating_sub(need);
    let mut exact: Vec<usize> = if slots > 0 {
        (0..count.len()).filter(|&i| count[i] == q).collect()
    } else {
        Vec::new()
    };
    // At most one member of each kind: no order to find (the deal takes those below q first).
    if under.len() <= 1 && exact.len() <= 1 {
        let who: Vec<MemberIdx> = under.iter().chain(&exact).map(|&i| i as MemberIdx).collect();
        let held = who.iter().map(|&i| count[i as usize]).collect();
        return Ok(Some((who, held)));
    }
    let Some(mut who) = keys.order(&under, None)? else {
        return Ok(None);
    };
    if slots > 0 {
        if slots < exact.len() {
            let Some(first) = keys.order(&exact, Some(slots))? else {
                return Ok(None);
            };
            exact = first[..slots].iter().map(|&i| i as usize).collect();
        }
        let Some(rest) = keys.order(&exact, None)? else {
            return Ok(None);
        };
        who.extend(rest);
    }
    let held = who.iter().map(|&i| count[i as usize]).collect();
    Ok(Some((who, held)))
}

/// A flat group interned as a [`Problem`], with the maps between the caller's indexes and the
/// problem's.
struct Built<'a> {
    g: FlatGroup<'a>,
    problem: Problem,
    /// Input flat index of each input topic's partition 0.
    base: Vec<usize>,
    /// Input topic index -> the problem's topic id.
    tids: Vec<u32>,
    /// Empty (every partition assignable), or per input flat partition its index in its topic's
    /// problem (assignable partitions renumbered in order), or -1.
    compact: Vec<i32>,
    total: usize,
}

impl<'a> Built<'a> {
    /// Intern a checked group ([`check_shapes`] returned `total`).
    fn new(mut g: FlatGroup<'a>, total: usize) -> Result<Built<'a>, InputError> {
        let member_ids = std::mem::take(&mut g.member_ids);
        let m = member_ids.len();
        let t = g.topics.len();
        let base: Vec<usize> = g
            .partition_counts
            .iter()
            .scan(0usize, |acc, &n| {
                let b = *acc;
                *acc += n.max(0) as usize;
                Some(b)
            })
            .collect();
        // Not-assignable partitions are left out: topic t keeps its assignable partitions,
        // renumbered in order. The counts are the builder's input (it checks them, the caps
        // included, before anything is allocated per partition).
        let counts: Vec<i64> = (0..t)
            .map(|ti| {
                let n = g.partition_counts[ti] as i64;
                if g.assignable.is_empty() || n <= 0 {
                    n
                } else {
                    let b0 = base[ti];
                    g.assignable[b0..b0 + n as usize].iter().filter(|&&a| a != 0).count() as i64
                }
            })
            .collect();
        let mut b = ProblemBuilder::new(g.topics.iter().map(|s| s.as_str()).zip(counts.iter().copied()))?;
        let mut compact: Vec<i32> = Vec::new();
        if !g.assignable.is_empty() {
            compact = vec![-1; total];
            for ti in 0..t {
                let mut k = 0i32;
                for p in 0..g.partition_counts[ti].max(0) as usize {
                    if g.assignable[base[ti] + p] != 0 {
                        compact[base[ti] + p] = k;
                        k += 1;
                    }
                }
            }
        }
        let tids: Vec<u32> = (0..t)
            .map(|i| {
                b.given_topic(i)
                    .ok_or_else(|| invalid("topics: internal index".to_string()))
            })
            .collect::<Result<_, _>>()?;
        b.reserve_members(m);
        // TopicIds are name order: sorting a subscription's ids sorts its names (no string sort),
        // and a member subscribed like the one before reuses its SubId (no hashing of names).
        let mut name_of: Vec<&str> = vec![""; t];
        for (i, &tid) in tids.iter().enumerate() {
            name_of[tid as usize] = g.topics[i].as_str();
        }
        let mut names: Vec<&str> = Vec::new();
        let mut sub_ids: Vec<u32> = Vec::new();
        let mut prev: Option<(Vec<u32>, u32)> = None;
        // The previous member's subscription as given, and its SubId: a member whose topics come in
        // the same order (every member of a HOMOGENEOUS group, as Java repeats them) reuses it
        // without sorting.
        let mut prev_raw: Option<(&[i32], u32)> = None;
        let mut owned: Vec<PartId> = Vec::new();
        for (i, id) in member_ids.into_iter().enumerate() {
            let raw = subscription(g.sub_offsets, g.sub_topics, i);
            let sub = match prev_raw {
                Some((r, s)) if r == raw => s,
                _ => {
                    sub_ids.clear();
                    sub_ids.extend(raw.iter().map(|&x| tids[x as usize]));
                    sub_ids.sort_unstable();
                    sub_ids.dedup();
                    match &prev {
                        Some((ids, s)) if *ids == sub_ids => *s,
                        _ => {
                            names.clear();
                            names.extend(sub_ids.iter().map(|&x| name_of[x as usize]));
                            let s = b.subscription(&names);
                            prev = Some((sub_ids.clone(), s));
                            s
                        }
                    }
                }
            };
            prev_raw = Some((raw, sub));
            owned.clear();
            let (o0, o1) = (g.owned_offsets[i] as usize, g.owned_offsets[i + 1] as usize);
            for k in o0..o1 {
                let ti = g.owned_topics[k];
                if ti < 0 {
                    continue;
                }
                let local = built_local(&g, &base, &compact, ti as usize, g.owned_partitions[k] as i64);
                if let Some(p) = b.partition(tids[ti as usize], local) {
                    owned.push(p);
                }
            }
            let rack = match g.member_racks[i] {
                r if r >= 0 => Some(g.rack_names[r as usize].as_str()),
                _ => None,
            };
            b.add_member(id, sub, owned.clone(), 0, rack, None)?;
        }
        if !g.partition_rack_offsets.is_empty() {
            b.with_partition_racks();
            let mut racks: Vec<&str> = Vec::new();
            for ti in 0..t {
                for p in 0..g.partition_counts[ti].max(0) as usize {
                    let flat = base[ti] + p;
                    let (r0, r1) = (
                        g.partition_rack_offsets[flat] as usize,
                        g.partition_rack_offsets[flat + 1] as usize,
                    );
                    if r0 == r1 {
                        continue;
                    }
                    racks.clear();
                    racks.extend(
                        g.partition_racks[r0..r1]
                            .iter()
                            .map(|&r| g.rack_names[r as usize].as_str()),
                    );
                    b.add_partition_racks(tids[ti], built_local(&g, &base, &compact, ti, p as i64), &racks);
                }
            }
        }
        let problem = b.build_by_hash()?;
        Ok(Built {
            g,
            problem,
            base,
            tids,
            compact,
            total,
        })
    }

    /// The problem's flat id of the caller's partition `p` of input topic `ti`, or `None` (out of
    /// range, or not assignable).
    fn flat(&self, ti: usize, p: i64) -> Option<PartId> {
        b_partition(
            &self.problem,
            self.tids[ti],
            built_local(&self.g, &self.base, &self.compact, ti, p),
        )
    }

    /// Member index (in member order) -> the caller's index.
    fn caller(&self) -> Vec<i32> {
        let mut caller = vec![0i32; self.problem.members.len()];
        for (pos, &idx) in self.problem.input_order.iter().enumerate() {
            caller[idx as usize] = pos as i32;
        }
        caller
    }

    /// The problem's owner array as owners per input flat partition (caller's member indexes, -1
    /// for nobody).
    fn owners(&self, owner: &[u32]) -> Vec<i32> {
        let caller = self.caller();
        let mut out = vec![-1i32; self.total];
        let to_caller = |o: u32| if o == NO_OWNER { -1 } else { caller[o as usize] };
        for ti in 0..self.g.topics.len() {
            let n = self.g.partition_counts[ti].max(0) as usize;
            let dst = &mut out[self.base[ti]..self.base[ti] + n];
            if self.compact.is_empty() {
                // Every partition assignable: the topic's partitions are the problem's, in order.
                let from = self.problem.topic_base[self.tids[ti] as usize] as usize;
                for (d, &o) in dst.iter_mut().zip(&owner[from..from + n]) {
                    *d = to_caller(o);
                }
            } else {
                for (p, d) in dst.iter_mut().enumerate() {
                    if let Some(flat) = self.flat(ti, p as i64) {
                        *d = to_caller(owner[flat as usize]);
                    }
                }
            }
        }
        out
    }
}

/// Partition `p` of input topic `ti` in its topic's problem (renumbered when some partitions are
/// not assignable; -1 when out of range or not assignable).
fn built_local(g: &FlatGroup<'_>, base: &[usize], compact: &[i32], ti: usize, p: i64) -> i64 {
    if compact.is_empty() {
        p
    } else if p < 0 || p >= g.partition_counts[ti] as i64 {
        -1
    } else {
        compact[base[ti] + p as usize] as i64
    }
}

/// The problem's flat id of partition `p` of topic `t`, or `None` when out of range.
fn b_partition(problem: &Problem, t: u32, p: i64) -> Option<PartId> {
    let len = problem.topic_len[t as usize];
    (p >= 0 && (p as u64) < len as u64).then(|| problem.topic_base[t as usize] + p as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `server-kassign`'s member order over the ids `id(i)` (every id given, so never `None`).
    fn hash_order<'i>(
        subset: &[usize],
        first: Option<usize>,
        id: impl Fn(usize) -> &'i [u8],
    ) -> Result<Vec<MemberIdx>, InputError> {
        Ok(by_hash(subset, first, |i| java_hash(id(i)), Some(&id))?.expect("every id given"))
    }

    /// Both of `by_partition`'s ways (placed by partition, sorted) against sorting the pairs.
    #[test]
    fn by_partition_orders_the_pairs() {
        let mut next = crate::model::xorshift(0x5DEE_CE66_D1CE_4E5B);
        let (mut placed, mut sorted) = (0, 0);
        for _ in 0..2000 {
            let total = 1 + next(400) as usize;
            // Half of the cases few pairs (under a sixteenth of the partitions), half any number.
            let few = next(2) == 0;
            let k = next(if few { total as u64 / 16 + 1 } else { total as u64 + 1 }) as usize;
            // k distinct partitions, shuffled, each with an owner.
            let mut parts: Vec<i32> = (0..total as i32).collect();
            for j in (1..parts.len()).rev() {
                parts.swap(j, next(j as u64 + 1) as usize);
            }
            let pairs: Vec<(i32, i32)> = parts[..k].iter().map(|&f| (f, next(50) as i32)).collect();
            let mut expect = pairs.clone();
            expect.sort();
            let mut want: Vec<i32> = expect.iter().map(|&(f, _)| f).collect();
            want.extend(expect.iter().map(|&(_, o)| o));
            if k * 16 >= total {
                placed += 1;
            } else {
                sorted += 1;
            }
            assert_eq!(by_partition(pairs, total), want, "total {total}, k {k}");
        }
        assert!(placed > 200 && sorted > 200, "placed {placed}, sorted {sorted}");
    }

    #[allow(clippy::too_many_arguments)]
    fn group<'a>(
        ids: &[&str],
        topics: &[&str],
        counts: &'a [i32],
        sub_offsets: &'a [i32],
        sub_topics: &'a [i32],
        owned_offsets: &'a [i32],
        owned_topics: &'a [i32],
        owned_partitions: &'a [i32],
        member_racks: &'a [i32],
    ) -> FlatGroup<'a> {
        FlatGroup {
            member_ids: ids.iter().map(|s| s.to_string()).collect(),
            member_racks,
            rack_names: vec!["a".into(), "b".into()],
            topics: topics.iter().map(|s| s.to_string()).collect(),
            partition_counts: counts,
            sub_offsets,
            sub_topics,
            owned_offsets,
            owned_topics,
            owned_partitions,
            ..Default::default()
        }
    }

    #[test]
    fn keeps_the_current_target_when_balanced() {
        // c1 holds t-2 and t-3, c0 holds t-0 and t-1: balanced already, nothing moves.
        let g = group(
            &["c1", "c0"],
            &["t"],
            &[4],
            &[0, 1, 2],
            &[0, 0],
            &[0, 2, 4],
            &[0, 0, 0, 0],
            &[2, 3, 0, 1],
            &[-1, -1],
        );
        assert_eq!(assign_flat(g).unwrap(), vec![1, 1, 0, 0]);
    }

    #[test]
    fn not_assignable_partitions_stay_unassigned() {
        let mut g = group(
            &["c0", "c1"],
            &["t"],
            &[4],
            &[0, 1, 2],
            &[0, 0],
            &[0, 0, 0],
            &[],
            &[],
            &[-1, -1],
        );
        let flags = [1u8, 0, 1, 1];
        g.assignable = &flags;
        let out = assign_flat(g).unwrap();
        assert_eq!(out[1], -1);
        let mut loads = [0, 0];
        for &o in &out {
            if o >= 0 {
                loads[o as usize] += 1;
            }
        }
        assert_eq!(loads.iter().sum::<i32>(), 3);
        assert!((loads[0] - loads[1]).abs() <= 1);
    }

    #[test]
    fn bad_shapes_are_errors_not_panics() {
        let g = group(&["c0"], &["t"], &[2], &[0, 2], &[0], &[0, 0], &[], &[], &[-1]);
        assert!(assign_flat(g).is_err());
        let g = group(&["c0"], &["t"], &[2], &[0, 1], &[3], &[0, 0], &[], &[], &[-1]);
        assert!(assign_flat(g).is_err());
        let g = group(&["c0"], &["t"], &[-2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        assert!(assign_flat(g).is_err());
        let g = group(&["c0"], &["t"], &[2], &[0, 1], &[0], &[0, 1], &[0], &[7], &[5]);
        assert!(assign_flat(g).is_err());
        let g = group(
            &["c0", "c0"],
            &["t"],
            &[2],
            &[0, 1, 2],
            &[0, 0],
            &[0, 0, 0],
            &[],
            &[],
            &[-1, -1],
        );
        assert!(assign_flat(g).is_err());
        // Partition-indexed arrays of the wrong length, and a replica rack out of range.
        let mut g = group(&["c0"], &["t"], &[2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        let flags = [1u8];
        g.assignable = &flags;
        assert!(matches!(assign_flat(g), Err(InputError::Invalid(msg)) if msg.starts_with("assignable")));
        let mut g = group(&["c0"], &["t"], &[2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        let offs = [0, 1];
        g.partition_rack_offsets = &offs;
        g.partition_racks = &[0];
        assert!(matches!(assign_flat(g), Err(InputError::Invalid(msg)) if msg.starts_with("partition_rack_offsets")));
        let mut g = group(&["c0"], &["t"], &[2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        let offs = [0, 1, 2];
        g.partition_rack_offsets = &offs;
        g.partition_racks = &[0, 2];
        assert!(matches!(assign_flat(g), Err(InputError::Invalid(msg)) if msg.starts_with("partition_racks")));
        // The caps are the builder's: a negative count and a total beyond MAX_PARTITIONS, with
        // the assignable flags given too (counted before the builder sees the counts).
        let mut g = group(&["c0"], &["t"], &[-2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        g.assignable = &[];
        assert!(matches!(assign_flat(g), Err(InputError::NegativePartitionCount(..))));
        let counts = [i32::MAX, i32::MAX];
        let g = group(&["c0"], &["t", "u"], &counts, &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        assert!(matches!(assign_flat(g), Err(InputError::TooManyPartitions(_))));
    }

    #[test]
    fn odd_history_is_filtered() {
        // An unknown topic (-1), an out-of-range index and a partition two members hold.
        let g = group(
            &["c0", "c1"],
            &["t"],
            &[2],
            &[0, 1, 2],
            &[0, 0],
            &[0, 3, 4],
            &[-1, 0, 0, 0],
            &[0, 9, 1, 1],
            &[-1, -1],
        );
        let out = assign_flat(g).unwrap();
        assert!(out.iter().all(|&o| o == 0 || o == 1));
        assert_ne!(out[0], out[1]);
    }

    /// A heterogeneous group: `n` topics of `size` partitions; member i subscribes to the topics
    /// `j` with `(i + j) % 3 != 0`, and holds every partition of topic `i % n` as its current target.
    fn heterogeneous(members: usize, n: usize, size: i64) -> Problem {
        let topics: Vec<(String, i64)> = (0..n).map(|j| (format!("t{j:03}"), size)).collect();
        let members = (0..members)
            .map(|i| crate::model::MemberInput {
                id: format!("m{i:04}"),
                topics: (0..n)
                    .filter(|j| (i + j) % 3 != 0)
                    .map(|j| format!("t{j:03}"))
                    .collect(),
                owned: (0..size).map(|p| (format!("t{:03}", i % n), p)).collect(),
                generation: 1,
                rack: None,
                group_instance_id: None,
            })
            .collect();
        Problem::build(topics, members, vec![]).unwrap()
    }

    fn sum_of_squares(problem: &Problem, plan: &Assignment) -> u64 {
        plan.per_member(problem.members.len())
            .iter()
            .map(|v| (v.len() as u64).pow(2))
            .sum()
    }

    #[test]
    fn out_of_work_falls_back_to_uniform() {
        let p = heterogeneous(12, 9, 7);
        let (plan, fell_back) = assign_within(&p, WORK_BUDGET, None);
        assert!(!fell_back);
        let uniform = super::super::uniform::assign(&p);
        assert!(sum_of_squares(&p, &plan) <= sum_of_squares(&p, &uniform));
        // A budget too small for even one balancing round: uniform's plan, exactly.
        let (fallback, fell_back) = assign_within(&p, 10, None);
        assert!(fell_back);
        assert_eq!(fallback.owner, uniform.owner);
        // Homogeneous subscriptions have no iterative step: no budget needed.
        let topics = vec![("t".to_string(), 5)];
        let same = (0..3)
            .map(|i| crate::model::MemberInput {
                id: format!("c{i}"),
                topics: vec!["t".into()],
                owned: vec![],
                generation: -1,
                rack: None,
                group_instance_id: None,
            })
            .collect();
        let q = Problem::build(topics, same, vec![]).unwrap();
        assert_eq!(assign_within(&q, 0, None).0.owner, assign(&q).owner);
        assert!(!assign_within(&q, 0, None).1);
    }

    #[test]
    fn a_deadline_past_gives_the_fast_balanced_path() {
        // Heterogeneous: uniform's plan, exactly, however small the group.
        let p = heterogeneous(12, 9, 7);
        let (plan, fell_back) = assign_within(&p, WORK_BUDGET, Some(Instant::now()));
        assert!(fell_back);
        assert_eq!(plan.owner, super::super::uniform::assign(&p).owner);
        // Homogeneous with racks: the rack pass stops, the deal stays as balanced and as sticky.
        let topics = vec![("t".to_string(), 5000)];
        let members: Vec<crate::model::MemberInput> = (0..7)
            .map(|i| crate::model::MemberInput {
                id: format!("c{i}"),
                topics: vec!["t".into()],
                owned: (0..300).map(|p| ("t".to_string(), i * 300 + p)).collect(),
                generation: 1,
                rack: Some(format!("r{}", i % 3)),
                group_instance_id: None,
            })
            .collect();
        let racks = (0..5000)
            .map(|p| ("t".to_string(), p, vec![format!("r{}", p % 3)]))
            .collect();
        let q = Problem::build(topics, members, racks).unwrap();
        let (late, fell_back) = assign_within(&q, WORK_BUDGET, Some(Instant::now()));
        let (on_time, _) = assign_within(&q, WORK_BUDGET, None);
        assert!(!fell_back);
        let loads = |a: &Assignment| -> Vec<usize> {
            let mut v: Vec<usize> = a.per_member(7).iter().map(|v| v.len()).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(loads(&late), loads(&on_time));
        assert!(*loads(&late).last().unwrap() - loads(&late)[0] <= 1);
        let kept = |a: &Assignment| {
            (0..7u32)
                .map(|m| {
                    q.members[m as usize]
                        .owned
                        .iter()
                        .filter(|&&p| a.owner[p as usize] == m)
                        .count()
                })
                .sum::<usize>()
        };
        assert_eq!(kept(&late), kept(&on_time));
        let matched = |a: &Assignment| {
            (0..q.num_partitions() as usize)
                .filter(|&p| {
                    let m = a.owner[p] as usize;
                    q.members[m].rack.is_some_and(|r| q.partition_racks[p].contains(&r))
                })
                .count()
        };
        assert!(matched(&late) < matched(&on_time), "the rack pass did not stop");
    }

    #[test]
    fn lengths_over_the_caps_are_refused() {
        let ok = Lengths {
            member_ids: 2,
            member_id_chars: 4,
            member_racks: 2,
            topics: 1,
            topic_chars: 22,
            partition_counts: 1,
            owned_offsets: 3,
            ..Lengths::default()
        };
        ok.check().unwrap();
        ok.check_with_total(10).unwrap();
        let refused = |l: Lengths, what: &str| {
            let e = l.check().unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        };
        let m = BROKER_MAX_MEMBERS + 1;
        refused(
            Lengths {
                member_ids: m,
                member_racks: m,
                owned_offsets: m + 1,
                ..ok.clone()
            },
            "members",
        );
        refused(
            Lengths {
                member_id_chars: 2 * BROKER_MAX_CHARS_PER_STRING + 1,
                ..ok.clone()
            },
            "member id characters",
        );
        refused(
            Lengths {
                owned_topics: BROKER_MAX_PARTITIONS + 1,
                owned_partitions: BROKER_MAX_PARTITIONS + 1,
                ..ok.clone()
            },
            "current target",
        );
        refused(
            Lengths {
                owned_partitions: 1,
                ..ok.clone()
            },
            "owned_partitions",
        );
        refused(
            Lengths {
                member_racks: 1,
                ..ok.clone()
            },
            "member_racks",
        );
        refused(
            Lengths {
                sub_offsets: 2,
                ..ok.clone()
            },
            "sub_offsets",
        );
        let e = Lengths {
            assignable: 9,
            ..ok.clone()
        }
        .check_with_total(10)
        .unwrap_err();
        assert!(e.to_string().contains("assignable"), "{e}");
        let e = Lengths {
            free: Some(11),
            member_counts: Some(2),
            ..ok.clone()
        }
        .check_with_total(10);
        assert!(e.unwrap_err().to_string().contains("free"));
        assert!(partition_total(&[BROKER_MAX_PARTITIONS as i32, -5]).is_ok());
        let e = partition_total(&[BROKER_MAX_PARTITIONS as i32, 1]).unwrap_err();
        assert!(e.to_string().contains("partitions"), "{e}");
    }

    #[test]
    fn a_large_heterogeneous_group_stays_within_the_budget() {
        // 300 members over 60 topics of 50 partitions (3,000 partitions), many classes.
        let p = heterogeneous(300, 60, 50);
        assert!(!assign_within(&p, WORK_BUDGET, None).1);
    }

    #[test]
    fn racks_break_ties_without_costing_balance() {
        // Two members on racks a and b, four partitions with one replica each (a, a, b, b), fresh.
        let mut g = group(
            &["c0", "c1"],
            &["t"],
            &[4],
            &[0, 1, 2],
            &[0, 0],
            &[0, 0, 0],
            &[],
            &[],
            &[1, 0],
        );
        let offs = [0, 1, 2, 3, 4];
        let racks = [0, 0, 1, 1];
        g.partition_rack_offsets = &offs;
        g.partition_racks = &racks;
        // c0 is on rack b, c1 on rack a.
        assert_eq!(assign_flat(g).unwrap(), vec![1, 1, 0, 0]);
    }

    /// A random group for the counts-first differential test, as the broker plugin would hand it
    /// over: claims as per-topic sets (so no pair twice for one member), some naming an unknown
    /// topic (-1) or a partition out of range, some claimed by two members, some members well
    /// over quota, racks on members and partitions.
    struct Random {
        ids: Vec<String>,
        counts: Vec<i32>,
        subs: Vec<Vec<i32>>,
        racks: Vec<i32>,
        owned: Vec<Vec<(i32, i32)>>,
        /// Per member: its map holds an empty set (Java counts it as -1).
        empty: Vec<bool>,
        rack_offsets: Vec<i32>,
        rack_of: Vec<i32>,
    }

    impl Random {
        fn group<'a>(
            &'a self,
            sub_offsets: &'a [i32],
            sub_topics: &'a [i32],
            owned_offsets: &'a [i32],
            owned_topics: &'a [i32],
            owned_partitions: &'a [i32],
        ) -> FlatGroup<'a> {
            FlatGroup {
                member_ids: self.ids.clone(),
                member_racks: &self.racks,
                rack_names: vec!["a".into(), "b".into()],
                topics: (0..self.counts.len()).map(|t| format!("t{t}")).collect(),
                partition_counts: &self.counts,
                sub_offsets,
                sub_topics,
                owned_offsets,
                owned_topics,
                owned_partitions,
                partition_rack_offsets: &self.rack_offsets,
                partition_racks: &self.rack_of,
                assignable: &[],
            }
        }
    }

    fn random_group(seed: u64) -> Random {
        let mut next = crate::model::xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let nt = 1 + next(4) as usize;
        let counts: Vec<i32> = (0..nt).map(|_| next(9) as i32).collect();
        let m = 1 + next(8) as usize;
        let homogeneous = next(4) != 0;
        let all: Vec<i32> = (0..nt as i32).rev().collect();
        let subs: Vec<Vec<i32>> = (0..m)
            .map(|_| {
                if homogeneous {
                    all.clone()
                } else {
                    (0..nt as i32).filter(|_| next(3) != 0).collect()
                }
            })
            .collect();
        let racks: Vec<i32> = (0..m).map(|_| next(3) as i32 - 1).collect();
        let total: i32 = counts.iter().sum();
        let mut owned: Vec<Vec<(i32, i32)>> = vec![Vec::new(); m];
        let mut empty = vec![false; m];
        for i in 0..m {
            let n = match next(4) {
                0 => 0,
                1 => next(total as u64 + 3),
                _ => next(total as u64 / m as u64 + 2),
            };
            for _ in 0..n {
                let t = if next(12) == 0 { -1 } else { next(nt as u64) as i32 };
                let range = if t >= 0 { counts[t as usize] } else { 4 };
                let p = if next(15) == 0 {
                    range + next(3) as i32
                } else {
                    next(range as u64) as i32
                };
                if !owned[i].contains(&(t, p)) {
                    owned[i].push((t, p));
                }
            }
            empty[i] = next(15) == 0;
        }
        // Half of the groups start from a clean, disjoint current target instead.
        if next(2) == 0 {
            let mut seen = std::collections::HashSet::new();
            for o in owned.iter_mut() {
                o.retain(|&(t, p)| t >= 0 && p < counts[t as usize] && seen.insert((t, p)));
            }
            empty.iter_mut().for_each(|e| *e = false);
        }
        let mut rack_offsets = vec![0];
        let mut rack_of = Vec::new();
        let with_racks = next(2) == 0;
        for _ in 0..total {
            if with_racks {
                for r in 0..2 {
                    if next(2) == 0 {
                        rack_of.push(r);
                    }
                }
            }
            rack_offsets.push(rack_of.len() as i32);
        }
        Random {
            ids: (0..m).map(|i| format!("m{}", next(1000) * 10 + i as u64)).collect(),
            counts,
            subs,
            racks,
            owned,
            empty,
            rack_offsets: if with_racks { rack_offsets } else { Vec::new() },
            rack_of,
        }
    }

    /// The counts-first path ([`members_to_read`], then [`assign_flat_counted`] with only the
    /// members to read listed) gives [`assign_flat`]'s owners on every partition it answers for,
    /// and each partition it leaves out is one a counted member held and keeps.
    #[test]
    fn counts_first_equals_the_full_read() {
        let (mut answered, mut counted_over_quota, mut by_id_order) = (0, 0, 0);
        for seed in 0..16000u64 {
            let r = random_group(seed);
            let m = r.ids.len();
            let total: i32 = r.counts.iter().sum();
            let mut sub_offsets = vec![0];
            let mut sub_topics = Vec::new();
            for s in &r.subs {
                sub_topics.extend_from_slice(s);
                sub_offsets.push(sub_topics.len() as i32);
            }
            let mut owned_offsets = vec![0];
            let (mut owned_topics, mut owned_partitions) = (Vec::new(), Vec::new());
            for o in &r.owned {
                owned_topics.extend(o.iter().map(|&(t, _)| t));
                owned_partitions.extend(o.iter().map(|&(_, p)| p));
                owned_offsets.push(owned_topics.len() as i32);
            }
            let Ok(full) = assign_flat(r.group(
                &sub_offsets,
                &sub_topics,
                &owned_offsets,
                &owned_topics,
                &owned_partitions,
            )) else {
                continue; // duplicate member ids: the counted path must refuse them too
            };
            // What the plugin reads without the elements: set sizes, and isPartitionAssigned.
            let member_counts: Vec<i32> = (0..m)
                .map(|i| if r.empty[i] { -1 } else { r.owned[i].len() as i32 })
                .collect();
            let base: Vec<i32> = r
                .counts
                .iter()
                .scan(0, |a, &n| Some(std::mem::replace(a, *a + n)))
                .collect();
            let mut held = vec![false; total as usize];
            for &(t, p) in r.owned.iter().flatten() {
                if t >= 0 && p < r.counts[t as usize] {
                    held[(base[t as usize] + p) as usize] = true;
                }
            }
            let free: Vec<i32> = (0..total).filter(|&f| !held[f as usize]).collect();
            let ids = |over: &[usize], first| hash_order(over, first, |i| r.ids[i].as_bytes());
            let Some(read) = members_to_read(&r.counts, &sub_offsets, &sub_topics, &member_counts, ids).unwrap() else {
                continue;
            };
            let mut offsets = vec![0];
            let (mut topics, mut partitions) = (Vec::new(), Vec::new());
            for (owned, &listed) in r.owned.iter().zip(&read) {
                if listed {
                    topics.extend(owned.iter().map(|&(t, _)| t));
                    partitions.extend(owned.iter().map(|&(_, p)| p));
                }
                offsets.push(topics.len() as i32);
            }
            let clean = r
                .owned
                .iter()
                .flatten()
                .all(|&(t, p)| t >= 0 && p < r.counts[t as usize])
                && r.owned.iter().flatten().count() == total as usize - free.len();
            let counted = assign_flat_counted(
                r.group(&sub_offsets, &sub_topics, &offsets, &topics, &partitions),
                &member_counts,
                &free,
                None,
            )
            .unwrap();
            let Some(pairs) = counted else {
                assert!(
                    !clean,
                    "seed {seed}: a clean current target must not need the full read"
                );
                continue;
            };
            answered += 1;
            let q = total as usize / m;
            if (0..m).any(|i| !read[i] && member_counts[i] as usize > q) {
                counted_over_quota += 1;
                let over = member_counts.iter().filter(|&&c| c < 0 || c as usize > q).count();
                if over > total as usize % m {
                    by_id_order += 1; // some member over q gave its extra slot up
                }
            }
            let mut answer = vec![None; total as usize];
            let (at, owners) = pairs.split_at(pairs.len() / 2);
            for (&f, &o) in at.iter().zip(owners) {
                answer[f as usize] = Some(o);
            }
            for f in 0..total as usize {
                match answer[f] {
                    Some(o) => assert_eq!(o, full[f], "seed {seed}: partition {f}"),
                    None => {
                        let o = full[f];
                        assert!(o >= 0 && !read[o as usize], "seed {seed}: {f} left to a counted member");
                        let t = base.iter().rposition(|&b| b <= f as i32).unwrap();
                        assert!(
                            r.owned[o as usize].contains(&(t as i32, f as i32 - base[t])),
                            "seed {seed}: {f}"
                        );
                    }
                }
            }
        }
        assert!(answered > 2000, "only {answered} groups took the counts-first path");
        assert!(
            counted_over_quota > 400,
            "only {counted_over_quota} groups counted a member holding q + 1"
        );
        assert!(
            by_id_order > 40,
            "only {by_id_order} groups counted a member holding q + 1 in member order"
        );
    }

    /// The rule with the ids' whole order (which the contract allows for a selection too, and
    /// which it used before it selected) and with the selection `by_hash` makes: the same members
    /// read, on random sizes around the quota, unknown sizes among them.
    #[test]
    fn members_to_read_selects_as_the_whole_order_decides() {
        let (mut selected, mut ordered) = (0, 0);
        for seed in 0..3000u64 {
            let mut next = crate::model::xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 3);
            let m = 1 + next(40) as usize;
            let q = next(4) as i32;
            let total = q as i64 * m as i64 + next(m as u64) as i64;
            let counts = [total as i32];
            let ids: Vec<String> = (0..m).map(|i| format!("member-{}-{i}", next(1000))).collect();
            let member_counts: Vec<i32> = (0..m)
                .map(|_| match next(10) {
                    0 => -1,
                    1..=5 => q + 1,
                    6 => q + 2,
                    _ => next(q as u64 + 1) as i32,
                })
                .collect();
            let (mut asked_first, mut asked_order) = (false, false);
            let whole = members_to_read(&counts, &[], &[0], &member_counts, |over, _| {
                asked_order = true;
                hash_order(over, None, |i| ids[i].as_bytes())
            });
            let selection = members_to_read(&counts, &[], &[0], &member_counts, |over, first| {
                asked_first = first.is_some();
                hash_order(over, first, |i| ids[i].as_bytes())
            });
            assert_eq!(whole.unwrap(), selection.unwrap(), "seed {seed}: {member_counts:?}");
            if asked_first {
                selected += 1;
            } else if asked_order {
                ordered += 1;
            }
        }
        assert!(
            selected > 300 && ordered > 300,
            "selected {selected}, ordered {ordered}"
        );
    }

    #[test]
    fn members_to_read_reads_only_members_over_quota() {
        // The ids are asked for only when the extra slots do not reach every member over q.
        let unasked = |_: &[usize], _| Err(invalid("the ids were asked for".to_string()));
        let ids = |v: &[&str]| {
            let v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            move |over: &[usize], first| hash_order(over, first, |i| v[i].as_bytes())
        };
        // 10 partitions, 3 members: q = 3, r = 1. Counts 3, 4 and -1 (an empty set): two members
        // may be over q; "b", first by hash (one-letter ids: the letter's code), gets the one extra
        // slot and keeps its 4.
        let counts = [6, 4];
        let read = members_to_read(&counts, &[], &[1, 0], &[3, 4, -1], ids(&["a", "b", "c"])).unwrap();
        assert_eq!(read, Some(vec![false, false, true]));
        let read = members_to_read(&counts, &[], &[1, 0], &[3, 4, -1], ids(&["a", "c", "b"])).unwrap();
        assert_eq!(read, Some(vec![false, true, true]));
        // A topic nobody subscribes to: the rule does not apply.
        assert_eq!(members_to_read(&[6, 4, 1], &[], &[1, 0], &[0], unasked).unwrap(), None);
        // Different subscriptions (as sets): the rule does not apply.
        assert_eq!(
            members_to_read(&counts, &[0, 2, 3], &[0, 1, 1], &[0, 0], unasked).unwrap(),
            None
        );
        // The same set in another order does.
        assert!(members_to_read(&counts, &[0, 2, 4], &[0, 1, 1, 0], &[0, 0], unasked)
            .unwrap()
            .is_some());
        // One member over q keeps q + 1, so a member holding 4 is counted, without the ids.
        assert_eq!(
            members_to_read(&counts, &[], &[1, 0], &[4, 3, 3], unasked).unwrap(),
            Some(vec![false, false, false])
        );
        // Of two members holding 4, the first in member order keeps 4 (counted), the other gives one up.
        assert_eq!(
            members_to_read(&counts, &[], &[1, 0], &[4, 4, 2], ids(&["a", "b", "c"])).unwrap(),
            Some(vec![false, true, false])
        );
        assert_eq!(
            members_to_read(&counts, &[], &[1, 0], &[4, 4, 2], ids(&["b", "a", "c"])).unwrap(),
            Some(vec![true, false, false])
        );
        // A member of unknown size first in member order: nobody can say who gets the slot.
        assert_eq!(
            members_to_read(&counts, &[], &[1, 0], &[4, -1, 2], ids(&["b", "a", "c"])).unwrap(),
            Some(vec![true, true, false])
        );
        // Nobody decided from counts: read everything.
        assert_eq!(members_to_read(&counts, &[], &[0, 1], &[9, -1], unasked).unwrap(), None);
        assert!(members_to_read(&counts, &[0, 5], &[0], &[0], unasked).is_err());
    }

    /// [`assign_flat_ids`] (the flat deal where it applies) answers as the interned path does
    /// ([`assign_flat_until`], [`assign_flat_counted`]) on random groups: fresh, counted and
    /// otherwise, ids with a shared prefix, non-ASCII ids, duplicate ids, topics out of name order.
    #[test]
    fn the_flat_deal_equals_the_interned_path() {
        let (mut fresh, mut counted, mut one_call, mut need_ids, mut no_ids, mut read_flat) = (0, 0, 0, 0, 0, 0);
        let mut nothing_need = 0;
        let (mut counted_need_ids, mut counted_no_ids) = (0, 0);
        for seed in 0..6000u64 {
            let mut next = crate::model::xorshift(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
            let nt = 1 + next(4) as usize;
            let counts: Vec<i32> = (0..nt).map(|_| next(12) as i32).collect();
            let total: i32 = counts.iter().sum();
            let m = 1 + next(12) as usize;
            let names: Vec<String> = (0..nt)
                .map(|t| format!("{}{}", ["z", "a", "\u{e9}"][next(3) as usize], t))
                .collect();
            let prefix = ["", "consumer-g-", "\u{1F600}-"][next(3) as usize];
            let ids: Vec<String> = (0..m)
                .map(|_| {
                    format!(
                        "{prefix}{}{}",
                        next(40),
                        ["", "\u{e9}", "b", "Aa", "BB"][next(5) as usize]
                    )
                })
                .collect();
            let sub_topics: Vec<i32> = (0..nt as i32).rev().collect();
            // A disjoint current target: a random owner (or none) per partition.
            let mut owned: Vec<Vec<(i32, i32)>> = vec![Vec::new(); m];
            let held_share = next(3);
            for (t, &n) in counts.iter().enumerate() {
                for p in 0..n {
                    if held_share > 0 && next(4) < held_share + 1 {
                        owned[next(m as u64) as usize].push((t as i32, p));
                    }
                }
            }
            let racks = vec![-1; m];
            let group = |oo: &'_ [i32], ot: &'_ [i32], op: &'_ [i32], ids: Vec<String>| -> FlatGroup<'static> {
                FlatGroup {
                    member_ids: ids,
                    member_racks: Box::leak(racks.clone().into_boxed_slice()),
                    rack_names: vec![],
                    topics: names.clone(),
                    partition_counts: Box::leak(counts.clone().into_boxed_slice()),
                    sub_offsets: &[],
                    sub_topics: Box::leak(sub_topics.clone().into_boxed_slice()),
                    owned_offsets: Box::leak(oo.to_vec().into_boxed_slice()),
                    owned_topics: Box::leak(ot.to_vec().into_boxed_slice()),
                    owned_partitions: Box::leak(op.to_vec().into_boxed_slice()),
                    partition_rack_offsets: &[],
                    partition_racks: &[],
                    assignable: &[],
                }
            };
            let mut bytes = Vec::new();
            let mut ends = Vec::new();
            for id in &ids {
                bytes.extend_from_slice(id.as_bytes());
                ends.push(bytes.len());
            }
            let flat = FlatIds::new(bytes, ends).unwrap();
            // The plugin's hashes: String.hashCode over UTF-16 units (computed here apart from
            // java_hash, which reads ASCII bytes directly).
            let hashes: Vec<u32> = ids
                .iter()
                .map(|id| {
                    id.encode_utf16()
                        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(u as i32)) as u32
                })
                .collect();
            let with_ids = MemberKeys {
                hashes: None,
                ids: Some(&flat),
            };
            let hashes_only = MemberKeys {
                hashes: Some(&hashes),
                ids: None,
            };
            let no_owned = vec![0i32; m + 1];
            // Fresh: nobody holds anything.
            let old = assign_flat_until(group(&no_owned, &[], &[], ids.clone()), None);
            let owners = |a: Result<FlatAnswer, InputError>| {
                a.map(|a| match a {
                    FlatAnswer::Owners(o) => Some(o),
                    FlatAnswer::ReadAll => None,
                    FlatAnswer::NeedIds => panic!("seed {seed}: the ids were given"),
                })
            };
            let new = owners(assign_flat_ids(
                group(&no_owned, &[], &[], vec![]),
                Some(&flat),
                None,
                None,
                None,
            ));
            let mut distinct = ids.clone();
            distinct.sort();
            distinct.dedup();
            let duplicates = distinct.len() < m;
            match (&old, &new) {
                (Ok(o), Ok(n)) => {
                    assert_eq!(Some(o), n.as_ref(), "seed {seed}: fresh");
                    let g = group(&no_owned, &[], &[], vec![]);
                    fresh += dealt(&g, &with_ids, None).unwrap().is_some() as usize;
                }
                (Err(_), Err(_)) => {}
                // The flat deal orders only the members it gives partitions to (the broker's
                // result map refuses the rest).
                (Err(InputError::DuplicateMember(_)), Ok(_)) if duplicates => {}
                _ => panic!("seed {seed}: fresh: {old:?} against {new:?}"),
            }
            // Counted: sizes and free partitions, the members to read listed.
            let member_counts: Vec<i32> = owned.iter().map(|o| o.len() as i32).collect();
            let base: Vec<i32> = counts
                .iter()
                .scan(0, |a, &n| Some(std::mem::replace(a, *a + n)))
                .collect();
            let mut is_held = vec![false; total as usize];
            for &(t, p) in owned.iter().flatten() {
                is_held[(base[t as usize] + p) as usize] = true;
            }
            let free: Vec<i32> = (0..total).filter(|&f| !is_held[f as usize]).collect();
            let Ok(Some(read)) = members_to_read(&counts, &[], &sub_topics, &member_counts, |over, first| {
                hash_order(over, first, |i| ids[i].as_bytes())
            }) else {
                continue;
            };
            let mut oo = vec![0];
            let (mut ot, mut op) = (Vec::new(), Vec::new());
            for (o, &listed) in owned.iter().zip(&read) {
                if listed {
                    ot.extend(o.iter().map(|&(t, _)| t));
                    op.extend(o.iter().map(|&(_, p)| p));
                }
                oo.push(ot.len() as i32);
            }
            let old = assign_flat_counted(group(&oo, &ot, &op, ids.clone()), &member_counts, &free, None);
            let new = owners(assign_flat_ids(
                group(&oo, &ot, &op, vec![]),
                Some(&flat),
                Some(&hashes),
                Some((&member_counts, &free)),
                None,
            ));
            // The counted call with the hashes alone: the same answer, or a request for the ids.
            let hashes_alone = assign_flat_ids(
                group(&oo, &ot, &op, vec![]),
                None,
                Some(&hashes),
                Some((&member_counts, &free)),
                None,
            );
            // The first counts-first call: the members to read, or (nobody to read) the answer.
            let call = |keys| counts_first(&names, &counts, &[], &sub_topics, &member_counts, Some(&free), keys);
            let first = call(with_ids);
            let without_ids = call(hashes_only);
            // Neither hashes nor ids: the answer, or a request for the ids.
            let nothing = call(MemberKeys::default());
            match (&old, &new) {
                (Ok(o), Ok(n)) => {
                    assert_eq!(o, n, "seed {seed}: counted");
                    match hashes_alone {
                        Ok(FlatAnswer::NeedIds) => counted_need_ids += 1,
                        Ok(FlatAnswer::Owners(a)) => {
                            assert_eq!(Some(&a), o.as_ref(), "seed {seed}: counted without ids");
                            counted_no_ids += 1;
                        }
                        other => panic!("seed {seed}: counted without ids: {other:?}"),
                    }
                    let g = group(&oo, &ot, &op, vec![]);
                    let flat_dealt = dealt(&g, &with_ids, Some((&member_counts, &free))).unwrap().is_some();
                    counted += flat_dealt as usize;
                    read_flat += (flat_dealt && read.contains(&true)) as usize;
                    // With the hashes alone: the same answer, or a request for the ids (two
                    // hashes tie where the order matters); with nothing, likewise.
                    match (&without_ids, &first) {
                        (Ok(CountsFirst::NeedIds), _) => need_ids += 1,
                        (a, b) => {
                            assert_eq!(a, b, "seed {seed}: counts_first without ids");
                            no_ids += matches!(a, Ok(CountsFirst::Dealt(_))) as usize;
                        }
                    }
                    match (&nothing, &first) {
                        (Ok(CountsFirst::NeedIds), _) => nothing_need += 1,
                        (a, b) => assert_eq!(a, b, "seed {seed}: counts_first without hashes or ids"),
                    }
                    match first {
                        Ok(CountsFirst::Dealt(d)) => {
                            assert!(!read.contains(&true), "seed {seed}: dealt with members to read");
                            assert_eq!(Some(&d), o.as_ref(), "seed {seed}: counts_first");
                            one_call += 1;
                        }
                        Ok(CountsFirst::Read(r)) => assert_eq!(r, read, "seed {seed}: counts_first"),
                        other => panic!("seed {seed}: counts_first: {other:?}"),
                    }
                }
                (Err(_), Err(_)) => {}
                (Err(InputError::DuplicateMember(_)), Ok(_)) if duplicates => {}
                _ => panic!("seed {seed}: counted: {old:?} against {new:?}"),
            }
        }
        // Without ids, the hashes and the counts are required.
        let empty = FlatGroup {
            member_ids: vec![],
            member_racks: &[-1],
            rack_names: vec![],
            topics: vec!["t".to_string()],
            partition_counts: &[1],
            sub_offsets: &[],
            sub_topics: &[0],
            owned_offsets: &[0, 0],
            owned_topics: &[],
            owned_partitions: &[],
            partition_rack_offsets: &[],
            partition_racks: &[],
            assignable: &[],
        };
        assert!(assign_flat_ids(empty.clone(), None, Some(&[7]), None, None).is_err());
        assert!(assign_flat_ids(empty.clone(), None, None, Some((&[0], &[0])), None).is_err());
        assert_eq!(
            assign_flat_ids(empty, None, Some(&[7]), Some((&[0], &[0])), None).unwrap(),
            FlatAnswer::Owners(vec![0, 0])
        );
        assert!(fresh > 3000, "only {fresh} fresh groups took the flat deal");
        assert!(counted > 1000, "only {counted} counted groups took the flat deal");
        assert!(
            read_flat > 300,
            "only {read_flat} groups with members read took the flat deal"
        );
        assert!(
            one_call > 1000,
            "only {one_call} counted groups were dealt by counts_first"
        );
        assert!(
            counted_need_ids > 20 && counted_no_ids > 1000,
            "counted calls without ids: {counted_need_ids} needed them, {counted_no_ids} answered"
        );
        assert!(
            need_ids > 20 && no_ids > 1000 && nothing_need > 100,
            "{need_ids} groups needed the ids beside the hashes, {no_ids} were dealt without them, \
             {nothing_need} needed them without hashes"
        );
    }
}
