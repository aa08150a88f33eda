//! kassign: Kafka consumer partition assignors.
//!
//! The crate root. The core is plain Rust and usable as a library (`model` builds the interned
//! problem, `strategy` names and runs the strategies, `protocol` reads and writes the consumer
//! protocol's wire formats, `wire` is the leader's bytes-in, bytes-out path); with the `python` feature (maturin turns it on) the `py` module adds
//! the Python extension `kassign._core` on top.

pub mod claims;
pub mod failover;
pub mod fleet;
pub mod greedy;
pub mod hash;
pub mod improve;
pub mod lag;
pub mod model;
pub mod protocol;
pub mod range;
pub mod roundrobin;
pub mod server;
pub mod sticky;
pub mod strategy;
pub mod wire;

// The Python boundary turns a panic into a Python exception through PyO3's unwinding; with
// panic = "abort" a panic would kill the interpreter.
#[cfg(all(feature = "python", not(panic = "unwind")))]
compile_error!("the Python extension needs panic = \"unwind\": a panic must become a Python exception");

#[cfg(feature = "python")]
mod py;

/// The JNI boundary of the broker-side assignor (`java/broker/`), built with the `jni` feature.
#[cfg(feature = "jni")]
mod jni;

/// The extension's Rust allocations go through mimalloc: the boundary makes a few small
/// allocations per member (ids, owned partitions), and under that churn glibc's malloc spent
/// about a fifth of a 2100-member `kassign.assign` consolidating its bins. Python objects still
/// come from Python's allocator.
#[cfg(feature = "python")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
