//! The `failover` strategy's placement rule (python/kassign/assignors/failover.py keeps its policy:
//! the names, the docs and the result): for every topic, the subscriber with the highest priority
//! takes all of the topic's partitions; equal priorities go to the smallest member id (the
//! smallest index: members are indices in member-id order). A member's priority is its user data
//! read by [`crate::protocol::decode_priority`]; missing or malformed user data ranks below every
//! valid priority, `i32::MIN` included.

use std::cmp::Reverse;

use crate::protocol::decode_priority;

/// A member's rank, larger is better: valid priorities above every missing or malformed one.
fn rank(user_data: Option<&[u8]>) -> (bool, i32) {
    match user_data.and_then(decode_priority) {
        Some(p) => (true, p),
        None => (false, 0),
    }
}

/// The winner of each eligible set (member indices into `user_data`, not empty): the member
/// with the highest rank, ties the smallest index. `None` for an empty set.
pub fn winners(user_data: &[Option<&[u8]>], eligible: &[Vec<u32>]) -> Vec<Option<u32>> {
    let ranks: Vec<(bool, i32)> = user_data.iter().map(|d| rank(*d)).collect();
    eligible
        .iter()
        .map(|s| s.iter().copied().min_by_key(|&i| (Reverse(ranks[i as usize]), i)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_priority_wins_ties_to_the_smallest_index() {
        let ten = 10i32.to_be_bytes();
        let five = 5i32.to_be_bytes();
        let min = i32::MIN.to_be_bytes();
        let data = [
            Some(&five[..]),
            Some(&ten[..]),
            Some(&ten[..]),
            None,
            Some(&[1, 2][..]),
            Some(&min[..]),
        ];
        let eligible = vec![vec![0, 1, 2], vec![0, 3], vec![3, 4], vec![3, 4, 5], vec![]];
        assert_eq!(
            winners(&data, &eligible),
            vec![Some(1), Some(0), Some(3), Some(5), None]
        );
    }
}
