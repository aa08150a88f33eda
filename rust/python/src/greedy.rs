//! The kernels of the Python strategies `fair` and `lag-aware` ([`kassign_core::greedy`],
//! [`kassign_core::improve`]): `_core.greedy_deal`, `_core.greedy_carry_lag`, `_core.greedy_per_topic`,
//! `_core.greedy_keep`, `_core.greedy_loads` and `_core.lag_improve`; and `failover`'s
//! ([`kassign_core::failover`]): `_core.failover_winners`; and the eligible sets of all of them:
//! `_core.subscribers_by_topic`. `skew` is the `max_skew` option (an int >= 0;
//! any value above the largest count acts alike).
//! Lags are int64 (a larger one raises OverflowError on conversion; `kassign.assign` rejects it
//! first); members' total lags are exact 128-bit sums.

use std::collections::{BTreeMap, HashMap};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::errors::run_detached;
use kassign_core::greedy::{self, CarryLagTopic, Load};
use kassign_core::improve;

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

/// `kassign.assignors._greedy.deal_global`, after its topic order: `eligible[r]` the
/// subscribers (tuple) of the topic of rank `r` (equal sets may be the same object), `sizes[r]`
/// its partitions, `lag_of` the lag of every partition in rank order (None: no lag). Returns the
/// owner of each partition in rank order.
#[pyfunction]
#[pyo3(signature = (n_members, eligible, sizes, lag_of=None, skew=0))]
fn greedy_deal(
    py: Python<'_>,
    n_members: usize,
    eligible: Vec<Bound<'_, PyTuple>>,
    sizes: Vec<usize>,
    lag_of: Option<Vec<i64>>,
    skew: u64,
) -> PyResult<Vec<u32>> {
    if eligible.len() != sizes.len() {
        return Err(PyValueError::new_err("eligible and sizes differ in length"));
    }
    let total: usize = sizes.iter().sum();
    if lag_of
        .as_ref()
        .is_some_and(|l| l.len() != total || l.iter().any(|&x| x < 0))
    {
        return Err(PyValueError::new_err("lag_of: one non-negative lag per partition"));
    }
    let mut pool_of_ptr: HashMap<usize, usize> = HashMap::new();
    let mut pools: Vec<Vec<u32>> = Vec::new();
    let mut idx = Vec::with_capacity(eligible.len());
    for t in &eligible {
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
    run_detached(py, || {
        greedy::deal_global(n_members, &pools, &idx, &sizes, lag_of.as_deref(), skew)
    })
}

type TopicArg<'py> = (Bound<'py, PyTuple>, usize, Option<Vec<i64>>, Option<Vec<i64>>);

/// The subscribers of each topic, with the lags and fixed owners checked against its size.
fn topic_subscribers(topics: &[TopicArg<'_>], n_members: usize) -> PyResult<Vec<Vec<u32>>> {
    let mut subs = Vec::with_capacity(topics.len());
    for (s, n, tl, fixed) in topics {
        if tl.as_ref().is_some_and(|l| l.len() != *n || l.iter().any(|&x| x < 0))
            || fixed.as_ref().is_some_and(|f| f.len() != *n)
        {
            return Err(PyValueError::new_err("lags and fixed owners: one per partition"));
        }
        subs.push(members_of(s, n_members)?);
    }
    Ok(subs)
}

fn carry_lag_topics<'a>(topics: &'a [TopicArg<'_>], subs: &'a [Vec<u32>]) -> Vec<CarryLagTopic<'a>> {
    topics
        .iter()
        .zip(subs)
        .map(|((_, n, tl, fixed), s)| CarryLagTopic {
            subscribers: s,
            n: *n,
            lags: tl.as_deref(),
            fixed: fixed.as_deref(),
        })
        .collect()
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
fn greedy_carry_lag(
    py: Python<'_>,
    topics: Vec<TopicArg<'_>>,
    load: Vec<Load>,
    skew: u64,
) -> PyResult<(Vec<Vec<i64>>, Vec<Load>)> {
    let subs = topic_subscribers(&topics, load.len())?;
    if load.iter().any(|&x| x < 0) {
        return Err(PyValueError::new_err("load: non-negative lags"));
    }
    let args = carry_lag_topics(&topics, &subs);
    let mut load = load;
    let owners = run_detached(py, || greedy::carry_lag(&args, &mut load, skew))?.map_err(not_subscriber)?;
    Ok((owners, load))
}

/// `kassign.assignors.lag_aware._per_topic` ([`greedy::per_topic`]): `topics` as for
/// [`greedy_carry_lag`], members `0..n_members`. Returns the owners of each topic.
#[pyfunction]
#[pyo3(signature = (topics, n_members, skew=0))]
fn greedy_per_topic(py: Python<'_>, topics: Vec<TopicArg<'_>>, n_members: usize, skew: u64) -> PyResult<Vec<Vec<i64>>> {
    let subs = topic_subscribers(&topics, n_members)?;
    let args = carry_lag_topics(&topics, &subs);
    run_detached(py, || greedy::per_topic(&args, skew))?.map_err(not_subscriber)
}

type KeepArg<'py> = (Bound<'py, PyTuple>, usize, Option<Vec<i64>>, BTreeMap<u32, Vec<u32>>);
/// (owners per topic, kept flags per topic, partitions kept, loads).
type KeptOut = (Vec<Vec<i64>>, Vec<Vec<bool>>, usize, Vec<Load>);

/// Sticky `lag-aware`'s keep step ([`greedy::keep_owned`]): `topics` as `(subscribers,
/// partitions, lags or None, {member index: partitions it owned})`, members `0..n_members`.
/// Returns (owners per topic, -1 = free; kept flags per topic; partitions kept; each member's
/// lag from its kept partitions). A partition or member out of range raises ValueError.
#[pyfunction]
fn greedy_keep(py: Python<'_>, topics: Vec<KeepArg<'_>>, n_members: usize) -> PyResult<KeptOut> {
    let mut args = Vec::with_capacity(topics.len());
    for (s, n, tl, owned) in topics {
        if tl.as_ref().is_some_and(|l| l.len() != n || l.iter().any(|&x| x < 0)) {
            return Err(PyValueError::new_err("lags: one non-negative lag per partition"));
        }
        let owned: Vec<(u32, Vec<u32>)> = owned.into_iter().collect();
        args.push((members_of(&s, n_members)?, n, tl, owned));
    }
    let out = run_detached(py, || {
        let mut load: Vec<Load> = vec![0; n_members];
        let (mut owners, mut flags, mut kept) = (Vec::new(), Vec::new(), 0);
        for (s, n, tl, owned) in &args {
            let (own, fl, k) = greedy::keep_owned(s, *n, tl.as_deref(), owned, &mut load)?;
            owners.push(own);
            flags.push(fl);
            kept += k;
        }
        Ok((owners, flags, kept, load))
    })?;
    out.map_err(|greedy::Malformed| PyValueError::new_err("greedy_keep: an owned partition or member is out of range"))
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
    for topics in &topics_of {
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
    let class_slices: Vec<&[u32]> = class_topics.iter().map(Vec::as_slice).collect();
    let (topics, sets) = greedy::subscriber_sets(&member_class, &class_slices, &has_partitions);
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
    owners: Vec<Vec<i64>>,
    arrays: Vec<Option<Vec<i64>>>,
) -> PyResult<Vec<Load>> {
    if owners.len() != arrays.len() {
        return Err(PyValueError::new_err("owners and arrays differ in length"));
    }
    run_detached(py, || greedy::loads(n_members, &owners, &arrays))?.map_err(|greedy::Malformed| {
        PyValueError::new_err("greedy_loads: an owner out of range or lags of another length")
    })
}

/// `failover`'s winner of each topic ([`kassign_core::failover::winners`]): `user_data` each member's
/// user data (None: none), `eligible` each topic's subscribers (ascending member indices).
#[pyfunction]
fn failover_winners(
    user_data: Vec<Option<Bound<'_, PyBytes>>>,
    eligible: Vec<Bound<'_, PyTuple>>,
) -> PyResult<Vec<u32>> {
    let sets = eligible
        .iter()
        .map(|t| members_of(t, user_data.len()))
        .collect::<PyResult<Vec<_>>>()?;
    let data: Vec<Option<&[u8]>> = user_data.iter().map(|d| d.as_ref().map(|b| b.as_bytes())).collect();
    Ok(kassign_core::failover::winners(&data, &sets)
        .into_iter()
        .map(|w| w.expect("eligible sets are not empty"))
        .collect())
}

type PhaseArg = (f64, Option<Vec<Option<Vec<bool>>>>);
/// (moves per phase, owners per topic, loads).
type Improved = (Vec<usize>, Vec<Vec<i64>>, Vec<Load>);

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
fn lag_improve(
    py: Python<'_>,
    subs: Vec<Vec<u32>>,
    owners: Vec<Vec<i64>>,
    arrays: Vec<Option<Vec<i64>>>,
    fill_order: Vec<u32>,
    load: Vec<Load>,
    overall: bool,
    stop: Load,
    phases: Vec<PhaseArg>,
    limits: (usize, usize, usize, usize, usize, f64, u64),
) -> PyResult<Improved> {
    let mut owners = owners;
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
        Ok((moved, load)) => Ok((moved, owners, load)),
        Err(improve::Malformed) => Err(PyValueError::new_err(
            "lag_improve: owners, subscribers, lags or frozen flags do not describe a placement",
        )),
    }
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
    Ok(())
}
