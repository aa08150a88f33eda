//! The improvement pass of the Python strategy `lag-aware` (`lag_aware._Improver` in
//! python/kassign/assignors/lag_aware.py): after the greedy pass, the busiest member gives a
//! partition to, or swaps one with, a less loaded member while that lowers its lag and the count
//! rule allows it, within fixed rounds, samples and a work budget.
//!
//! The strategy stays Python: it chooses the mode, places partitions greedily, decides whether
//! the pass runs and with which phases. This kernel runs the pass itself with the exact rules,
//! orders, samples and budgets of the Python class, which is kept as the reference and the
//! fallback (`tests/test_improve_kernel.py` compares the two on random inputs). Python's float
//! comparisons (`gap / 2` against integer lags) are reproduced with doubled integers, which is
//! exact while every lag sum stays below 2^50; beyond that, [`improve`] returns [`OutOfRange`]
//! and the caller runs the Python class.
//!
//! Items are `(lag, g)`: a partition's lag and its index `g` in the pass's tracked partitions
//! (topic `topic_of[g]`, partition `part_of[g]`), kept in sorted per-member lists. In the
//! per-topic count modes a member has one list per topic with lag (exchanges stay in a topic); in
//! global mode one list for everything (any topic both members subscribe to).

/// The pass cannot run here (a lag sum at or beyond 2^50, a negative lag, an owner out of range):
/// the caller runs the Python implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfRange;

/// Largest total lag the kernel accepts (float halves of sums below it are exact).
pub const MAX_TOTAL: i64 = 1 << 50;

/// The pass's bounds (the Python module's constants, passed in so that both implementations
/// read one definition): rounds per member plus a constant, lowest-loaded partners tried per round
/// (more while none helps), elements of a list sampled for a swap, and the work budget (list
/// elements examined) per tracked partition plus a constant.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub rounds_per_member: usize,
    pub rounds_extra: usize,
    pub partners: usize,
    pub partners_wide: usize,
    pub swap_sample: usize,
    pub work_per_partition: f64,
    pub work_extra: u64,
}

impl Default for Limits {
    /// The values of `lag_aware`'s module constants.
    fn default() -> Self {
        Limits {
            rounds_per_member: 4,
            rounds_extra: 64,
            partners: 6,
            partners_wide: 64,
            swap_sample: 64,
            work_per_partition: 0.25,
            work_extra: 100_000,
        }
    }
}
/// The key of global mode's one list per member (the Python code's `""`).
const ALL: u32 = u32::MAX;

type Item = (i64, u32);

/// One run of the pass: the least gain as a fraction of the busiest member's lag (`need_rel`)
/// and the partitions it must leave alone (per topic: a flag per partition; None: none).
pub struct Phase<'a> {
    pub need_rel: f64,
    pub frozen: Option<&'a [Option<Vec<bool>>]>,
}

/// The pass's inputs, by topic index (the order of the strategy's `subs`).
pub struct Inputs<'a> {
    /// Members.
    pub n: usize,
    /// Subscribers of each topic (member indices).
    pub subs: &'a [Vec<u32>],
    /// Lag of each partition of each topic (None: the topic has no lag).
    pub arrays: &'a [Option<Vec<i64>>],
    /// Topics in the order the pass lists partitions (`owners`' order in global mode,
    /// `arrays`' order otherwise; only topics with lag in the per-topic modes).
    pub fill_order: &'a [u32],
    /// Global mode (counts overall) or the per-topic count rule.
    pub overall: bool,
    /// The busiest member's lag at which the pass stops.
    pub stop: i64,
    pub limits: Limits,
}

/// `(key, sorted items)` lists of one member, in the order the keys first appeared.
type Held = Vec<(u32, Vec<Item>)>;

struct Pass<'a> {
    inp: &'a Inputs<'a>,
    owners: &'a mut [Vec<i64>],
    load: Vec<i64>,
    /// Member -> its class of subscribed topics (equal sets, equal classes).
    class_of: Vec<u32>,
    /// Class -> its topics, ascending.
    classes: Vec<Vec<u32>>,
    /// Per-topic modes: member -> (topic, partitions of it) for the topics with lag.
    count: Vec<Vec<(u32, i64)>>,
    /// Global mode: member -> partitions.
    total: Vec<i64>,
    held: Vec<Held>,
    topic_of: Vec<u32>,
    part_of: Vec<u32>,
    tracked: usize,
    work: u64,
}

fn count_of(c: &[(u32, i64)], t: u32) -> i64 {
    c.iter().find(|e| e.0 == t).map_or(0, |e| e.1)
}

fn bump(c: &mut Vec<(u32, i64)>, t: u32, by: i64) {
    match c.iter_mut().find(|e| e.0 == t) {
        Some(e) => e.1 += by,
        None => c.push((t, by)),
    }
}

fn list(h: &Held, key: u32) -> Option<&Vec<Item>> {
    h.iter().find(|e| e.0 == key).map(|e| &e.1)
}

/// Items of a sorted list whose lag, doubled, is below `twice` (`bisect_left(lst, (v,))` with
/// `v = twice / 2`, exact for halves).
fn below(lst: &[Item], twice: i64) -> usize {
    lst.partition_point(|it| 2 * it.0 < twice)
}

/// `lag_aware._outward`: k-1, k, k-2, k+1, ... within [0, n), at most `width` each side.
fn outward(k: usize, n: usize, width: usize) -> impl Iterator<Item = usize> {
    (0..width).flat_map(move |step| {
        let lo = (k as i64 - 1 - step as i64).try_into().ok().filter(|&j: &usize| j < n);
        let hi = Some(k + step).filter(|&j| j < n);
        lo.into_iter().chain(hi)
    })
}

struct Exchange {
    b: u32,
    key: u32,
    x: Item,
    y: Option<Item>,
}

impl<'a> Pass<'a> {
    fn has_topic(&self, class: u32, t: u32) -> bool {
        self.classes[class as usize].binary_search(&t).is_ok()
    }

    fn disjoint(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.classes[a as usize], &self.classes[b as usize]);
        let (mut i, mut j) = (0, 0);
        while i < x.len() && j < y.len() {
            match x[i].cmp(&y[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => return false,
            }
        }
        true
    }

    fn fill(&mut self, frozen: Option<&[Option<Vec<bool>>]>) {
        let inp = self.inp;
        let mut held: Vec<Held> = vec![Vec::new(); inp.n];
        let (mut topic_of, mut part_of) = (Vec::new(), Vec::new());
        let mut g = 0u32;
        for &t in inp.fill_order {
            let arr = inp.arrays[t as usize].as_deref();
            let flags = frozen.and_then(|f| f[t as usize].as_deref());
            let key = if inp.overall { ALL } else { t };
            for (p, &i) in self.owners[t as usize].iter().enumerate() {
                if flags.is_some_and(|f| f[p]) {
                    continue;
                }
                topic_of.push(t);
                part_of.push(p as u32);
                let item = (arr.map_or(0, |a| a[p]), g);
                let h = &mut held[i as usize];
                match h.iter_mut().find(|e| e.0 == key) {
                    Some(e) => e.1.push(item),
                    None => h.push((key, vec![item])),
                }
                g += 1;
            }
        }
        for h in &mut held {
            for (_, lst) in h.iter_mut() {
                lst.sort_unstable();
            }
        }
        self.tracked = g as usize;
        self.held = held;
        self.topic_of = topic_of;
        self.part_of = part_of;
    }

    fn transfer(&mut self, src: u32, dst: u32, key: u32, item: Item) {
        let (x, g) = item;
        let (t, p) = (self.topic_of[g as usize], self.part_of[g as usize]);
        let from = &mut self.held[src as usize];
        let lst = &mut from.iter_mut().find(|e| e.0 == key).expect("the item's list").1;
        let at = lst.binary_search(&item).expect("the item is held");
        lst.remove(at);
        let to = &mut self.held[dst as usize];
        let lst = match to.iter().position(|e| e.0 == key) {
            Some(k) => &mut to[k].1,
            None => {
                to.push((key, Vec::new()));
                &mut to.last_mut().unwrap().1
            }
        };
        let at = lst.binary_search(&item).unwrap_or_else(|e| e);
        lst.insert(at, item);
        self.owners[t as usize][p as usize] = dst as i64;
        self.load[src as usize] -= x;
        self.load[dst as usize] += x;
        if self.inp.overall {
            self.total[src as usize] -= 1;
            self.total[dst as usize] += 1;
        } else {
            bump(&mut self.count[src as usize], t, -1);
            bump(&mut self.count[dst as usize], t, 1);
        }
    }

    /// `_Improver._best_exchange`: (gain, exchange) or None.
    fn best_exchange(&mut self, a: u32, b: u32, gap: i64) -> Option<(i64, Option<Exchange>)> {
        let perfect = gap / 2;
        let mut best_gain = 0i64;
        let mut best: Option<Exchange> = None;
        let (ca, cb) = (self.class_of[a as usize], self.class_of[b as usize]);
        let same = ca == cb;
        let overall = self.inp.overall;
        let move_ok = overall && self.total[a as usize] > self.total[b as usize];
        let keys = self.held[a as usize].len();
        for e in 0..keys {
            self.work += 1;
            let (key, alen) = {
                let (k, l) = &self.held[a as usize][e];
                (*k, l.len())
            };
            if alen == 0 || (!overall && !self.has_topic(cb, key)) {
                continue;
            }
            let held_a = &self.held[a as usize][e].1;
            let can_move = if overall {
                move_ok
            } else {
                count_of(&self.count[a as usize], key) > count_of(&self.count[b as usize], key)
            };
            if can_move {
                let k = below(held_a, gap);
                for j in outward(k, alen, if same { 1 } else { 8 }) {
                    let item = held_a[j];
                    let x = item.0;
                    if 0 < x && x < gap && (same || self.has_topic(cb, self.topic_of[item.1 as usize])) {
                        let g = x.min(gap - x);
                        if g > best_gain {
                            best_gain = g;
                            best = Some(Exchange {
                                b,
                                key,
                                x: item,
                                y: None,
                            });
                        }
                    }
                }
                if best_gain >= perfect {
                    return Some((best_gain, best));
                }
            }
            if let Some(held_b) = list(&self.held[b as usize], key).filter(|l| !l.is_empty()) {
                self.work += alen.min(held_b.len()).min(self.inp.limits.swap_sample) as u64;
                let subs = if same { None } else { Some((ca, cb)) };
                let (g, pair) = self.best_pair(held_a, held_b, gap, subs);
                if g > best_gain {
                    best_gain = g;
                    let (x, y) = pair.expect("a gain comes with a pair");
                    best = Some(Exchange { b, key, x, y: Some(y) });
                    if best_gain >= perfect {
                        return Some((best_gain, best));
                    }
                }
            }
        }
        best.as_ref()?;
        Some((best_gain, best))
    }

    /// `lag_aware._best_pair`.
    fn best_pair(&self, a: &[Item], b: &[Item], gap: i64, subs: Option<(u32, u32)>) -> (i64, Option<(Item, Item)>) {
        let perfect = gap / 2;
        let mut best_g = 0i64;
        let mut best = None;
        let flip = b.len() > a.len();
        let (short, long) = if flip { (a, b) } else { (b, a) };
        let step = (short.len() / self.inp.limits.swap_sample.max(1)).max(1);
        let mut j = 0;
        while j < short.len() {
            let e = short[j];
            let twice = if flip { 2 * e.0 - gap } else { 2 * e.0 + gap };
            let k = below(long, twice) as i64;
            for kk in [k - 1, k, k - 2, k + 1] {
                if kk < 0 || kk as usize >= long.len() {
                    continue;
                }
                let other = long[kk as usize];
                let (x, y) = if flip { (e, other) } else { (other, e) };
                let d = x.0 - y.0;
                if 0 < d && d < gap {
                    if let Some((ca, cb)) = subs {
                        if !self.has_topic(cb, self.topic_of[x.1 as usize])
                            || !self.has_topic(ca, self.topic_of[y.1 as usize])
                        {
                            continue;
                        }
                    }
                    let g = d.min(gap - d);
                    if g > best_g {
                        best_g = g;
                        best = Some((x, y));
                    }
                }
            }
            if best_g >= perfect {
                break;
            }
            j += step;
        }
        (best_g, best)
    }

    /// `_Improver._bulk`.
    fn bulk(&mut self, a: u32, b: u32, key: u32, need: i64) -> usize {
        let nonempty = |h: &Held| list(h, key).is_some_and(|l| !l.is_empty());
        if !nonempty(&self.held[a as usize])
            || !nonempty(&self.held[b as usize])
            || (self.inp.overall && self.class_of[a as usize] != self.class_of[b as usize])
        {
            return 0;
        }
        let mut moved = 0;
        while let Some(&y) = list(&self.held[b as usize], key).and_then(|l| l.first()) {
            let half = (self.load[a as usize] - self.load[b as usize]).div_euclid(2);
            let held_a = list(&self.held[a as usize], key).expect("a's list");
            let k = below(held_a, 2 * (y.0 + half + 1));
            if k == 0 {
                break;
            }
            let x = held_a[k - 1];
            if x.0 - y.0 < need.max(1) {
                break;
            }
            self.transfer(a, b, key, x);
            self.transfer(b, a, key, y);
            moved += 2;
            self.work += 1;
        }
        moved
    }

    /// `_Improver.run`: partition moves made.
    fn run(&mut self, need_rel: f64, frozen: Option<&[Option<Vec<bool>>]>) -> usize {
        if need_rel >= 1.0 {
            return 0;
        }
        self.fill(frozen);
        let n = self.inp.n;
        let mut ranked: Vec<(i64, u32)> = (0..n as u32).map(|i| (self.load[i as usize], i)).collect();
        ranked.sort_unstable();
        let mut moved = 0;
        self.work = 0;
        let lim = self.inp.limits;
        let budget = (lim.work_per_partition * self.tracked as f64) as u64 + lim.work_extra;
        for _ in 0..lim.rounds_per_member * n + lim.rounds_extra {
            let Some(&(la, a)) = ranked.last() else { break };
            if la <= self.inp.stop || self.work > budget {
                break;
            }
            let need = if need_rel > 0.0 {
                ((need_rel * la as f64).ceil() as i64).max(1)
            } else {
                1
            };
            let mut best: Option<(i64, Exchange)> = None;
            let mut tried = 0;
            let ca = self.class_of[a as usize];
            for &(lb, b) in &ranked {
                let gap = la - lb;
                if gap / 2 < need || best.as_ref().is_some_and(|x| gap / 2 <= x.0) {
                    break;
                }
                if b == a || self.disjoint(ca, self.class_of[b as usize]) {
                    continue;
                }
                if let Some((g, Some(ex))) = self.best_exchange(a, b, gap) {
                    if g >= need && best.as_ref().map_or(true, |x| g > x.0) {
                        best = Some((g, ex));
                    }
                }
                tried += 1;
                if tried
                    >= if best.is_some() {
                        lim.partners
                    } else {
                        lim.partners_wide
                    }
                {
                    break;
                }
            }
            let Some((_, ex)) = best else { break };
            let b = ex.b;
            let lb = self.load[b as usize];
            let at = ranked.binary_search(&(la, a)).expect("a is ranked");
            ranked.remove(at);
            let at = ranked.binary_search(&(lb, b)).expect("b is ranked");
            ranked.remove(at);
            self.transfer(a, b, ex.key, ex.x);
            moved += 1;
            if let Some(y) = ex.y {
                self.transfer(b, a, ex.key, y);
                moved += 1;
            }
            moved += self.bulk(a, b, ex.key, need);
            for i in [a, b] {
                let e = (self.load[i as usize], i);
                let at = ranked.binary_search(&e).unwrap_or_else(|p| p);
                ranked.insert(at, e);
            }
        }
        moved
    }
}

/// The improvement pass over `owners` (per topic, member indices; updated) from `load` (each
/// member's total lag), one run per phase. Returns (partition moves per phase, loads after).
pub fn improve(
    inp: &Inputs<'_>,
    owners: &mut [Vec<i64>],
    load: Vec<i64>,
    phases: &[Phase<'_>],
) -> Result<(Vec<usize>, Vec<i64>), OutOfRange> {
    let n = inp.n;
    let t = inp.subs.len();
    if owners.len() != t
        || inp.arrays.len() != t
        || load.len() != n
        || inp.fill_order.iter().any(|&x| x as usize >= t)
        || inp.subs.iter().flatten().any(|&i| i as usize >= n)
    {
        return Err(OutOfRange);
    }
    let mut total_lag: i64 = 0;
    for (k, own) in owners.iter().enumerate() {
        if own.iter().any(|&i| i < 0 || i as usize >= n) {
            return Err(OutOfRange);
        }
        if let Some(arr) = &inp.arrays[k] {
            if arr.len() != own.len() {
                return Err(OutOfRange);
            }
            for &x in arr {
                if x < 0 {
                    return Err(OutOfRange);
                }
                total_lag = total_lag.saturating_add(x);
            }
        }
    }
    if total_lag >= MAX_TOTAL || load.iter().any(|&x| !(0..MAX_TOTAL).contains(&x)) {
        return Err(OutOfRange);
    }
    for ph in phases {
        if let Some(f) = ph.frozen {
            if f.len() != t
                || f.iter()
                    .zip(owners.iter())
                    .any(|(x, o)| x.as_ref().is_some_and(|x| x.len() != o.len()))
            {
                return Err(OutOfRange);
            }
        }
    }
    // Subscribed topics per member, interned into classes.
    let mut topics_of: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (k, s) in inp.subs.iter().enumerate() {
        for &i in s {
            topics_of[i as usize].push(k as u32);
        }
    }
    let mut classes: Vec<Vec<u32>> = Vec::new();
    let mut class_index: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
    let mut class_of = Vec::with_capacity(n);
    for mut ts in topics_of {
        ts.sort_unstable();
        ts.dedup();
        let next = classes.len() as u32;
        let c = *class_index.entry(ts.clone()).or_insert_with(|| {
            classes.push(ts);
            next
        });
        class_of.push(c);
    }
    let mut count: Vec<Vec<(u32, i64)>> = Vec::new();
    let mut total = Vec::new();
    if inp.overall {
        total = vec![0i64; n];
        for own in owners.iter() {
            for &i in own {
                total[i as usize] += 1;
            }
        }
    } else {
        count = vec![Vec::new(); n];
        for (k, own) in owners.iter().enumerate() {
            if inp.arrays[k].is_some() {
                for &i in own {
                    bump(&mut count[i as usize], k as u32, 1);
                }
            }
        }
    }
    let mut pass = Pass {
        inp,
        owners,
        load,
        class_of,
        classes,
        count,
        total,
        held: Vec::new(),
        topic_of: Vec::new(),
        part_of: Vec::new(),
        tracked: 0,
        work: 0,
    };
    let moved = phases.iter().map(|ph| pass.run(ph.need_rel, ph.frozen)).collect();
    Ok((moved, pass.load))
}
