//! Strategy dispatch: the names of the strategies implemented in Rust, and one entry point.

use crate::model::{Assignment, InputError, Problem};

/// Strategies computed by the Rust core, in the order `kassign.STRATEGIES` lists them.
pub const RUST_STRATEGIES: &[&str] = &[
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "server-uniform",
    "server-range",
];

/// Run a Rust strategy on an interned problem.
pub fn run(strategy: &str, problem: &Problem) -> Result<Assignment, InputError> {
    match strategy {
        "range" => Ok(crate::range::assign(problem)),
        "roundrobin" => Ok(crate::roundrobin::assign(problem)),
        "sticky" => Ok(crate::sticky::assign(problem, false)),
        "cooperative-sticky" => Ok(crate::sticky::assign(problem, true)),
        "server-uniform" => Ok(crate::server::uniform::assign(problem)),
        "server-range" => Ok(crate::server::range::assign(problem)),
        other => Err(InputError::UnknownStrategy(other.to_string())),
    }
}
