//! The strategies the Rust core computes, named once, and their single entry point.

use std::str::FromStr;

use crate::model::{Assignment, InputError, Problem};

/// A strategy of the Rust core. Parsed from its protocol name once, at the boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    Range,
    RoundRobin,
    Sticky,
    CooperativeSticky,
    /// KIP-848 broker-side `uniform` (Apache Kafka 4.4.0's group coordinator), rust/core/src/server/.
    ServerUniform,
    /// KIP-848 broker-side `range`.
    ServerRange,
    /// kassign's own broker-side assignor (`kassign` on the broker), rust/core/src/server/kassign.rs.
    ServerKassign,
}

impl Strategy {
    /// Every Rust strategy, in the order `kassign.STRATEGIES` lists them.
    pub const ALL: [Strategy; 7] = [
        Strategy::Range,
        Strategy::RoundRobin,
        Strategy::Sticky,
        Strategy::CooperativeSticky,
        Strategy::ServerUniform,
        Strategy::ServerRange,
        Strategy::ServerKassign,
    ];

    /// The protocol name (the name Java's assignor announces in JoinGroup).
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::Range => "range",
            Strategy::RoundRobin => "roundrobin",
            Strategy::Sticky => "sticky",
            Strategy::CooperativeSticky => "cooperative-sticky",
            Strategy::ServerUniform => "server-uniform",
            Strategy::ServerRange => "server-range",
            Strategy::ServerKassign => "server-kassign",
        }
    }

    /// Run the strategy on an interned problem.
    pub fn run(self, problem: &Problem) -> Assignment {
        match self {
            Strategy::Range => crate::range::assign(problem),
            Strategy::RoundRobin => crate::roundrobin::assign(problem),
            Strategy::Sticky => crate::sticky::assign(problem, false),
            Strategy::CooperativeSticky => crate::sticky::assign(problem, true),
            Strategy::ServerUniform => crate::server::uniform::assign(problem),
            Strategy::ServerRange => crate::server::range::assign(problem),
            Strategy::ServerKassign => crate::server::kassign::assign(problem),
        }
    }
}

impl FromStr for Strategy {
    type Err = InputError;

    fn from_str(name: &str) -> Result<Strategy, InputError> {
        Strategy::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| InputError::UnknownStrategy(name.to_string()))
    }
}

/// Names of the Rust strategies, in order.
pub fn names() -> Vec<&'static str> {
    Strategy::ALL.iter().map(|s| s.name()).collect()
}
