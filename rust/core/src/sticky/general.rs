//! General path: heterogeneous subscriptions.
//!
//! Topics with the same subscribers form a class; all counting happens on the (class, member)
//! edges, never on (partition, member) pairs.
//!
//! A. An optimal load vector: water-filling class by class (fewest subscribers first), then every
//!    cost-reducing path is removed (reverse BFS from the lightest members; push units from each
//!    member at least two heavier than the lightest member it can reach).
//! B. The levels of that optimum (members reachable by moves from all remaining members of the
//!    largest remaining load beta; each holds beta or beta - 1 in every optimum, with a fixed number
//!    at beta) describe every optimal load vector; a min-cost flow (keep = 0, new = 1) over
//!    class -> member -> level -> sink keeps the most owned partitions among them. It starts from
//!    "keep as much as possible" plus a greedy fill, which has no negative cycle, and finishes with
//!    successive shortest paths when the greedy fill leaves partitions over.
//! C. Concrete partitions: kept claims per class in keep order; the rest of each class dealt
//!    round-robin in (topic, partition) order (after a rack-matching pass when racks apply).

use std::collections::{HashMap, VecDeque};

use super::rack::{self, Slots};
use super::{keep_order, Claims, OutOfWork, Placer, Work};
use crate::model::{MemberIdx, PartId, Problem, NO_OWNER};

const NONE: u32 = u32::MAX;

/// Topic classes and their class -> member edges (CSR both ways).
struct Classes {
    topics: Vec<Vec<u32>>,
    size: Vec<u64>,
    start: Vec<usize>,
    edge_member: Vec<u32>,
    edge_class: Vec<u32>,
    /// member => (class, edge), in class order (CSR over `inc_start`).
    inc_start: Vec<usize>,
    inc: Vec<(u32, u32)>,
    /// classes in fill order: fewest subscribers first, then class id.
    order: Vec<u32>,
}

impl Classes {
    fn build(problem: &Problem) -> Classes {
        let nt = problem.topics.len();
        let nsubs = problem.subs.len();
        // topic => the subscriptions (interned) that include it; equal lists = equal subscribers.
        let mut topic_subs: Vec<Vec<u32>> = vec![Vec::new(); nt];
        for (s, topics) in problem.subs.iter().enumerate() {
            for &t in topics {
                topic_subs[t as usize].push(s as u32);
            }
        }
        let mut members_of_sub: Vec<Vec<u32>> = vec![Vec::new(); nsubs];
        for (i, m) in problem.members.iter().enumerate() {
            members_of_sub[m.sub as usize].push(i as u32);
        }
        // A subscription no member uses cannot exist (subs are interned from members).
        let mut key_to_class: HashMap<&[u32], u32> = HashMap::new();
        let mut topics: Vec<Vec<u32>> = Vec::new();
        let mut keys: Vec<&[u32]> = Vec::new();
        for (t, subs) in topic_subs.iter().enumerate().take(nt) {
            if subs.is_empty() || problem.topic_len[t] == 0 {
                continue;
            }
            let key: &[u32] = subs;
            let c = *key_to_class.entry(key).or_insert_with(|| {
                topics.push(Vec::new());
                keys.push(key);
                (topics.len() - 1) as u32
            });
            topics[c as usize].push(t as u32);
        }
        let size: Vec<u64> = topics
            .iter()
            .map(|ts| ts.iter().map(|&t| problem.topic_len[t as usize] as u64).sum())
            .collect();
        let mut start = Vec::with_capacity(topics.len() + 1);
        start.push(0usize);
        let mut edge_member: Vec<u32> = Vec::new();
        let mut edge_class: Vec<u32> = Vec::new();
        let mut buf: Vec<u32> = Vec::new();
        for (c, key) in keys.iter().enumerate() {
            buf.clear();
            for &s in key.iter() {
                buf.extend_from_slice(&members_of_sub[s as usize]);
            }
            buf.sort_unstable();
            for &m in &buf {
                edge_member.push(m);
                edge_class.push(c as u32);
            }
            start.push(edge_member.len());
        }
        let nm = problem.members.len();
        let mut inc_start = vec![0usize; nm + 1];
        for &m in &edge_member {
            inc_start[m as usize + 1] += 1;
        }
        for i in 0..nm {
            inc_start[i + 1] += inc_start[i];
        }
        let mut fill = inc_start.clone();
        let mut inc = vec![(0u32, 0u32); edge_member.len()];
        // edges are grouped by class in class order, so each member's list ends up in class order
        for (e, &m) in edge_member.iter().enumerate() {
            inc[fill[m as usize]] = (edge_class[e], e as u32);
            fill[m as usize] += 1;
        }
        let mut order: Vec<u32> = (0..topics.len() as u32).collect();
        order.sort_by_key(|&c| (start[c as usize + 1] - start[c as usize], c));
        Classes {
            topics,
            size,
            start,
            edge_member,
            edge_class,
            inc_start,
            inc,
            order,
        }
    }

    #[inline]
    fn edges(&self, c: u32) -> std::ops::Range<usize> {
        self.start[c as usize]..self.start[c as usize + 1]
    }

    #[inline]
    fn incidence(&self, m: usize) -> &[(u32, u32)] {
        &self.inc[self.inc_start[m]..self.inc_start[m + 1]]
    }
}

/// Spread class c's partitions over its subscribers, raising the lowest loads first.
fn water_fill(cls: &Classes, c: u32, load: &mut [u64], x: &mut [u64]) {
    let edges = cls.edges(c);
    let mut units = cls.size[c as usize];
    let ms = &cls.edge_member[edges.clone()];
    let mut lo = ms.iter().map(|&m| load[m as usize]).min().unwrap_or(0);
    let mut hi = lo + units;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let mut need: u64 = 0;
        for &m in ms {
            let l = load[m as usize];
            if l < mid {
                need += mid - l;
                if need > units {
                    break;
                }
            }
        }
        if need <= units {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let level = lo;
    for e in edges.clone() {
        let m = cls.edge_member[e] as usize;
        if load[m] < level {
            let d = level - load[m];
            x[e] += d;
            load[m] += d;
            units -= d;
        }
    }
    for e in edges {
        if units == 0 {
            break;
        }
        let m = cls.edge_member[e] as usize;
        if load[m] == level {
            x[e] += 1;
            load[m] += 1;
            units -= 1;
        }
    }
}

/// Remove every cost-reducing path (see the module docs, step A).
fn balance(cls: &Classes, load: &mut [u64], x: &mut [u64], work: &mut Work) -> Result<(), OutOfWork> {
    let nm = load.len();
    let nc = cls.topics.len();
    let em = &cls.edge_member;
    let ec = &cls.edge_class;
    let mut seen_m = vec![false; nm];
    let mut seen_c = vec![false; nc];
    let mut root = vec![NONE; nm];
    let mut via_m = vec![NONE; nm];
    let mut via_c = vec![NONE; nc];
    let mut order: Vec<u32> = (0..nm as u32).collect();
    let mut queue: Vec<u32> = Vec::with_capacity(nm);
    loop {
        // One round: two sorts and one search over every member and edge.
        work.spend(2 * nm as u64 + cls.edge_member.len() as u64 + nc as u64)?;
        seen_m.iter_mut().for_each(|s| *s = false);
        seen_c.iter_mut().for_each(|s| *s = false);
        order.sort_unstable_by_key(|&m| (load[m as usize], m));
        for &v in &order {
            if seen_m[v as usize] {
                continue;
            }
            seen_m[v as usize] = true;
            root[v as usize] = v;
            queue.clear();
            queue.push(v);
            let mut head = 0;
            while head < queue.len() {
                let w = queue[head] as usize;
                head += 1;
                for &(c, e) in cls.incidence(w) {
                    if seen_c[c as usize] {
                        continue;
                    }
                    seen_c[c as usize] = true;
                    via_c[c as usize] = e;
                    for e2 in cls.edges(c) {
                        let u = em[e2] as usize;
                        if x[e2] > 0 && !seen_m[u] {
                            seen_m[u] = true;
                            root[u] = v;
                            via_m[u] = e2 as u32;
                            queue.push(u as u32);
                        }
                    }
                }
            }
        }
        let mut improved = false;
        order.sort_unstable_by_key(|&m| (std::cmp::Reverse(load[m as usize]), m));
        for &u in &order {
            let u = u as usize;
            let r = root[u] as usize;
            if load[u] < load[r] + 2 {
                continue;
            }
            let mut bottleneck = load[u];
            let mut w = u;
            while w != r {
                let e = via_m[w] as usize;
                bottleneck = bottleneck.min(x[e]);
                w = em[via_c[ec[e] as usize] as usize] as usize;
            }
            let delta = bottleneck.min((load[u] - load[r]) / 2);
            if delta == 0 {
                continue;
            }
            let mut w = u;
            while w != r {
                let e = via_m[w] as usize;
                let to = via_c[ec[e] as usize] as usize;
                x[e] -= delta;
                x[to] += delta;
                w = em[to] as usize;
            }
            load[u] -= delta;
            load[r] += delta;
            improved = true;
        }
        if !improved {
            return Ok(());
        }
    }
}

/// The levels of an optimal load vector (module docs, step B).
struct Levels {
    level: Vec<u32>,
    lo: Vec<u64>,
    hi: Vec<u64>,
    at_hi: Vec<u64>,
}

fn levels(cls: &Classes, load: &[u64], x: &[u64], work: &mut Work) -> Result<Levels, OutOfWork> {
    let nm = load.len();
    let em = &cls.edge_member;
    let mut level = vec![NONE; nm];
    let mut lo = vec![0u64; nm];
    let mut hi = vec![0u64; nm];
    let mut at_hi: Vec<u64> = Vec::new();
    let mut order: Vec<u32> = (0..nm as u32).collect();
    order.sort_unstable_by_key(|&m| (std::cmp::Reverse(load[m as usize]), m));
    let mut seen_c = vec![NONE; cls.topics.len()];
    let mut queue: Vec<u32> = Vec::new();
    let mut k = 0;
    while k < nm {
        if level[order[k] as usize] != NONE {
            k += 1;
            continue;
        }
        let beta = load[order[k] as usize];
        let lv = at_hi.len() as u32;
        queue.clear();
        let mut j = k;
        while j < nm && load[order[j] as usize] == beta {
            let m = order[j] as usize;
            if level[m] == NONE {
                level[m] = lv;
                queue.push(m as u32);
            }
            j += 1;
        }
        let mut head = 0;
        while head < queue.len() {
            let w = queue[head] as usize;
            head += 1;
            for &(c, e) in cls.incidence(w) {
                if x[e as usize] == 0 || seen_c[c as usize] == lv {
                    continue;
                }
                seen_c[c as usize] = lv;
                work.spend(cls.edges(c).len() as u64)?;
                for e2 in cls.edges(c) {
                    let v = em[e2] as usize;
                    if level[v] == NONE {
                        level[v] = lv;
                        queue.push(v as u32);
                    }
                }
            }
        }
        let mut top = 0u64;
        for &m in &queue {
            let m = m as usize;
            if beta == 0 {
                lo[m] = 0;
                hi[m] = 0;
            } else {
                lo[m] = beta - 1;
                hi[m] = beta;
                if load[m] == beta {
                    top += 1;
                }
            }
        }
        at_hi.push(top);
    }
    Ok(Levels { level, lo, hi, at_hi })
}

/// Why step B stopped early.
enum Stop {
    OutOfWork,
    Bug(&'static str),
}

impl From<OutOfWork> for Stop {
    fn from(_: OutOfWork) -> Stop {
        Stop::OutOfWork
    }
}

/// How a step of an augmenting path uses an edge.
#[derive(Clone, Copy)]
enum Step {
    KeepAdd(u32),
    NewAdd(u32),
    NewSub(u32),
    KeepSub(u32),
    Slot,
}

/// Step B: keep/new counts per edge, member ranges [lo, hi], free hi slots per level.
struct Flow<'c> {
    cls: &'c Classes,
    h: Vec<u64>,
    k: Vec<u64>,
    y: Vec<u64>,
    used: Vec<u64>,
    lv: Levels,
    free_hi: Vec<u64>,
    supply: Vec<u64>,
    /// member => its edges in the order it keeps classes (class fill order).
    member_edges: Vec<Vec<(u32, u32)>>,
}

impl<'c> Flow<'c> {
    fn new(cls: &'c Classes, h: Vec<u64>, lv: Levels) -> Flow<'c> {
        let ne = cls.edge_member.len();
        let nm = lv.lo.len();
        let mut rank = vec![0u32; cls.topics.len()];
        for (i, &c) in cls.order.iter().enumerate() {
            rank[c as usize] = i as u32;
        }
        let member_edges = (0..nm)
            .map(|m| {
                let mut v = cls.incidence(m).to_vec();
                v.sort_by_key(|&(c, _)| rank[c as usize]);
                v
            })
            .collect();
        let free_hi = lv.at_hi.clone();
        Flow {
            cls,
            h,
            k: vec![0; ne],
            y: vec![0; ne],
            used: vec![0; nm],
            lv,
            free_hi,
            supply: cls.size.clone(),
            member_edges,
        }
    }

    fn add(&mut self, m: usize, d: i64) {
        let before = self.used[m];
        let after = (before as i64 + d) as u64;
        self.used[m] = after;
        let lo = self.lv.lo[m];
        let l = self.lv.level[m] as usize;
        if before <= lo && lo < after {
            self.free_hi[l] -= 1;
        } else if after <= lo && lo < before {
            self.free_hi[l] += 1;
        }
    }

    fn room(&self, m: usize) -> u64 {
        let (u, lo) = (self.used[m], self.lv.lo[m]);
        if u < lo {
            lo - u
        } else if u == lo && self.lv.hi[m] > lo && self.free_hi[self.lv.level[m] as usize] > 0 {
            1
        } else {
            0
        }
    }

    fn run(&mut self, work: &mut Work) -> Result<(), Stop> {
        let nm = self.used.len();
        for m in 0..nm {
            let mut budget = self.lv.lo[m];
            for i in 0..self.member_edges[m].len() {
                let (c, e) = self.member_edges[m][i];
                let d = self.h[e as usize].min(budget);
                if d > 0 {
                    self.k[e as usize] += d;
                    self.supply[c as usize] -= d;
                    budget -= d;
                    self.add(m, d as i64);
                }
            }
        }
        for m in 0..nm {
            if self.room(m) > 0 && self.used[m] == self.lv.lo[m] {
                for i in 0..self.member_edges[m].len() {
                    let (c, e) = self.member_edges[m][i];
                    if self.k[e as usize] < self.h[e as usize] {
                        self.k[e as usize] += 1;
                        self.supply[c as usize] -= 1;
                        self.add(m, 1);
                        break;
                    }
                }
            }
        }
        for oi in 0..self.cls.order.len() {
            let c = self.cls.order[oi];
            for e in self.cls.edges(c) {
                if self.supply[c as usize] == 0 {
                    break;
                }
                let m = self.cls.edge_member[e] as usize;
                let mut d = self.room(m).min(self.supply[c as usize]);
                while d > 0 {
                    self.y[e] += d;
                    self.supply[c as usize] -= d;
                    self.add(m, d as i64);
                    d = self.room(m).min(self.supply[c as usize]);
                }
            }
        }
        while self.supply.iter().any(|&s| s > 0) {
            self.augment(work)?;
        }
        Ok(())
    }

    /// One unit along a shortest augmenting path (queue-based Bellman-Ford). Nodes: classes,
    /// then members, then levels.
    fn augment(&mut self, work: &mut Work) -> Result<(), Stop> {
        let cls = self.cls;
        let nc = cls.topics.len();
        let nm = self.used.len();
        let nl = self.free_hi.len();
        let nn = nc + nm + nl;
        // Each augmenting path first sets up every node, however short the path.
        work.spend(nn as u64)?;
        const INF: i64 = i64::MAX;
        let mut dist = vec![INF; nn];
        let mut prev: Vec<Option<(usize, Step)>> = vec![None; nn];
        let mut in_q = vec![false; nn];
        let mut q: VecDeque<usize> = VecDeque::new();
        for c in 0..nc {
            if self.supply[c] > 0 {
                dist[c] = 0;
                q.push_back(c);
                in_q[c] = true;
            }
        }
        let mut members_of_level: Vec<Vec<usize>> = vec![Vec::new(); nl];
        for m in 0..nm {
            members_of_level[self.lv.level[m] as usize].push(m);
        }
        let limit = (nn as u64 + 1) * (cls.edge_member.len() as u64 + nm as u64 + 1) + 10;
        let mut relaxations: u64 = 0;
        let mut out: Vec<(usize, i64, Step)> = Vec::new();
        while let Some(v) = q.pop_front() {
            in_q[v] = false;
            relaxations += 1;
            if relaxations > limit {
                return Err(Stop::Bug(
                    "sticky: negative cycle in the stickiness flow (internal error)",
                ));
            }
            let d = dist[v];
            out.clear();
            if v < nc {
                for e in cls.edges(v as u32) {
                    let m = cls.edge_member[e] as usize;
                    if self.k[e] < self.h[e] {
                        out.push((nc + m, 0, Step::KeepAdd(e as u32)));
                    } else {
                        out.push((nc + m, 1, Step::NewAdd(e as u32)));
                    }
                }
            } else if v < nc + nm {
                let m = v - nc;
                for &(c, e) in cls.incidence(m) {
                    if self.y[e as usize] > 0 {
                        out.push((c as usize, -1, Step::NewSub(e)));
                    } else if self.k[e as usize] > 0 {
                        out.push((c as usize, 0, Step::KeepSub(e)));
                    }
                }
                if self.used[m] == self.lv.lo[m] && self.lv.hi[m] > self.lv.lo[m] {
                    out.push((nc + nm + self.lv.level[m] as usize, 0, Step::Slot));
                }
            } else {
                let l = v - nc - nm;
                for &m in &members_of_level[l] {
                    if self.used[m] == self.lv.hi[m] && self.lv.hi[m] > self.lv.lo[m] {
                        out.push((nc + m, 0, Step::Slot));
                    }
                }
            }
            work.spend(out.len() as u64 + 1)?;
            for &(w, cost, how) in &out {
                if d + cost < dist[w] {
                    dist[w] = d + cost;
                    prev[w] = Some((v, how));
                    if !in_q[w] {
                        in_q[w] = true;
                        q.push_back(w);
                    }
                }
            }
        }
        let mut best = usize::MAX;
        let mut best_d = INF;
        for m in 0..nm {
            if self.used[m] < self.lv.lo[m] && dist[nc + m] < best_d {
                best = nc + m;
                best_d = dist[nc + m];
            }
        }
        for l in 0..nl {
            if self.free_hi[l] > 0 && dist[nc + nm + l] < best_d {
                best = nc + nm + l;
                best_d = dist[nc + nm + l];
            }
        }
        if best == usize::MAX {
            return Err(Stop::Bug(
                "sticky: no feasible placement for the optimal load vector (internal error)",
            ));
        }
        let mut path: Vec<Step> = Vec::new();
        let mut v = best;
        while let Some((u, how)) = prev[v] {
            path.push(how);
            v = u;
        }
        let source = v;
        for how in path {
            match how {
                Step::KeepAdd(e) => {
                    self.k[e as usize] += 1;
                    self.add(cls.edge_member[e as usize] as usize, 1);
                }
                Step::NewAdd(e) => {
                    self.y[e as usize] += 1;
                    self.add(cls.edge_member[e as usize] as usize, 1);
                }
                Step::NewSub(e) => {
                    self.y[e as usize] -= 1;
                    self.add(cls.edge_member[e as usize] as usize, -1);
                }
                Step::KeepSub(e) => {
                    self.k[e as usize] -= 1;
                    self.add(cls.edge_member[e as usize] as usize, -1);
                }
                Step::Slot => {}
            }
        }
        self.supply[source] -= 1;
        Ok(())
    }
}

struct Room<'p, 'a> {
    place: &'p mut Placer<'a>,
    room: &'p mut [u64],
    given: &'p mut [u32],
}

impl Slots for Room<'_, '_> {
    fn key(&self, m: MemberIdx) -> Option<u32> {
        if self.room[m as usize] > 0 {
            Some(self.given[m as usize])
        } else {
            None
        }
    }
    fn take(&mut self, m: MemberIdx, p: PartId) {
        self.room[m as usize] -= 1;
        self.given[m as usize] += 1;
        self.place.give(m, p);
    }
}

/// The owner of every partition (module docs, steps A to C).
///
/// Steps A and B spend `work` (one unit per member, class or edge visited); when it runs out the
/// result is `Err(OutOfWork)` and nothing is placed. Step C is linear in the partitions.
pub(crate) fn assign(
    problem: &Problem,
    claims: &Claims,
    cooperative: bool,
    work: &mut Work,
) -> Result<Vec<u32>, OutOfWork> {
    let nm = problem.members.len();
    let cls = Classes::build(problem);
    let mut place = Placer::new(problem, claims, cooperative);
    if cls.topics.is_empty() {
        return Ok(place.owner);
    }
    let mut class_of_topic = vec![NONE; problem.topics.len()];
    for (c, ts) in cls.topics.iter().enumerate() {
        for &t in ts {
            class_of_topic[t as usize] = c as u32;
        }
    }
    // A. an optimal load vector
    let mut load = vec![0u64; nm];
    let mut x = vec![0u64; cls.edge_member.len()];
    for &c in &cls.order {
        water_fill(&cls, c, &mut load, &mut x);
    }
    balance(&cls, &mut load, &mut x, work)?;
    // B. the most kept partitions among all optimal load vectors
    let lv = levels(&cls, &load, &x, work)?;
    drop(x);
    // each member's valid claims as (class, partition), grouped by class
    let mut mine: Vec<Vec<(u32, PartId)>> = vec![Vec::new(); nm];
    for (m, member) in problem.members.iter().enumerate() {
        let v = &mut mine[m];
        for &p in &member.owned {
            if claims.win[p as usize] == m as u32 {
                v.push((class_of_topic[problem.topic_of(p) as usize], p));
            }
        }
        v.sort_unstable();
    }
    // edge (class, member) => the member's claims in that class: mine[m][claims[e].0..claims[e].1]
    let mut claims_of: Vec<(usize, usize)> = vec![(0, 0); cls.edge_member.len()];
    for (m, v) in mine.iter().enumerate() {
        let mut i = 0;
        for &(c, e) in cls.incidence(m) {
            let s = i;
            while i < v.len() && v[i].0 == c {
                i += 1;
            }
            claims_of[e as usize] = (s, i);
        }
    }
    let h: Vec<u64> = claims_of.iter().map(|&(s, i)| (i - s) as u64).collect();
    let mut flow = Flow::new(&cls, h, lv);
    match flow.run(work) {
        Ok(()) => {}
        Err(Stop::OutOfWork) => return Err(OutOfWork),
        Err(Stop::Bug(msg)) => panic!("{msg}"),
    }
    // C. concrete partitions
    let rack_on = problem.rack_aware();
    let mut buf: Vec<PartId> = Vec::new();
    for (m, v) in mine.iter().enumerate() {
        for &(_, e) in cls.incidence(m) {
            let (s, i) = claims_of[e as usize];
            let keep = flow.k[e as usize] as usize;
            if keep > 0 {
                buf.clear();
                buf.extend(v[s..i].iter().map(|&(_, p)| p));
                if keep < buf.len() {
                    keep_order(problem, m as MemberIdx, &mut buf, rack_on);
                }
                for &p in &buf[..keep] {
                    place.keep(m as MemberIdx, p);
                }
            }
        }
    }
    let mut placed = if rack_on {
        vec![false; problem.num_partitions() as usize]
    } else {
        Vec::new()
    };
    let mut room = vec![0u64; nm];
    let mut given = vec![0u32; nm];
    let mut pool: Vec<PartId> = Vec::new();
    let mut ms: Vec<MemberIdx> = Vec::new();
    let mut next: Vec<MemberIdx> = Vec::new();
    for c in 0..cls.topics.len() as u32 {
        pool.clear();
        for &t in &cls.topics[c as usize] {
            for p in problem.topic_range(t) {
                if place.owner[p as usize] == NO_OWNER {
                    pool.push(p);
                }
            }
        }
        ms.clear();
        for e in cls.edges(c) {
            if flow.y[e] > 0 {
                let m = cls.edge_member[e];
                room[m as usize] = flow.y[e];
                given[m as usize] = 0;
                ms.push(m);
            }
        }
        if rack_on && !pool.is_empty() {
            let mut r = Room {
                place: &mut place,
                room: &mut room,
                given: &mut given,
            };
            rack::pass(problem, &pool, &ms, &mut r, &mut placed, work);
            pool.retain(|&p| !placed[p as usize]);
            ms.retain(|&m| room[m as usize] > 0);
        }
        let mut it = pool.iter().copied();
        while !ms.is_empty() {
            next.clear();
            for &m in &ms {
                let p = it
                    .next()
                    .expect("sticky: class pool shorter than its quotas (internal error)");
                place.give(m, p);
                room[m as usize] -= 1;
                if room[m as usize] > 0 {
                    next.push(m);
                }
            }
            std::mem::swap(&mut ms, &mut next);
        }
    }
    Ok(place.owner)
}

#[cfg(test)]
mod tests {
    use crate::model::{MemberInput, Problem, NO_OWNER};
    use proptest::prelude::*;

    /// A group with heterogeneous subscriptions: `subs[m]` the topics (indices) member m
    /// subscribes to, `sizes[t]` topic t's partitions, `owned[m]` (topic, partition) claims.
    fn problem(sizes: &[i64], subs: &[Vec<usize>], owned: &[Vec<(usize, i64)>], generation: i32) -> Problem {
        let topics = sizes.iter().enumerate().map(|(t, &n)| (format!("t{t}"), n)).collect();
        let members = subs
            .iter()
            .enumerate()
            .map(|(m, ts)| MemberInput {
                id: format!("m{m:02}"),
                topics: ts.iter().map(|t| format!("t{t}")).collect(),
                owned: owned
                    .get(m)
                    .map(|o| o.iter().map(|&(t, p)| (format!("t{t}"), p)).collect())
                    .unwrap_or_default(),
                generation,
                ..Default::default()
            })
            .collect();
        Problem::build(topics, members, vec![]).unwrap()
    }

    fn group() -> impl Strategy<Value = (Vec<i64>, Vec<Vec<usize>>)> {
        (1usize..6, 1usize..9).prop_flat_map(|(nt, nm)| {
            (
                proptest::collection::vec(0i64..12, nt),
                proptest::collection::vec(proptest::collection::btree_set(0..nt, 1..=nt), nm)
                    .prop_map(|v| v.into_iter().map(|s| s.into_iter().collect()).collect()),
            )
        })
    }

    /// Every subscribed partition has exactly one owner, a subscriber of its topic; and no
    /// partition could move to another subscriber holding two or more fewer (Java's balance
    /// condition, implied by an optimal load vector).
    fn check_valid_and_balanced(p: &Problem, owner: &[u32]) -> Result<(), TestCaseError> {
        let nm = p.members.len();
        let mut count = vec![0usize; nm];
        for (part, &o) in owner.iter().enumerate() {
            let t = p.topic_of(part as u32);
            let subscribed = (0..nm).any(|m| p.subscribes(m as u32, t));
            if !subscribed {
                prop_assert_eq!(o, NO_OWNER);
                continue;
            }
            prop_assert!(o != NO_OWNER, "partition {} unassigned", part);
            prop_assert!(p.subscribes(o, t), "partition {} on a non-subscriber", part);
            count[o as usize] += 1;
        }
        for (part, &o) in owner.iter().enumerate() {
            if o == NO_OWNER {
                continue;
            }
            let t = p.topic_of(part as u32);
            for m in 0..nm {
                prop_assert!(
                    !(p.subscribes(m as u32, t) && count[o as usize] >= count[m] + 2),
                    "partition {} could move from m{} ({}) to m{} ({})",
                    part,
                    o,
                    count[o as usize],
                    m,
                    count[m]
                );
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn fresh_groups_are_valid_and_balanced((sizes, subs) in group()) {
            let p = problem(&sizes, &subs, &[], -1);
            let a = super::super::assign(&p, false);
            check_valid_and_balanced(&p, &a.owner)?;
        }

        /// With random history (claims on any partition, some invalid, some contested) the result
        /// is still valid and balanced, and feeding it back as history changes nothing.
        #[test]
        fn history_is_kept_and_results_are_fixed_points(
            (sizes, subs) in group(),
            seed in proptest::collection::vec((0usize..8, 0usize..6, 0i64..14), 0..40),
            cooperative in any::<bool>(),
        ) {
            let mut owned: Vec<Vec<(usize, i64)>> = vec![Vec::new(); subs.len()];
            for (m, t, part) in seed {
                if m < subs.len() && t < sizes.len() {
                    owned[m].push((t, part));
                }
            }
            let p = problem(&sizes, &subs, &owned, 3);
            let a = super::super::assign(&p, false);
            check_valid_and_balanced(&p, &a.owner)?;
            let again: Vec<Vec<(usize, i64)>> = (0..subs.len())
                .map(|m| {
                    a.owner
                        .iter()
                        .enumerate()
                        .filter(|&(_, &o)| o == m as u32)
                        .map(|(part, _)| {
                            let (t, i) = p.split(part as u32);
                            (p.topics[t as usize][1..].parse().unwrap(), i as i64)
                        })
                        .collect()
                })
                .collect();
            let q = problem(&sizes, &subs, &again, 4);
            let b = super::super::assign(&q, cooperative);
            prop_assert_eq!(&b.owner, &a.owner);
        }
    }

    #[test]
    fn kept_claims_within_quota() {
        // m0 subscribes to t0 and t1 and owns all 4 partitions; m1 (t1 only) joins. The optimal
        // loads are 2 and 2, and m1 can only take t1: m0 keeps t0, the two moves are t1's.
        let p = problem(
            &[2, 2],
            &[vec![0, 1], vec![1]],
            &[vec![(0, 0), (0, 1), (1, 0), (1, 1)]],
            1,
        );
        let a = super::super::assign(&p, false);
        assert_eq!(a.owner, vec![0, 0, 1, 1]);
        // With three t1 partitions the loads are 3 and 2: m0 keeps one of t1 as well.
        let p = problem(
            &[2, 3],
            &[vec![0, 1], vec![1]],
            &[vec![(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]],
            1,
        );
        let a = super::super::assign(&p, false);
        assert_eq!(&a.owner[..2], &[0, 0]);
        assert_eq!(a.owner[2..].iter().filter(|&&o| o == 0).count(), 1);
    }
}
