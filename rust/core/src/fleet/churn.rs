//! What-if churn replay: members leave and join, one rebalance each; count partition moves.
//!
//! The events ([`events`], docs/fleet.md, "Churn replay") are a pure function of the group's
//! member ids, the number of rounds and the seed, drawn with [`SplitMix64`]: even rounds remove a
//! member chosen uniformly from the current ids in sorted order (while more than one is left), odd
//! rounds (and rounds with nobody departed) add `kassign-churn-{round}` with the subscription, rack
//! and user data of the last departed member (or of a uniformly chosen current one when none
//! departed). `_core.churn_events` reports them, so the tests' Python replay
//! (`kassign.fleet.churn.replay`) replays the same events. Each rebalance feeds the previous result back as owned partitions with the next
//! generation; when partitions stay unassigned (cooperative-sticky withholds the ones that change
//! owner), up to [`MAX_FOLLOW_UPS`] follow-up rebalances run. A move is a partition given to a
//! member other than its last owner.
//!
//! The group's problem is reused: each round only swaps its members ([`super::problem::RoundProblem`]).

use super::problem::{self, RoundMember, RoundProblem};
use super::splitmix::SplitMix64;
use super::{Assigner, Group, Origin, Placed, StrategyError, NONE};

pub const MAX_FOLLOW_UPS: u32 = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChurnResult {
    /// Events replayed (leave or join).
    pub rounds: i64,
    /// Assignments computed, including cooperative follow-ups.
    pub rebalances: i64,
    /// Cumulative partition moves.
    pub moves: i64,
    /// Time spent in the strategy.
    pub time_ms: f64,
}

/// One churn event.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// The member with this id leaves.
    Leave { id: String },
    /// A member with id `id` joins, with the subscription, rack and user data of the member of
    /// row `like_row` (no static id, no history).
    Join { id: String, like_row: u32 },
}

/// The events of a replay of `rounds` rounds on a group whose members (rows) have `ids` (unique),
/// seeded with `seed` (module docs).
pub fn events(ids: &[String], rounds: u32, seed: u64) -> Vec<Event> {
    let mut rng = SplitMix64::new(seed);
    // The current members: (id, row of the member whose profile it has).
    let mut current: Vec<(String, u32)> = ids.iter().enumerate().map(|(r, id)| (id.clone(), r as u32)).collect();
    let mut departed: Vec<u32> = Vec::new();
    let mut out = Vec::with_capacity(rounds as usize);
    for r in 0..rounds {
        let leave = (r % 2 == 0 && current.len() > 1) || departed.is_empty();
        if leave && current.len() > 1 {
            let gone = current.remove(sorted_pick(&current, &mut rng));
            departed.push(gone.1);
            out.push(Event::Leave { id: gone.0 });
        } else {
            let like_row = match departed.pop() {
                Some(row) => row,
                None => current[sorted_pick(&current, &mut rng)].1,
            };
            let id = format!("kassign-churn-{r}");
            // A joiner whose id is already a member's takes its place.
            match current.iter().position(|c| c.0 == id) {
                Some(i) => current[i].1 = like_row,
                None => current.push((id.clone(), like_row)),
            }
            out.push(Event::Join { id, like_row });
        }
    }
    out
}

/// A uniform pick among `current`'s ids in sorted order, as a position in `current`.
fn sorted_pick(current: &[(String, u32)], rng: &mut SplitMix64) -> usize {
    let mut order: Vec<usize> = (0..current.len()).collect();
    order.sort_by(|&a, &b| current[a].0.cmp(&current[b].0));
    order[rng.below(order.len())]
}

/// A member of the replay's group profile.
struct Profile {
    id: String,
    origin: Origin,
    /// Identity for last-owner tracking (unique over the replay).
    key: u32,
    /// Partitions owned now (the last result).
    current: Vec<u32>,
}

/// Replay `rounds` events on `group` starting from `start`, which `strategy` produced for it.
pub fn replay(
    group: &Group,
    strategy: &str,
    start: &Placed,
    rounds: u32,
    seed: u64,
    assigner: &mut dyn Assigner,
) -> Result<ChurnResult, StrategyError> {
    let base = &group.problem;
    let mut gen: i64 = base.members.iter().map(|m| m.generation as i64).max().unwrap_or(-1) + 1;
    // The profile in the reference's dict order (member rows), current = the start assignment.
    let mut profile: Vec<Profile> = group
        .member_order
        .iter()
        .enumerate()
        .map(|(row, &m)| Profile {
            id: base.members[m as usize].id.clone(),
            origin: Origin::Row(row as u32),
            key: row as u32,
            current: start.per_member[m as usize].clone(),
        })
        .collect();
    let mut next_key = profile.len() as u32;
    let mut last_owner = vec![NONE; base.num_partitions() as usize];
    for p in &profile {
        for &f in &p.current {
            last_owner[f as usize] = p.key;
        }
    }
    let mut departed: Vec<Origin> = Vec::new();
    let mut round = RoundProblem::new(group);
    let (mut moves, mut rebalances, mut replayed) = (0i64, 0i64, 0i64);
    let mut spent = 0.0f64;
    let ids: Vec<String> = group
        .member_order
        .iter()
        .map(|&m| base.members[m as usize].id.clone())
        .collect();
    for event in events(&ids, rounds, seed) {
        match event {
            Event::Leave { id } => {
                let at = profile
                    .iter()
                    .position(|p| p.id == id)
                    .expect("a current member leaves");
                let gone = profile.remove(at);
                departed.push(gone.origin);
            }
            Event::Join { id, like_row } => {
                let joiner = Profile {
                    id: id.clone(),
                    origin: Origin::Joiner { like_row },
                    key: next_key,
                    current: Vec::new(),
                };
                next_key += 1;
                // A dict assignment: an existing id keeps its place and takes the new value.
                match profile.iter().position(|p| p.id == id) {
                    Some(i) => profile[i] = joiner,
                    None => profile.push(joiner),
                }
            }
        }
        replayed += 1;
        for _ in 0..=MAX_FOLLOW_UPS {
            let mut members: Vec<RoundMember> = profile
                .iter()
                .map(|p| RoundMember {
                    id: p.id.clone(),
                    origin: p.origin,
                    owned: {
                        let mut o = p.current.clone();
                        o.sort_unstable();
                        o.dedup();
                        o
                    },
                    generation: if p.current.is_empty() { -1 } else { gen as i32 },
                })
                .collect();
            round.set_members(group, &mut members);
            let t0 = std::time::Instant::now();
            let placed = assigner.assign(strategy, &round.problem, &round.origins)?;
            spent += t0.elapsed().as_secs_f64();
            rebalances += 1;
            gen += 1;
            let mut assigned = 0u64;
            for (m, parts) in placed.per_member.iter().enumerate() {
                let who = &mut profile[round.slot[m]];
                assigned += parts.len() as u64 + placed.invalid.get(m).copied().unwrap_or(0) as u64;
                for &f in parts {
                    let prev = last_owner[f as usize];
                    if prev != NONE && prev != who.key {
                        moves += 1;
                    }
                    last_owner[f as usize] = who.key;
                }
                who.current = parts.clone();
            }
            if assigned >= problem::assignable(&round.problem) {
                break;
            }
        }
    }
    Ok(ChurnResult {
        rounds: replayed,
        rebalances,
        moves,
        time_ms: spent * 1000.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The events follow the replay's rules: the same seed gives the same events; a leave
        /// removes a current member and never the last one; even rounds leave while more than one
        /// member is left; a join after a leave has the last departed member's profile, and its id
        /// names its round.
        #[test]
        fn events_follow_the_rules(n in 1usize..8, rounds in 0u32..16, seed in any::<u64>()) {
            let ids: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
            let ev = events(&ids, rounds, seed);
            prop_assert_eq!(&ev, &events(&ids, rounds, seed));
            prop_assert_eq!(ev.len(), rounds as usize);
            let mut current: Vec<(String, u32)> = ids.iter().cloned().zip(0..).collect();
            let mut departed: Vec<u32> = Vec::new();
            for (r, e) in ev.iter().enumerate() {
                match e {
                    Event::Leave { id } => {
                        prop_assert!(current.len() > 1);
                        prop_assert!(r % 2 == 0 || departed.is_empty());
                        let at = current.iter().position(|c| &c.0 == id);
                        prop_assert!(at.is_some(), "{} is not a member", id);
                        departed.push(current.remove(at.unwrap()).1);
                    }
                    Event::Join { id, like_row } => {
                        prop_assert!(r % 2 == 1 || current.len() == 1 || departed.is_empty());
                        prop_assert_eq!(id, &format!("kassign-churn-{r}"));
                        match departed.pop() {
                            Some(row) => prop_assert_eq!(*like_row, row),
                            None => prop_assert!(current.iter().any(|c| c.1 == *like_row)),
                        }
                        current.push((id.clone(), *like_row));
                    }
                }
            }
        }
    }

    #[test]
    fn seeds_choose_different_members() {
        let ids: Vec<String> = (0..30).map(|i| format!("m{i:02}")).collect();
        let first: std::collections::HashSet<Event> = (0..40).map(|s| events(&ids, 1, s)[0].clone()).collect();
        assert!(first.len() > 15, "{first:?}");
    }
}
