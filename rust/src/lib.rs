//! kassign: Kafka consumer partition assignors.
//!
//! The crate is usable from Rust (the `rlib`: `model`, `strategy`, `protocol`, ...) and from
//! Python (the `cdylib` built with the `python` feature). This file is the Python boundary only:
//! conversion in, one GIL-free call into the core, conversion out, errors mapped to exceptions.

pub mod model;
pub mod protocol;
pub mod range;
pub mod roundrobin;
pub mod sticky;
pub mod strategy;
pub mod fleet;

#[cfg(feature = "python")]
mod py;
#[cfg(feature = "python")]
mod python;
#[cfg(feature = "python")]
mod python_protocol;
