//! Fuzz the leader's bytes-in, bytes-out path (`kassign_core::wire::assign`) with each input split
//! into the subscriptions of up to eight members.
//!
//! Checks, besides "never panics": every strategy answers every member (an undecodable member
//! gets an empty assignment and a warning, never an error); every answer decodes as a
//! ConsumerProtocolAssignment; no partition is given twice, and each given one exists and is
//! subscribed by its member when that member's subscription decodes; and the resolving decoder
//! gives the same bytes and warnings as decoding every member with `wire::member`.
#![no_main]

use kassign_core::protocol::{Assignment, Subscription};
use kassign_core::strategy::Strategy;
use kassign_core::wire::{assign, assign_unresolved, WireInput};
use libfuzzer_sys::fuzz_target;

const TOPICS: [(&str, i64); 3] = [("t", 4), ("u", 2), ("", 1)];

fuzz_target!(|data: &[u8]| {
    // Layout: [n] then n chunks, each [len] + len bytes (truncated at the end of the input).
    let Some((&n, mut rest)) = data.split_first() else {
        return;
    };
    let n = (n % 8) as usize + 1;
    let mut chunks: Vec<&[u8]> = Vec::with_capacity(n);
    for _ in 0..n {
        let (len, tail) = match rest.split_first() {
            Some((&l, t)) => (l as usize, t),
            None => (0, rest),
        };
        let len = len.min(tail.len());
        chunks.push(&tail[..len]);
        rest = &tail[len..];
    }
    let ids: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
    let members: Vec<WireInput<'_>> = ids
        .iter()
        .zip(&chunks)
        .enumerate()
        .map(|(i, (id, c))| WireInput {
            id,
            subscription: c,
            group_instance_id: (i % 3 == 0).then(|| format!("i{i}")),
        })
        .collect();
    let topics: Vec<(String, i64)> = TOPICS.iter().map(|(t, c)| (t.to_string(), *c)).collect();
    for strategy in Strategy::ALL {
        let (out, warnings) = assign(strategy, &members, topics.clone(), false, &[]).expect("never an error");
        // The resolving decoder changes nothing: same bytes and warnings as decoding every
        // member with `wire::member`.
        let reference = assign_unresolved(strategy, &members, topics.clone(), false, &[]).expect("never an error");
        assert_eq!((&out, &warnings), (&reference.0, &reference.1), "{strategy:?}: resolved != unresolved");
        assert_eq!(out.len(), n);
        let mut seen = std::collections::HashSet::new();
        for (bytes, chunk) in out.iter().zip(&chunks) {
            let a = Assignment::decode(&bytes).expect("own output decodes");
            let sub = Subscription::decode(chunk).ok();
            for g in &a.partitions {
                let count = TOPICS.iter().find(|(t, _)| *t == g.topic).expect("a known topic").1;
                if let Some(s) = &sub {
                    assert!(s.topics.contains(&g.topic), "{strategy:?} gave an unsubscribed topic");
                }
                for &p in &g.partitions {
                    assert!(p >= 0 && (p as i64) < count);
                    assert!(seen.insert((g.topic.clone(), p)), "{strategy:?} gave a partition twice");
                }
            }
        }
    }
});
