//! What-if churn replay: members leave and join, one rebalance each; count partition moves.
//!
//! The events are those of `python/kassign/fleet/churn.py` (docs/fleet.md, "Churn replay"), drawn
//! from the same random generator ([`super::pyrandom`]): starting from a strategy's assignment,
//! even rounds remove a member chosen with `choice(sorted(ids))` (while more than one is left),
//! odd rounds (and rounds with nobody departed) add `kassign-churn-{round}` with the subscription,
//! rack and user data of the last departed member (or of a randomly chosen current one when none
//! departed). Each rebalance feeds the previous result back as owned partitions with the next
//! generation; when partitions stay unassigned (cooperative-sticky withholds the ones that change
//! owner), up to [`MAX_FOLLOW_UPS`] follow-up rebalances run. A move is a partition given to a
//! member other than its last owner.
//!
//! The group's problem is reused: each round only swaps its members ([`super::problem::RoundProblem`]).

use super::problem::{self, RoundMember, RoundProblem};
use super::pyrandom::PyRandom;
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
    let mut rng = PyRandom::new(seed);
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
    let (mut moves, mut rebalances, mut events) = (0i64, 0i64, 0i64);
    let mut spent = 0.0f64;
    for r in 0..rounds {
        let leave = (r % 2 == 0 && profile.len() > 1) || departed.is_empty();
        if leave && profile.len() > 1 {
            let pick = sorted_pick(&profile, &mut rng);
            let gone = profile.remove(pick);
            departed.push(gone.origin);
        } else {
            let like = match departed.pop() {
                Some(o) => o,
                None => profile[sorted_pick(&profile, &mut rng)].origin,
            };
            let like_row = match like {
                Origin::Row(row) => row,
                Origin::Joiner { like_row } => like_row,
            };
            let id = format!("kassign-churn-{r}");
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
        events += 1;
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
        rounds: events,
        rebalances,
        moves,
        time_ms: spent * 1000.0,
    })
}

/// `rng.choice(sorted(profile ids))`, as a position in `profile`.
fn sorted_pick(profile: &[Profile], rng: &mut PyRandom) -> usize {
    let mut order: Vec<usize> = (0..profile.len()).collect();
    order.sort_by(|&a, &b| profile[a].id.cmp(&profile[b].id));
    order[rng.below(order.len())]
}
