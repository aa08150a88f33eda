//! The working set of one broker call stays within `server::kassign::working_bound`, the rates
//! docs/broker.md states ("Native memory"): a counting allocator measures the peak of
//! `assign_flat_until` beyond the input arrays, on the broker benchmark's kinds of group. The
//! broker's library (rust/jni) uses the system allocator, the one measured here.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use kassign_core::server::kassign::{assign_flat_until, working_bound, FlatGroup, Lengths};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds
// `GlobalAlloc`'s contract; the counters are only atomics beside it.
unsafe impl GlobalAlloc for Counting {
    // SAFETY (of the method): callers uphold `GlobalAlloc::alloc`'s contract, which is passed on
    // unchanged to the system allocator.
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's `layout` goes to the system allocator as given.
        let p = System.alloc(layout);
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    // SAFETY (of the method): callers uphold `GlobalAlloc::dealloc`'s contract, which is passed on
    // unchanged to the system allocator.
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, i.e. from the system allocator, with `layout`.
        System.dealloc(ptr, layout);
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A group as the plugin hands it over: `members` members with 22-character ids, `topics` topics of
/// `size` partitions; `heterogeneous`: member i skips topic j when (i + j) % 3 == 0; `held`: each
/// member holds a round-robin share of the partitions it subscribes to (round 2), else none;
/// `racks`: three racks, members and partitions (two replica racks each) spread over them.
struct Group {
    ids: Vec<String>,
    member_racks: Vec<i32>,
    topic_names: Vec<String>,
    counts: Vec<i32>,
    sub_offsets: Vec<i32>,
    sub_topics: Vec<i32>,
    owned_offsets: Vec<i32>,
    owned_topics: Vec<i32>,
    owned_partitions: Vec<i32>,
    rack_offsets: Vec<i32>,
    rack_of: Vec<i32>,
}

impl Group {
    fn new(members: usize, topics: usize, size: i32, heterogeneous: bool, held: bool, racks: bool) -> Group {
        let subs: Vec<Vec<i32>> = (0..members)
            .map(|i| {
                (0..topics as i32)
                    .filter(|&j| !heterogeneous || (i + j as usize) % 3 != 0)
                    .collect()
            })
            .collect();
        let mut sub_offsets = vec![0];
        let mut sub_topics = Vec::new();
        for s in &subs {
            sub_topics.extend_from_slice(s);
            sub_offsets.push(sub_topics.len() as i32);
        }
        if !heterogeneous {
            sub_offsets.clear();
            sub_topics = subs[0].clone();
        }
        let mut owned: Vec<Vec<(i32, i32)>> = vec![Vec::new(); members];
        if held {
            for t in 0..topics as i32 {
                let subscribers: Vec<usize> = (0..members).filter(|&i| subs[i].contains(&t)).collect();
                for p in 0..size {
                    owned[subscribers[p as usize % subscribers.len()]].push((t, p));
                }
            }
        }
        let mut owned_offsets = vec![0];
        let (mut owned_topics, mut owned_partitions) = (Vec::new(), Vec::new());
        for o in &owned {
            owned_topics.extend(o.iter().map(|x| x.0));
            owned_partitions.extend(o.iter().map(|x| x.1));
            owned_offsets.push(owned_topics.len() as i32);
        }
        let total = topics * size as usize;
        let (mut rack_offsets, mut rack_of) = (Vec::new(), Vec::new());
        if racks {
            rack_offsets.push(0);
            for f in 0..total {
                rack_of.extend([(f % 3) as i32, ((f + 1) % 3) as i32]);
                rack_offsets.push(rack_of.len() as i32);
            }
        }
        Group {
            ids: (0..members).map(|i| format!("{i:0>22}")).collect(),
            member_racks: (0..members).map(|i| if racks { (i % 3) as i32 } else { -1 }).collect(),
            topic_names: (0..topics).map(|t| format!("{t:0>22}")).collect(),
            counts: vec![size; topics],
            sub_offsets,
            sub_topics,
            owned_offsets,
            owned_topics,
            owned_partitions,
            rack_offsets,
            rack_of,
        }
    }

    fn lengths(&self) -> Lengths {
        Lengths {
            member_ids: self.ids.len(),
            member_id_chars: self.ids.iter().map(|s| s.len()).sum(),
            member_hashes: self.ids.len(),
            member_racks: self.member_racks.len(),
            rack_names: 3,
            rack_name_chars: 3,
            topics: self.topic_names.len(),
            topic_chars: self.topic_names.iter().map(|s| s.len()).sum(),
            partition_counts: self.counts.len(),
            sub_offsets: self.sub_offsets.len(),
            sub_topics: self.sub_topics.len(),
            owned_offsets: self.owned_offsets.len(),
            owned_topics: self.owned_topics.len(),
            owned_partitions: self.owned_partitions.len(),
            partition_rack_offsets: self.rack_offsets.len(),
            partition_racks: self.rack_of.len(),
            assignable: 0,
            member_counts: None,
            free: None,
        }
    }

    /// The peak of native memory while assigning, beyond what was allocated before the call.
    fn peak(&self) -> usize {
        let group = FlatGroup {
            member_ids: self.ids.clone(),
            member_racks: &self.member_racks,
            rack_names: vec!["a".into(), "b".into(), "c".into()],
            topics: self.topic_names.clone(),
            partition_counts: &self.counts,
            sub_offsets: &self.sub_offsets,
            sub_topics: &self.sub_topics,
            owned_offsets: &self.owned_offsets,
            owned_topics: &self.owned_topics,
            owned_partitions: &self.owned_partitions,
            partition_rack_offsets: &self.rack_offsets,
            partition_racks: &self.rack_of,
            assignable: &[],
        };
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let owners = assign_flat_until(group, None).unwrap();
        assert!(owners.iter().all(|&o| o >= 0));
        PEAK.load(Ordering::Relaxed) - base
    }
}

#[test]
fn one_call_stays_within_the_working_bound() {
    // One test at a time: the counters are process-wide.
    let shapes = [
        ("N = P fresh", Group::new(20_000, 1, 20_000, false, false, false)),
        ("N = P round 2", Group::new(20_000, 1, 20_000, false, true, false)),
        ("wide, round 2", Group::new(200, 100, 2_000, false, true, false)),
        ("wide, fresh, racks", Group::new(200, 100, 2_000, false, false, true)),
        ("heterogeneous, round 2", Group::new(300, 60, 500, true, true, false)),
        (
            "heterogeneous, fresh, racks",
            Group::new(300, 60, 500, true, false, true),
        ),
    ];
    let mut over = Vec::new();
    for (name, g) in &shapes {
        let peak = g.peak();
        let l = g.lengths();
        let total: usize = g.counts.iter().map(|&c| c as usize).sum();
        let bound = working_bound(&l, total);
        eprintln!(
            "{name}: peak {peak} bytes, bound {bound}; members {}, partitions {total}, entries {}, chars {}",
            l.member_ids,
            l.sub_topics + l.owned_topics + l.partition_racks,
            l.member_id_chars + l.topic_chars + l.rack_name_chars
        );
        if peak > bound {
            over.push(format!("{name}: peak {peak} bytes over the bound {bound}"));
        }
    }
    assert!(over.is_empty(), "{over:?}");
}
