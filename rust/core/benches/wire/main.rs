//! Phase timings of the leader's wire path (`kassign_core::wire::assign`) on a dumped group:
//! decode, build, assign, encode. Input: a file written by `benches/wire_dump.py`; the whole
//! call is timed first, then its phases as `wire::assign_unresolved` runs them (the reference
//! decoder, member by member).
//!
//!     python benches/wire_dump.py java-large-uniform/round2 sticky out/wire.bin
//!     cargo bench --bench wire -- out/wire.bin sticky [RUNS]
use std::str::FromStr;
use std::time::Instant;

use kassign_core::model::ProblemBuilder;
use kassign_core::strategy::Strategy;
use kassign_core::wire;

fn u32_at(b: &[u8], i: &mut usize) -> usize {
    let v = u32::from_le_bytes(b[*i..*i + 4].try_into().unwrap()) as usize;
    *i += 4;
    v
}

fn main() {
    let args: Vec<String> = std::env::args().filter(|a| a != "--bench").collect();
    let data = std::fs::read(&args[1]).expect("dump file");
    let strategy = Strategy::from_str(&args[2]).expect("strategy");
    let runs: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(7);
    let mut i = 0;
    let n_topics = u32_at(&data, &mut i);
    let mut topics = Vec::with_capacity(n_topics);
    for _ in 0..n_topics {
        let n = u32_at(&data, &mut i);
        let name = String::from_utf8(data[i..i + n].to_vec()).unwrap();
        i += n;
        topics.push((name, u32_at(&data, &mut i) as i64));
    }
    let n_members = u32_at(&data, &mut i);
    let mut members = Vec::with_capacity(n_members);
    for _ in 0..n_members {
        let n = u32_at(&data, &mut i);
        let id = std::str::from_utf8(&data[i..i + n]).unwrap();
        i += n;
        let n = u32_at(&data, &mut i);
        members.push(wire::WireInput {
            id,
            subscription: &data[i..i + n],
            group_instance_id: None,
        });
        i += n;
    }
    let mut whole = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let (out, _) = wire::assign(strategy, &members, topics.clone(), false, &[]).unwrap();
        whole.push(t.elapsed().as_secs_f64());
        std::hint::black_box(out);
    }
    whole.sort_by(f64::total_cmp);
    println!(
        "wire::assign median {:.2} ms (min {:.2})",
        whole[runs / 2] * 1e3,
        whole[0] * 1e3
    );
    // Phases, as wire::assign runs them.
    let history = wire::History::of(strategy.name());
    let t = Instant::now();
    let mut warnings = Vec::new();
    let decoded: Vec<_> = members
        .iter()
        .map(|w| wire::member(w.id, w.subscription, history, &mut warnings))
        .collect();
    let t_decode = t.elapsed();
    let t = Instant::now();
    let mut b = ProblemBuilder::new(topics.clone()).unwrap();
    for (w, m) in members.iter().zip(&decoded) {
        let sub = b.subscription(&m.topics);
        let mut owned = Vec::new();
        for g in &m.owned {
            if let Some(tid) = b.topic(g.topic) {
                owned.extend(g.partitions.iter().filter_map(|p| b.partition(tid, p as i64)));
            }
        }
        b.add_member(w.id.to_string(), sub, owned, m.generation, m.rack, None)
            .unwrap();
    }
    let problem = b.build().unwrap();
    let t_build = t.elapsed();
    let t = Instant::now();
    let a = strategy.run(&problem);
    let t_assign = t.elapsed();
    let t = Instant::now();
    let (starts, parts) = a.grouped(problem.members.len());
    let mut n = 0;
    for pos in 0..problem.members.len() {
        let m = problem.input_order[pos] as usize;
        n += wire::encode_member_assignment(&problem.topics, &problem.topic_base, &parts[starts[m]..starts[m + 1]])
            .unwrap()
            .len();
    }
    let t_encode = t.elapsed();
    println!(
        "decode {:.2} ms, build {:.2} ms, assign {:.2} ms, encode {:.2} ms ({} bytes out)",
        t_decode.as_secs_f64() * 1e3,
        t_build.as_secs_f64() * 1e3,
        t_assign.as_secs_f64() * 1e3,
        t_encode.as_secs_f64() * 1e3,
        n
    );
}
