//! Rust-core timings of the sticky engine and the KIP-848 broker-side assignors (`server-uniform`,
//! `server-range`) on the shapes of docs/benchmark-shapes.md: `ProblemBuilder` (checks and
//! interning) and `Strategy::run` (the assignment proper) are timed separately, median of several
//! runs, no Python involved. Run with `cargo bench --bench core` (or `make bench-core`).
//!
//! Round 2 = every member but the first resubmits its round-1 partitions at generation 1 and a
//! new member joins (the "one member changed" shape).

use std::time::Instant;

use kassign_core::model::{Problem, ProblemBuilder};
use kassign_core::strategy::Strategy;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A member of a case: its subscription (index into the case's subscriptions) and owned
/// partitions as (index into the case's topics, partition).
#[derive(Clone)]
struct CaseMember {
    id: String,
    sub: usize,
    owned: Vec<(u32, i64)>,
    generation: i32,
}

fn member(id: String, sub: usize, owned: Vec<(u32, i64)>, generation: i32) -> CaseMember {
    CaseMember {
        id,
        sub,
        owned,
        generation,
    }
}

/// The problem, built the way the Python boundary builds it.
fn build_problem(case: &Case) -> Problem {
    let mut b = ProblemBuilder::new(case.topics.iter().map(|(t, n)| (t.as_str(), *n))).unwrap();
    let subs: Vec<u32> = case.subscriptions.iter().map(|s| b.subscription(s)).collect();
    for m in &case.members {
        let owned = m
            .owned
            .iter()
            .filter_map(|&(t, p)| b.given_topic(t as usize).and_then(|t| b.partition(t, p)))
            .collect();
        b.add_member(m.id.clone(), subs[m.sub], owned, m.generation, None, None)
            .unwrap();
    }
    b.build().unwrap()
}

/// A scenario in the columnar shape `kassign.assign` passes to the core (shared subscriptions).
struct Case {
    name: String,
    topics: Vec<(String, i64)>,
    subscriptions: Vec<Vec<String>>,
    members: Vec<CaseMember>,
}

/// Per member (in problem order): its partitions as (index into the case's topics, partition).
type OwnedByIndex = Vec<Vec<(u32, i64)>>;

/// Median build and run times (ms), and the first run's result with the member ids it is keyed by.
fn time_case(strategy: Strategy, case: &Case, runs: usize) -> (f64, f64, OwnedByIndex, Vec<String>) {
    let mut build = Vec::new();
    let mut run = Vec::new();
    let mut owned_out = Vec::new();
    let mut ids = Vec::new();
    for i in 0..runs {
        let t0 = Instant::now();
        let problem = build_problem(case);
        let t1 = Instant::now();
        let a = strategy.run(&problem);
        let t2 = Instant::now();
        build.push((t1 - t0).as_secs_f64() * 1e3);
        run.push((t2 - t1).as_secs_f64() * 1e3);
        if i == 0 {
            let given: std::collections::HashMap<&str, u32> = case
                .topics
                .iter()
                .enumerate()
                .map(|(k, (n, _))| (n.as_str(), k as u32))
                .collect();
            ids = problem.members.iter().map(|m| m.id.clone()).collect();
            owned_out = a
                .per_member(problem.members.len())
                .iter()
                .map(|ps| {
                    ps.iter()
                        .map(|&p| {
                            let (t, idx) = problem.split(p);
                            let name = &problem.topics[t as usize];
                            (given[name.as_str()], idx as i64)
                        })
                        .collect()
                })
                .collect();
        }
    }
    (median(build), median(run), owned_out, ids)
}

fn round2(case: &Case, ids: &[String], owned: OwnedByIndex) -> Case {
    let mut members: Vec<CaseMember> = Vec::new();
    let by_id: std::collections::HashMap<&str, &CaseMember> = case.members.iter().map(|m| (m.id.as_str(), m)).collect();
    for (k, (id, o)) in ids.iter().zip(owned).enumerate() {
        if k == 0 {
            continue;
        }
        members.push(member(id.clone(), by_id[id.as_str()].sub, o, 1));
    }
    members.push(member("znew".to_string(), by_id[ids[0].as_str()].sub, Vec::new(), -1));
    Case {
        name: format!("{} round 2", case.name),
        topics: case.topics.clone(),
        subscriptions: case.subscriptions.clone(),
        members,
    }
}

fn main() {
    let filter: Option<String> = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    // KASSIGN_BENCH_STRATEGIES=a,b picks the strategies (default: the sticky engine and the KIP-848
    // broker-side assignors).
    let strategies: Vec<Strategy> = std::env::var("KASSIGN_BENCH_STRATEGIES")
        .unwrap_or_else(|_| "sticky,cooperative-sticky,server-uniform,server-range".to_string())
        .split(',')
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<Strategy>()
                .expect("KASSIGN_BENCH_STRATEGIES: unknown strategy")
        })
        .collect();
    let mut cases: Vec<Case> = Vec::new();
    let t1: Vec<String> = vec!["t".to_string()];
    let _ = &t1;
    cases.push(Case {
        name: "2100 members x 2100 partitions (1 topic)".into(),
        topics: vec![("t".into(), 2100)],
        subscriptions: vec![t1],
        members: (0..2100)
            .map(|i| member(format!("c{i:05}"), 0, Vec::new(), -1))
            .collect(),
    });
    let topics: Vec<String> = (0..500).map(|i| format!("topic{i:03}")).collect();
    let tp: Vec<(String, i64)> = topics.iter().map(|t| (t.clone(), 2000)).collect();
    cases.push(Case {
        name: "500 topics x 2000 partitions, 2000 members, uniform".into(),
        topics: tp.clone(),
        subscriptions: vec![topics.clone()],
        members: (0..2000)
            .map(|i| member(format!("c{i:05}"), 0, Vec::new(), -1))
            .collect(),
    });
    let only0 = vec![topics[0].clone()];
    cases.push(Case {
        name: "500 topics x 2000 partitions, 2000 members, last on topic 0 only".into(),
        topics: tp,
        subscriptions: vec![topics.clone(), only0],
        members: (0..2000)
            .map(|i| member(format!("c{i:05}"), usize::from(i == 1999), Vec::new(), -1))
            .collect(),
    });
    let btopics: Vec<String> = (0..1000).map(|i| format!("t{i:04}")).collect();
    cases.push(Case {
        name: "10000 members, 5 subscription groups, 1000 topics x 50".into(),
        topics: btopics.iter().map(|t| (t.clone(), 50)).collect(),
        subscriptions: (0..5).map(|g| btopics[g * 200..g * 200 + 200].to_vec()).collect(),
        members: (0..10000)
            .map(|i| member(format!("c{i:05}"), i % 5, Vec::new(), -1))
            .collect(),
    });
    println!("| case | strategy | build (ms) | assign (ms) | total core (ms) |");
    println!("|---|---|---:|---:|---:|");
    for case in &cases {
        if let Some(f) = &filter {
            if !case.name.contains(f.as_str()) {
                continue;
            }
        }
        for strategy in strategies.iter().copied() {
            let runs = if case.members.len() * case.topics.len() > 100_000 {
                5
            } else {
                51
            };
            let (b, r, owned, ids) = time_case(strategy, case, runs);
            println!(
                "| {} | {} | {:.3} | {:.3} | {:.3} |",
                case.name,
                strategy.name(),
                b,
                r,
                b + r
            );
            let c2 = round2(case, &ids, owned);
            let (b2, r2, _, _) = time_case(strategy, &c2, runs);
            println!(
                "| {} | {} | {:.3} | {:.3} | {:.3} |",
                c2.name,
                strategy.name(),
                b2,
                r2,
                b2 + r2
            );
        }
    }
}
