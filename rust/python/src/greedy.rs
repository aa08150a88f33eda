//! The kernels of the Python strategies `fair` and `lag-aware` ([`kassign_core::greedy`],
//! [`kassign_core::improve`]): `_core.greedy_deal`, `_core.greedy_carry_lag`, `_core.greedy_per_topic`,
//! `_core.greedy_keep`, `_core.greedy_loads` and `_core.lag_improve`; and `failover`'s
//! ([`kassign_core::failover`]): `_core.failover_winners`; and the eligible sets of all of them:
//! `_core.subscribers_by_topic`. `skew` is the `max_skew` option (an int >= 0;
//! any value above the largest count acts alike).
//! Lags are int64 (a larger one raises OverflowError on conversion; `kassign.assign` rejects it
//! first); members' total lags are exact 128-bit sums.
//!
//! Per-partition data crosses the boundary in bulk, never as an object per partition: owners
//! come back as one `array('i')` per topic, kept flags as `bytes` (one 0/1 byte per partition),
//! and owners and lags are read from `array.array` objects through their bytes (a list of ints is
//! read too, element by element, for small callers). The loops run with the GIL released.

use std::collections::{BTreeMap, HashMap};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyTuple, PyType};

use crate::errors::run_detached;
use crate::objects::GilYield;
use kassign_core::greedy::{self, CarryLagTopic, Load};
use kassign_core::improve;

/// `array.array`, imported once; checked to store `'i'` as 4 bytes and `'q'` as 8, the widths
/// [`owner_arrays`] writes and [`ints`] reads.
fn array_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static ARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    ARRAY
        .get_or_try_init(py, || {
            let cls = py.import("array")?.getattr("array")?.cast_into::<PyType>()?;
            for (code, width) in [("i", 4usize), ("q", 8)] {
                if cls.call1((code,))?.getattr("itemsize")?.extract::<usize>()? != width {
                    return Err(PyTypeError::new_err(format!(
                        "array('{code}') is not {width} bytes wide on this platform"
                    )));
                }
            }
            Ok::<_, PyErr>(cls.unbind())
        })
        .map(|c| c.bind(py))
}

/// The most members a kernel takes: owners go out as int32.
const MAX_MEMBERS: usize = i32::MAX as usize;

fn check_member_count(n_members: usize) -> PyResult<()> {
    if n_members > MAX_MEMBERS {
        return Err(PyValueError::new_err(format!("at most {MAX_MEMBERS} members")));
    }
    Ok(())
}

/// Each topic's owners as an `array('i')` (member index, -1 = none; indices fit: the members are
/// counted by [`check_member_count`]). One `bytes` copy per topic, no object per partition.
fn owner_arrays<'py, T: Copy + TryInto<i32>>(py: Python<'py>, owners: &[Vec<T>]) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let cls = array_type(py)?;
    owners
        .iter()
        .map(|own| {
            let bytes = PyBytes::new_with(py, own.len() * 4, |dst| {
                for (chunk, &o) in dst.chunks_exact_mut(4).zip(own) {
                    let o: i32 = o
                        .try_into()
                        .map_err(|_| PyValueError::new_err("an owner index does not fit int32"))?;
                    chunk.copy_from_slice(&o.to_ne_bytes());
                }
                Ok(())
            })?;
            cls.call1(("i", bytes))
        })
        .collect()
}

/// A column of ints (one per partition): an `array.array` of typecode `'i'` or `'q'`, read
/// through its bytes, or any other sequence of ints, read element by element.
fn ints(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    if obj.is_instance(array_type(obj.py())?)? {
        let code: String = obj.getattr("typecode")?.extract()?;
        let raw = obj.call_method0("tobytes")?;
        let raw = raw.cast::<PyBytes>()?.as_bytes();
        return match code.as_str() {
            "i" => Ok(raw
                .chunks_exact(4)
                .map(|c| i64::from(i32::from_ne_bytes(c.try_into().expect("4 bytes"))))
                .collect()),
            "q" => Ok(raw
                .chunks_exact(8)
                .map(|c| i64::from_ne_bytes(c.try_into().expect("8 bytes")))
                .collect()),
            _ => Err(PyTypeError::new_err(format!(
                "expected array('i') or array('q'), got array('{code}')"
            ))),
        };
    }
    obj.extract()
}

fn opt_ints(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<i64>>> {
    obj.map(ints).transpose()
}

/// Per-partition flags: `bytes` (0 = false) or a sequence of bools.
fn flags(obj: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
    match obj.cast::<PyBytes>() {
        Ok(b) => Ok(b.as_bytes().iter().map(|&x| x != 0).collect()),
        Err(_) => obj.extract(),
    }
}

/// Member indices of an eligible set (ascending ints in `0..n_members`).
fn members_of(t: &Bound<'_, PyTuple>, n_members: usize) -> PyResult<Vec<u32>> {
    let v: Vec<u32> = t.extract()?;
    if v.is_empty() || v.iter().any(|&i| i as usize >= n_members) || v.windows(2).any(|w| w[0] >= w[1]) {
        return Err(PyValueError::new_err(
            "an eligible set must be ascending member indices in range",
        ));
    }
    Ok(v)
}

/// The eligible sets of the topics, each distinct tuple object read once (topics with the same
/// subscribers share one tuple, `subscribers_by_topic`): (pools, the pool of each topic).
fn eligible_pools(sets: &[Bound<'_, PyTuple>], n_members: usize) -> PyResult<(Vec<Vec<u32>>, Vec<usize>)> {
    let mut pool_of_ptr: HashMap<usize, usize> = HashMap::new();
    let mut pools: Vec<Vec<u32>> = Vec::new();
    let mut idx = Vec::with_capacity(sets.len());
    for t in sets {
        let key = t.as_ptr() as usize;
        let k = match pool_of_ptr.get(&key) {
            Some(&k) => k,
            None => {
                pools.push(members_of(t, n_members)?);
                pool_of_ptr.insert(key, pools.len() - 1);
                pools.len() - 1
            }
        };
        idx.push(k);
    }
    Ok((pools, idx))
}

/// `kassign.assignors._greedy.deal_global`, after its topic order: `eligible[r]` the
/// subscribers (tuple) of the topic of rank `r` (equal sets may be the same object), `sizes[r]`
/// its partitions, `lags[r]` the lag of each of its partitions or None (`lags` None: no topic has
/// lag). Returns the owners of each topic in rank order.
#[pyfunction]
#[pyo3(signature = (n_members, eligible, sizes, lags=None, skew=0))]
fn greedy_deal<'py>(
    py: Python<'py>,
    n_members: usize,
    eligible: Vec<Bound<'py, PyTuple>>,
    sizes: Vec<usize>,
    lags: Option<Vec<Option<Bound<'py, PyAny>>>>,
    skew: u64,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    check_member_count(n_members)?;
    if eligible.len() != sizes.len() || lags.as_ref().is_some_and(|l| l.len() != sizes.len()) {
        return Err(PyValueError::new_err("eligible, sizes and lags differ in length"));
    }
    let lag_of = match &lags {
        None => None,
        Some(per_topic) => {
            let mut all = Vec::with_capacity(sizes.iter().sum());
            for (l, &n) in per_topic.iter().zip(&sizes) {
                match l {
                    Some(l) => {
                        let l = ints(l)?;
                        if l.len() != n || l.iter().any(|&x| x < 0) {
                            return Err(PyValueError::new_err("lags: one non-negative lag per partition"));
                        }
                        all.extend_from_slice(&l);
                    }
                    None => all.resize(all.len() + n, 0),
                }
            }
            Some(all)
        }
    };
    let (pools, idx) = eligible_pools(&eligible, n_members)?;
    let owners = run_detached(py, || {
        let all = greedy::deal_global(n_members, &pools, &idx, &sizes, lag_of.as_deref(), skew);
        let mut rest = all.as_slice();
        sizes
            .iter()
            .map(|&n| {
                let (head, tail) = rest.split_at(n);
                rest = tail;
                head.to_vec()
            })
            .collect::<Vec<Vec<u32>>>()
    })?;
    owner_arrays(py, &owners)
}

type TopicArg<'py> = (
    Bound<'py, PyTuple>,
    usize,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
);

/// The topics of [`greedy_carry_lag`] and [`greedy_per_topic`], read: the distinct subscriber
/// sets, each topic's set, partitions, lags and fixed owners (checked against its size).
struct Topics {
    pools: Vec<Vec<u32>>,
    pool: Vec<usize>,
    sizes: Vec<usize>,
    lags: Vec<Option<Vec<i64>>>,
    fixed: Vec<Option<Vec<i64>>>,
}

fn read_topics(topics: &[TopicArg<'_>], n_members: usize) -> PyResult<Topics> {
    check_member_count(n_members)?;
    let sets: Vec<Bound<'_, PyTuple>> = topics.iter().map(|(s, ..)| s.clone()).collect();
    let (pools, pool) = eligible_pools(&sets, n_members)?;
    let (mut sizes, mut lags, mut fixed) = (Vec::new(), Vec::new(), Vec::new());
    for (_, n, tl, fx) in topics {
        let tl = opt_ints(tl.as_ref())?;
        let fx = opt_ints(fx.as_ref())?;
        if tl.as_ref().is_some_and(|l| l.len() != *n || l.iter().any(|&x| x < 0))
            || fx.as_ref().is_some_and(|f| f.len() != *n)
        {
            return Err(PyValueError::new_err("lags and fixed owners: one per partition"));
        }
        sizes.push(*n);
        lags.push(tl);
        fixed.push(fx);
    }
    Ok(Topics {
        pools,
        pool,
        sizes,
        lags,
        fixed,
    })
}

impl Topics {
    fn args(&self) -> Vec<CarryLagTopic<'_>> {
        (0..self.sizes.len())
            .map(|k| CarryLagTopic {
                subscribers: &self.pools[self.pool[k]],
                n: self.sizes[k],
                lags: self.lags[k].as_deref(),
                fixed: self.fixed[k].as_deref(),
            })
            .collect()
    }
}

fn not_subscriber(_: greedy::NotSubscriber) -> PyErr {
    pyo3::exceptions::PyLookupError::new_err("a fixed owner is not a subscriber of its topic")
}

/// `kassign.assignors.lag_aware._carry_lag`, after its topic order: `topics` as `(subscribers,
/// partitions, lags or None, fixed owners or None)` in placement order, `load` each member's total
/// lag. Returns (owners of each topic, the loads after placement). A fixed owner that is not a
/// subscriber of its topic raises LookupError.
#[pyfunction]
#[pyo3(signature = (topics, load, skew=0))]
fn greedy_carry_lag<'py>(
    py: Python<'py>,
    topics: Vec<TopicArg<'py>>,
    load: Vec<Load>,
    skew: u64,
) -> PyResult<(Vec<Bound<'py, PyAny>>, Vec<Load>)> {
    let read = read_topics(&topics, load.len())?;
    if load.iter().any(|&x| x < 0) {
        return Err(PyValueError::new_err("load: non-negative lags"));
    }
    let mut load = load;
    let owners = run_detached(py, || greedy::carry_lag(&read.args(), &mut load, skew))?.map_err(not_subscriber)?;
    Ok((owner_arrays(py, &owners)?, load))
}

/// `kassign.assignors.lag_aware._per_topic` ([`greedy::per_topic`]): `topics` as for
/// [`greedy_carry_lag`], members `0..n_members`. Returns the owners of each topic.
#[pyfunction]
#[pyo3(signature = (topics, n_members, skew=0))]
fn greedy_per_topic<'py>(
    py: Python<'py>,
    topics: Vec<TopicArg<'py>>,
    n_members: usize,
    skew: u64,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let read = read_topics(&topics, n_members)?;
    let owners = run_detached(py, || greedy::per_topic(&read.args(), skew))?.map_err(not_subscriber)?;
    owner_arrays(py, &owners)
}

type KeepArg<'py> = (
    Bound<'py, PyTuple>,
    usize,
    Option<Bound<'py, PyAny>>,
    BTreeMap<u32, Vec<u32>>,
);
/// (owners per topic, kept flags per topic, partitions kept, loads).
type KeptOut<'py> = (Vec<Bound<'py, PyAny>>, Vec<Bound<'py, PyBytes>>, usize, Vec<Load>);

/// Sticky `lag-aware`'s keep step ([`greedy::keep_owned`]): `topics` as `(subscribers,
/// partitions, lags or None, {member index: partitions it owned})`, members `0..n_members`.
/// Returns (owners per topic, -1 = free; kept flags per topic, one byte per partition, 1 = kept;
/// partitions kept; each member's lag from its kept partitions). A partition or member out of
/// range raises ValueError.
#[pyfunction]
fn greedy_keep<'py>(py: Python<'py>, topics: Vec<KeepArg<'py>>, n_members: usize) -> PyResult<KeptOut<'py>> {
    check_member_count(n_members)?;
    let sets: Vec<Bound<'_, PyTuple>> = topics.iter().map(|(s, ..)| s.clone()).collect();
    let (pools, pool) = eligible_pools(&sets, n_members)?;
    let mut args = Vec::with_capacity(topics.len());
    for ((_, n, tl, owned), k) in topics.into_iter().zip(pool) {
        let tl = opt_ints(tl.as_ref())?;
        if tl.as_ref().is_some_and(|l| l.len() != n || l.iter().any(|&x| x < 0)) {
            return Err(PyValueError::new_err("lags: one non-negative lag per partition"));
        }
        let owned: Vec<(u32, Vec<u32>)> = owned.into_iter().collect();
        args.push((k, n, tl, owned));
    }
    let out = run_detached(py, || {
        let mut load: Vec<Load> = vec![0; n_members];
        let (mut owners, mut flags, mut kept) = (Vec::new(), Vec::new(), 0);
        for (k, n, tl, owned) in &args {
            let (own, fl, kept_here) = greedy::keep_owned(&pools[*k], *n, tl.as_deref(), owned, &mut load)?;
            owners.push(own);
            flags.push(fl.into_iter().map(u8::from).collect::<Vec<u8>>());
            kept += kept_here;
        }
        Ok((owners, flags, kept, load))
    })?;
    let (owners, flags, kept, load) = out.map_err(|greedy::Malformed| {
        PyValueError::new_err("greedy_keep: an owned partition or member is out of range")
    })?;
    let flags = flags.iter().map(|f| PyBytes::new(py, f)).collect();
    Ok((owner_arrays(py, &owners)?, flags, kept, load))
}

/// `kassign.assignors._greedy.subscribers_by_topic` ([`greedy::subscriber_sets`]): `topics_of`
/// each member's topics in member-id order (hashable sequences of str; equal ones are read once),
/// `partitions_per_topic` topic -> partition count (topics missing or with 0 partitions are
/// skipped). Returns topic -> its subscribers' indices (ascending), topics with the same
/// subscribers sharing one tuple object.
#[pyfunction]
fn subscribers_by_topic<'py>(
    py: Python<'py>,
    topics_of: Vec<Bound<'py, PyAny>>,
    partitions_per_topic: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    // Equal subscriptions are one class, found by Python's own hash and equality.
    let class_of = PyDict::new(py);
    let mut class_topics: Vec<Vec<u32>> = Vec::new();
    let mut topic_index: HashMap<String, u32> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut has_partitions: Vec<u32> = Vec::new();
    let mut member_class = Vec::with_capacity(topics_of.len());
    // Looking a subscription up hashes and compares every topic name: hand the GIL over now and
    // then (a thousand members of a thousand topics each hold it for milliseconds).
    let mut gil = GilYield::new();
    for topics in &topics_of {
        gil.tick(py, topics.len().unwrap_or(1));
        if let Some(c) = class_of.get_item(topics)? {
            member_class.push(c.extract::<u32>()?);
            continue;
        }
        let mut ids = Vec::new();
        for name in topics.extract::<Vec<String>>()? {
            let id = match topic_index.get(&name) {
                Some(&id) => id,
                None => {
                    let count: i64 = match partitions_per_topic.get_item(&name)? {
                        Some(v) => v.extract()?,
                        None => 0,
                    };
                    has_partitions.push(u32::from(count > 0));
                    names.push(name.clone());
                    topic_index.insert(name, (names.len() - 1) as u32);
                    (names.len() - 1) as u32
                }
            };
            ids.push(id);
        }
        class_topics.push(ids);
        let c = (class_topics.len() - 1) as u32;
        class_of.set_item(topics, c)?;
        member_class.push(c);
    }
    let (topics, sets) = run_detached(py, || {
        let class_slices: Vec<&[u32]> = class_topics.iter().map(Vec::as_slice).collect();
        greedy::subscriber_sets(&member_class, &class_slices, &has_partitions)
    })?;
    let tuples = sets.iter().map(|s| PyTuple::new(py, s)).collect::<PyResult<Vec<_>>>()?;
    let out = PyDict::new(py);
    for (t, k) in topics {
        out.set_item(&names[t as usize], &tuples[k as usize])?;
    }
    Ok(out)
}

/// Each member's total lag under a placement ([`greedy::loads`]): `owners` each topic's owner per
/// partition, `arrays` each topic's lags (None: no lag). An owner out of range raises ValueError.
#[pyfunction]
fn greedy_loads(
    py: Python<'_>,
    n_members: usize,
    owners: Vec<Bound<'_, PyAny>>,
    arrays: Vec<Option<Bound<'_, PyAny>>>,
) -> PyResult<Vec<Load>> {
    if owners.len() != arrays.len() {
        return Err(PyValueError::new_err("owners and arrays differ in length"));
    }
    let owners = owners.iter().map(ints).collect::<PyResult<Vec<_>>>()?;
    let arrays = arrays
        .iter()
        .map(|a| opt_ints(a.as_ref()))
        .collect::<PyResult<Vec<_>>>()?;
    run_detached(py, || greedy::loads(n_members, &owners, &arrays))?.map_err(|greedy::Malformed| {
        PyValueError::new_err("greedy_loads: an owner out of range or lags of another length")
    })
}

/// `failover`'s winner of each topic ([`kassign_core::failover::winners`]): `user_data` each member's
/// user data (None: none), `eligible` each topic's subscribers (ascending member indices).
#[pyfunction]
fn failover_winners(
    py: Python<'_>,
    user_data: Vec<Option<Bound<'_, PyBytes>>>,
    eligible: Vec<Bound<'_, PyTuple>>,
) -> PyResult<Vec<u32>> {
    let (pools, pool) = eligible_pools(&eligible, user_data.len())?;
    let data: Vec<Option<Vec<u8>>> = user_data
        .iter()
        .map(|d| d.as_ref().map(|b| b.as_bytes().to_vec()))
        .collect();
    run_detached(py, || {
        let data: Vec<Option<&[u8]>> = data.iter().map(Option::as_deref).collect();
        let per_pool = kassign_core::failover::winners(&data, &pools);
        pool.iter()
            .map(|&k| per_pool[k].expect("eligible sets are not empty"))
            .collect()
    })
}

type PhaseArg<'py> = (f64, Option<Vec<Option<Bound<'py, PyAny>>>>);
/// (moves per phase, owners per topic, loads).
type Improved<'py> = (Vec<usize>, Vec<Bound<'py, PyAny>>, Vec<Load>);

/// `kassign.assignors.lag_aware`'s improvement pass ([`kassign_core::improve`]), by topic
/// index: `subs` the subscribers of each topic, `owners` each topic's owner per partition,
/// `arrays` each topic's lag per partition (None: no lag), `fill_order` the topics in the order
/// the pass lists partitions, `load` each member's total lag, `overall` global mode, `stop` the
/// busiest member's lag at which it stops, `phases` (least gain as a fraction, per-topic frozen
/// flags or None) one run each, `limits` the pass's bounds (rounds per member, extra rounds,
/// partners, partners while none helps, swap sample, work per tracked partition, extra work: the
/// Python module's constants). Returns (moves per phase, owners after, loads after). Inputs that
/// do not describe a placement (an owner out of range, a negative lag) raise ValueError.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn lag_improve<'py>(
    py: Python<'py>,
    subs: Vec<Bound<'py, PyTuple>>,
    owners: Vec<Bound<'py, PyAny>>,
    arrays: Vec<Option<Bound<'py, PyAny>>>,
    fill_order: Vec<u32>,
    load: Vec<Load>,
    overall: bool,
    stop: Load,
    phases: Vec<PhaseArg<'py>>,
    limits: (usize, usize, usize, usize, usize, f64, u64),
) -> PyResult<Improved<'py>> {
    check_member_count(load.len())?;
    let (pools, pool) = eligible_pools(&subs, load.len())?;
    let subs: Vec<Vec<u32>> = pool.iter().map(|&k| pools[k].clone()).collect();
    let mut owners = owners.iter().map(ints).collect::<PyResult<Vec<_>>>()?;
    let arrays = arrays
        .iter()
        .map(|a| opt_ints(a.as_ref()))
        .collect::<PyResult<Vec<_>>>()?;
    let phases = phases
        .iter()
        .map(|(need_rel, frozen)| {
            let frozen = frozen
                .as_ref()
                .map(|per_topic| {
                    per_topic
                        .iter()
                        .map(|f| f.as_ref().map(flags).transpose())
                        .collect::<PyResult<Vec<_>>>()
                })
                .transpose()?;
            Ok((*need_rel, frozen))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let (rounds_per_member, rounds_extra, partners, partners_wide, swap_sample, work_per_partition, work_extra) =
        limits;
    if swap_sample == 0 || !(work_per_partition >= 0.0 && work_per_partition.is_finite()) {
        return Err(PyValueError::new_err("lag_improve: limits out of range"));
    }
    let limits = improve::Limits {
        rounds_per_member,
        rounds_extra,
        partners,
        partners_wide,
        swap_sample,
        work_per_partition,
        work_extra,
    };
    let inputs = improve::Inputs {
        n: load.len(),
        subs: &subs,
        arrays: &arrays,
        fill_order: &fill_order,
        overall,
        stop,
        limits,
    };
    let out = run_detached(py, || {
        let phases: Vec<improve::Phase<'_>> = phases
            .iter()
            .map(|(need_rel, frozen)| improve::Phase {
                need_rel: *need_rel,
                frozen: frozen.as_deref(),
            })
            .collect();
        improve::improve(&inputs, &mut owners, load, &phases)
    })?;
    match out {
        Ok((moved, load)) => Ok((moved, owner_arrays(py, &owners)?, load)),
        Err(improve::Malformed) => Err(PyValueError::new_err(
            "lag_improve: owners, subscribers, lags or frozen flags do not describe a placement",
        )),
    }
}

/// Each topic's largest lag and total lag (an exact sum) from its lag column (`arrays`, one per
/// topic): what `lag-aware`'s topic order and lower bound read. A negative lag raises ValueError.
#[pyfunction]
fn lag_summary(py: Python<'_>, arrays: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<(i64, Load)>> {
    let arrays = arrays.iter().map(ints).collect::<PyResult<Vec<_>>>()?;
    if arrays.iter().flatten().any(|&x| x < 0) {
        return Err(PyValueError::new_err("lag_summary: negative lag"));
    }
    run_detached(py, || {
        arrays
            .iter()
            .map(|a| {
                (
                    a.iter().copied().max().unwrap_or(0),
                    a.iter().map(|&x| Load::from(x)).sum(),
                )
            })
            .collect()
    })
}

/// Owner arrays renumbered: each owner `o >= 0` of `owners` (one array per topic) becomes
/// `position[o]`, -1 stays -1 (`kassign.assign_owners` for the Python strategies: sorted member
/// index -> position in the caller's mapping). An owner out of range raises ValueError.
#[pyfunction]
fn owner_positions<'py>(
    py: Python<'py>,
    owners: Vec<Bound<'py, PyAny>>,
    position: Vec<i32>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let owners = owners.iter().map(ints).collect::<PyResult<Vec<_>>>()?;
    let out = run_detached(py, || {
        owners
            .iter()
            .map(|own| {
                own.iter()
                    .map(|&o| match o {
                        -1 => Some(-1),
                        o => usize::try_from(o).ok().and_then(|o| position.get(o).copied()),
                    })
                    .collect::<Option<Vec<i32>>>()
            })
            .collect::<Option<Vec<_>>>()
    })?;
    let out = out.ok_or_else(|| PyValueError::new_err("owner_positions: an owner out of range"))?;
    owner_arrays(py, &out)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(greedy_deal, m)?)?;
    m.add_function(wrap_pyfunction!(greedy_carry_lag, m)?)?;
    m.add_function(wrap_pyfunction!(greedy_per_topic, m)?)?;
    m.add_function(wrap_pyfunction!(greedy_keep, m)?)?;
    m.add_function(wrap_pyfunction!(greedy_loads, m)?)?;
    m.add_function(wrap_pyfunction!(failover_winners, m)?)?;
    m.add_function(wrap_pyfunction!(subscribers_by_topic, m)?)?;
    m.add_function(wrap_pyfunction!(lag_improve, m)?)?;
    m.add_function(wrap_pyfunction!(owner_positions, m)?)?;
    m.add_function(wrap_pyfunction!(lag_summary, m)?)?;
    Ok(())
}
