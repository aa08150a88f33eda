//! kassign-core: Kafka consumer partition assignors, in plain Rust.
//!
//! `model` builds the interned problem, `strategy` names and runs the strategies, `protocol` reads
//! and writes the consumer protocol's wire formats, `wire` is the leader's bytes-in, bytes-out
//! path, `server` holds the broker-side (KIP-848) assignors and `fleet` the fleet job's engine.
//! This crate knows no binding: the Python extension (rust/python) and the broker's native
//! library (rust/jni) depend on it, never the other way round.

pub mod claims;
pub mod failover;
pub mod fleet;
pub mod greedy;
pub mod hash;
pub mod improve;
pub mod lag;
pub mod members;
pub mod model;
pub mod protocol;
pub mod range;
pub mod roundrobin;
pub mod server;
pub mod sticky;
pub mod strategy;
pub mod wire;

/// The text of a caught panic's payload (`panic!` with a literal or a formatted message), for the
/// error a binding raises instead of unwinding into its caller.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}
