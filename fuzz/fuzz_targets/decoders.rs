//! Fuzz every decoder of `kassign_core::protocol` with each input.
//!
//! Checks, besides "never panics":
//! * bounded allocation: while one decoder runs, the peak of live Rust heap bytes stays within
//!   `ALLOC_FACTOR * input length + ALLOC_SLACK` (a counting global allocator measures it), so a
//!   declared length can never make the decoder allocate more than the input justifies;
//! * re-encoding: whatever decodes re-encodes to the bytes it was read from (modulo the writer's
//!   sorting and the ignored trailing bytes) and decodes back to the same value;
//! * the int32 user data decoders agree with `i32::from_be_bytes` (generation: first four bytes;
//!   priority: exactly four bytes).
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use kassign_core::protocol::{
    decode_generation, decode_priority, flatten, group_sorted, Assignment, StickyUserData, Subscription,
    TopicPartitions, MAX_VERSION,
};
use libfuzzer_sys::fuzz_target;

/// Live-heap bytes per input byte a decoder may use at its peak. The worst element is a topic
/// name in the subscription's topic list: a 24-byte `String` header for every 2 input bytes.
const ALLOC_FACTOR: usize = 16;
const ALLOC_SLACK: usize = 4096;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Run `f`, asserting its peak live heap stays within the budget for `len` input bytes.
fn bounded<T>(what: &str, len: usize, f: impl FnOnce() -> T) -> T {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let out = f();
    let used = PEAK.load(Relaxed) - base;
    let budget = ALLOC_FACTOR * len + ALLOC_SLACK;
    assert!(
        used <= budget,
        "{what}: {used} bytes allocated for a {len}-byte input (budget {budget})"
    );
    out
}

fn sorted_pairs(groups: &[TopicPartitions]) -> Vec<(&str, i32)> {
    let mut v = flatten(groups);
    v.sort_unstable();
    v
}

/// The encoder's layout: no repeated topic, topics and partitions ascending.
fn canonical(groups: &[TopicPartitions]) -> bool {
    group_sorted(&flatten(groups)) == groups
}

fn check_subscription(data: &[u8]) {
    let Ok(s) = bounded("Subscription::decode", data.len(), || Subscription::decode(data)) else {
        return;
    };
    let mut w = s.clone();
    w.version = s.version.min(MAX_VERSION);
    let encoded = w.encode().expect("a decoded subscription re-encodes");
    let again = Subscription::decode(&encoded).expect("a re-encoded subscription decodes");
    let mut topics = s.topics.clone();
    topics.sort_unstable();
    assert_eq!(again.topics, topics);
    assert_eq!(again.user_data, s.user_data);
    assert_eq!(sorted_pairs(&again.owned_partitions), sorted_pairs(&s.owned_partitions));
    assert_eq!((again.generation, &again.rack), (s.generation, &s.rack));
    // Already in the writer's order: the body is byte-for-byte the input's prefix.
    if s.topics == topics && canonical(&s.owned_partitions) {
        assert_eq!(&encoded[2..], &data[2..encoded.len()]);
    }
}

fn check_assignment(data: &[u8]) {
    let Ok(a) = bounded("Assignment::decode", data.len(), || Assignment::decode(data)) else {
        return;
    };
    let w = Assignment {
        version: a.version.min(MAX_VERSION),
        ..a.clone()
    };
    let encoded = w.encode().expect("a decoded assignment re-encodes");
    // The assignment writer keeps the given grouping and order: always the input's prefix.
    assert_eq!(&encoded[2..], &data[2..encoded.len()]);
    assert_eq!(Assignment::decode(&encoded).expect("re-encoded assignment decodes"), w);
}

fn check_sticky(data: &[u8]) {
    let Ok(u) = bounded("StickyUserData::decode", data.len(), || StickyUserData::decode(data)) else {
        return;
    };
    if data.is_empty() {
        assert_eq!(u, StickyUserData::default());
        return;
    }
    let encoded = u.encode().expect("decoded sticky user data re-encodes");
    let again = StickyUserData::decode(&encoded).expect("re-encoded sticky user data decodes");
    assert_eq!(sorted_pairs(&again.partitions), sorted_pairs(&u.partitions));
    assert_eq!(again.generation, u.generation);
    if canonical(&u.partitions) {
        assert_eq!(&encoded[..], &data[..encoded.len()]);
    }
}

fn check_int32(data: &[u8]) {
    let first = data.get(..4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    assert_eq!(decode_generation(data).ok(), first);
    assert_eq!(decode_priority(data), if data.len() == 4 { first } else { None });
}

fuzz_target!(|data: &[u8]| {
    check_subscription(data);
    check_assignment(data);
    check_sticky(data);
    check_int32(data);
});
