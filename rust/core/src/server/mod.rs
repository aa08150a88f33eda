//! KIP-848 broker-side assignors: `server-uniform` and `server-range` (the broker's own), and
//! `server-kassign` (kassign's, for the broker plugin of `java/broker/`).
//!
//! With the consumer group protocol (KIP-848) the group coordinator on the broker computes each
//! member's *target assignment*. Apache Kafka 4.4.0 ships two assignors for it, in
//! `group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/`:
//! `UniformAssignor` ("uniform", the default) and `RangeAssignor` ("range"). These modules give
//! the same plans from kassign's interned [`Problem`]; docs/server_assignors.md states the
//! semantics, the source paths, and where the Java plan depends on `HashMap` iteration order.
//!
//! Inputs, as the coordinator gives them to its assignors: each member's subscribed topics
//! (topics that do not exist are dropped, but still count when deciding whether the group is
//! homogeneous), its instance id, and its *current target assignment* (here
//! `Member::owned`). No user data, no generation, no racks (neither 4.4.0 assignor reads them).
//!
//! Where Java iterates a hash map or hash set, kassign uses the canonical order instead: members
//! by member id, topics by name, partitions ascending. Java's plan equals kassign's whenever it
//! does not depend on that order, and is equivalent (same loads, same partitions kept) otherwise;
//! the differential test (`peers/server_diff.py`) checks both against the Java classes.

pub mod kassign;
pub mod range;
pub mod uniform;

use crate::model::Problem;

/// The current target assignment as a dense owner array (flat partition id -> member index), by
/// the claim rule of the broker-side assignors ([`crate::claims::current_target_owners`]).
pub(crate) fn current_owners(problem: &Problem) -> Vec<u32> {
    crate::claims::current_target_owners(problem)
}

/// Whether the coordinator would call the group HOMOGENEOUS: every member subscribes to the same
/// topic names (names of topics that do not exist included), as
/// `ModernGroup.subscriptionType` decides from its per-name subscriber counts.
pub(crate) fn homogeneous(problem: &Problem) -> bool {
    // Subscriptions are interned by their raw (sorted, deduplicated) topic names.
    match problem.members.first() {
        None => true,
        Some(first) => problem.members.iter().all(|m| m.sub == first.sub),
    }
}

/// Wrap a dense owner array as the strategies' result type.
pub(crate) fn finish(owner: Vec<u32>) -> crate::model::Assignment {
    crate::model::Assignment { owner }
}
