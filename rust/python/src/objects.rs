//! Building result objects fast: `TopicPartition`s allocated directly, and the GIL handed to
//! waiting threads while a long conversion holds it.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

/// Objects converted between two looks at the clock (well under a millisecond of work).
pub(crate) const CHECK_EVERY: usize = 4_096;

/// Hands the GIL to waiting threads (a consumer's heartbeat) while a long conversion holds it.
///
/// Releasing and at once re-taking the GIL is not enough: CPython's waiting thread asks for a
/// switch only after 5 ms without one, and every release and re-take restarts that wait, so
/// frequent short releases can starve it for the whole conversion. Instead, after `SLICE` of
/// holding, the GIL is released for `PAUSE` (the waiter takes it), then re-taken.
pub(crate) struct GilYield {
    last: std::time::Instant,
    count: usize,
}

const SLICE: std::time::Duration = std::time::Duration::from_millis(4);
const PAUSE: std::time::Duration = std::time::Duration::from_micros(200);

impl GilYield {
    pub(crate) fn new() -> GilYield {
        GilYield {
            last: std::time::Instant::now(),
            count: 0,
        }
    }

    /// Count `n` converted objects; every [`CHECK_EVERY`], hand the GIL over if it was held
    /// for a slice.
    #[inline]
    pub(crate) fn tick(&mut self, py: Python<'_>, n: usize) {
        self.count += n;
        if self.count >= CHECK_EVERY {
            self.count = 0;
            if self.last.elapsed() >= SLICE {
                py.detach(|| std::thread::sleep(PAUSE));
                self.last = std::time::Instant::now();
            }
        }
    }
}

static TOPIC_PARTITION: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `kassign.TopicPartition` (defined in Python, in `kassign._types`).
pub(crate) fn topic_partition_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    TOPIC_PARTITION
        .get_or_try_init(py, || {
            let cls = py.import("kassign._types")?.getattr("TopicPartition")?;
            Ok::<_, PyErr>(cls.cast_into::<PyType>()?.unbind())
        })
        .map(|c| c.bind(py))
}

/// Whether and where the running interpreter caches a tuple's hash inside the tuple object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TupleHashCache {
    /// No cache: CPython before 3.14 computes a tuple's hash on every call.
    Absent,
    /// A cache at this byte offset from the object's start: CPython 3.14 and later keep it in
    /// `PyTupleObject.ob_hash`, the field between the variable-size head and the items, where -1
    /// means "not computed yet" (CPython gh-131525).
    At(usize),
    /// A cache whose place could not be proven (a later layout, another implementation): results
    /// are built through `tuple.__new__`, which is correct everywhere.
    Unproven,
}

/// Where this interpreter caches a tuple's hash, found once per process.
///
/// The extension is built for the stable ABI, which does not describe `PyTupleObject`, so the
/// place is derived and then proven on a real tuple instead of assumed: on CPython 3.14 and later
/// the field ends the tuple head, `tuple.__basicsize__` bytes from the object's start. A tuple
/// that CPython's own constructor just built must hold -1 there, and after `hash()` the hash
/// itself (which is never -1). Anything else means the layout is not the one described, and
/// the factory builds results through `tuple.__new__`.
fn tuple_hash_cache(py: Python<'_>) -> PyResult<TupleHashCache> {
    static CACHE: PyOnceLock<TupleHashCache> = PyOnceLock::new();
    CACHE
        .get_or_try_init(py, || {
            let cpython = py
                .import("sys")?
                .getattr("implementation")?
                .getattr("name")?
                .extract::<String>()?
                == "cpython";
            if !cpython {
                return Ok(TupleHashCache::Unproven);
            }
            let version = py.version_info();
            if (version.major, version.minor) < (3, 14) {
                return Ok(TupleHashCache::Absent);
            }
            let head: usize = py.get_type::<PyTuple>().getattr("__basicsize__")?.extract()?;
            let width = std::mem::size_of::<ffi::Py_hash_t>();
            let Some(offset) = head.checked_sub(width) else {
                return Ok(TupleHashCache::Unproven);
            };
            // A new tuple from CPython's constructor (a fresh str, so no cached result is reused).
            let probe = PyTuple::new(
                py,
                [
                    PyString::new(py, "kassign hash probe").into_any(),
                    7_i64.into_pyobject(py)?.into_any(),
                ],
            )?;
            // SAFETY: a tuple of 2 items spans `head` plus two item pointers, so the word at
            // `offset` (< head) lies inside the live object `probe` owns; it is only read.
            let read = || unsafe {
                probe
                    .as_ptr()
                    .cast::<u8>()
                    .add(offset)
                    .cast::<ffi::Py_hash_t>()
                    .read_unaligned()
            };
            let before = read();
            let hash = probe.hash()?;
            let after = read();
            Ok(if before == -1 && after == hash as ffi::Py_hash_t {
                TupleHashCache::At(offset)
            } else {
                TupleHashCache::Unproven
            })
        })
        .copied()
}

/// Builds `tp_class` instances, a `tuple` subclass of (topic, partition) without an instance
/// dict (`kassign.TopicPartition`). They are allocated directly and untracked by the cyclic GC: a
/// tuple of a str and an int cannot be part of a reference cycle (CPython untracks exact tuples
/// like these itself), and a million tracked results would otherwise trigger full collections
/// that stall every thread. Other classes go through `tuple.__new__`.
pub(crate) struct TpFactory<'py> {
    cls: Bound<'py, PyType>,
    direct: bool,
    /// Where a directly allocated instance's cached hash lives, when the interpreter has one.
    hash_cache: Option<usize>,
    tuple_new: Bound<'py, PyAny>,
    /// Partition index objects 0..n, made on first use and shared by every later result (ints
    /// above 256 are not cached by CPython; a million results would otherwise allocate a million
    /// ints, and making all n up front costs as much when each index is used once).
    ints: Vec<Option<Bound<'py, PyAny>>>,
}

/// At most this many shared index objects (a topic with more partitions allocates the rest).
const MAX_SHARED_INTS: usize = 1 << 17;

impl<'py> TpFactory<'py> {
    /// A factory for `cls` (a tuple subclass), sharing index objects up to `longest_topic`.
    pub(crate) fn new(py: Python<'py>, cls: &Bound<'py, PyType>, longest_topic: usize) -> PyResult<TpFactory<'py>> {
        let tuple_type = py.get_type::<PyTuple>();
        if !cls.is_subclass(&tuple_type)? {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "tp_class: expected a tuple subclass",
            ));
        }
        // The layout attributes are read only where the direct path can apply: PyPy's types have
        // no `__dictoffset__` or `__itemsize__`.
        let plain_layout = || -> PyResult<bool> {
            let no_dict = cls.getattr("__dictoffset__")?.extract::<isize>()? == 0;
            let plain_alloc =
                cls.getattr("__itemsize__")?.extract::<isize>()? == std::mem::size_of::<*mut ffi::PyObject>() as isize;
            Ok(no_dict && plain_alloc)
        };
        let (direct, hash_cache) = match tuple_hash_cache(py)? {
            TupleHashCache::Absent => (plain_layout()?, None),
            TupleHashCache::At(offset) => (plain_layout()?, Some(offset)),
            TupleHashCache::Unproven => (false, None),
        };
        let n = if direct { longest_topic.min(MAX_SHARED_INTS) } else { 0 };
        let ints = vec![None; n];
        Ok(TpFactory {
            cls: cls.clone(),
            direct,
            hash_cache,
            tuple_new: tuple_type.getattr("__new__")?,
            ints,
        })
    }

    /// One (topic, partition) instance.
    #[inline]
    pub(crate) fn make(
        &mut self,
        py: Python<'py>,
        topic: &Bound<'py, PyString>,
        idx: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        if !self.direct {
            let pair = PyTuple::new(py, [topic.clone().into_any(), idx.into_pyobject(py)?.into_any()])?;
            return self.tuple_new.call1((&self.cls, pair));
        }
        // SAFETY: `cls` is a tuple subclass without an instance dict whose items are object
        // pointers (checked in `new`), so a 2-item GenericAlloc is a valid empty instance whose
        // slots we fill once with new references. GenericAlloc zero-fills the object: where the
        // interpreter caches a tuple's hash (`hash_cache`, proven by `tuple_hash_cache`, inside
        // the tuple head and so inside this allocation), the cache is set to -1, "not computed",
        // as CPython's own tuple constructors do; a zero there would be read as a cached hash 0.
        unsafe {
            let obj = ffi::PyType_GenericAlloc(self.cls.as_type_ptr(), 2);
            if obj.is_null() {
                return Err(PyErr::fetch(py));
            }
            if let Some(offset) = self.hash_cache {
                obj.cast::<u8>()
                    .add(offset)
                    .cast::<ffi::Py_hash_t>()
                    .write_unaligned(-1);
            }
            let obj = Bound::from_owned_ptr(py, obj);
            if ffi::PyTuple_SetItem(obj.as_ptr(), 0, topic.clone().into_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
            let index = match usize::try_from(idx).ok().and_then(|i| self.ints.get_mut(i)) {
                Some(Some(i)) => i.clone().into_ptr(),
                Some(slot) => {
                    let i = ffi::PyLong_FromLongLong(idx);
                    if !i.is_null() {
                        *slot = Some(Bound::from_borrowed_ptr(py, i));
                    }
                    i
                }
                None => ffi::PyLong_FromLongLong(idx),
            };
            if index.is_null() || ffi::PyTuple_SetItem(obj.as_ptr(), 1, index) != 0 {
                return Err(PyErr::fetch(py));
            }
            ffi::PyObject_GC_UnTrack(obj.as_ptr().cast());
            Ok(obj)
        }
    }
}

/// Every member's encoded assignment as a `bytes` object, in a dict keyed like `template` (see
/// [`crate::assign::dict_for`]), filled by [`fill_bytes`].
pub(super) fn bytes_dict<'py>(
    py: Python<'py>,
    template: &Bound<'py, PyAny>,
    ids: &[Bound<'py, PyString>],
    encoded: &kassign_core::wire::Encoded<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = dict_for(py, template, ids)?;
    fill_bytes(py, &out, ids.iter(), encoded)?;
    Ok(out)
}

/// Set `out[ids[i]]` to member `i`'s encoded assignment as a `bytes` object: one copy per member,
/// straight into a new bytes object (not zeroed first, as `PyBytes::new_with` would), handing
/// the GIL over now and then.
fn fill_bytes<'a, 'py: 'a>(
    py: Python<'py>,
    out: &Bound<'py, PyDict>,
    ids: impl Iterator<Item = &'a Bound<'py, PyString>>,
    encoded: &kassign_core::wire::Encoded<'_>,
) -> PyResult<()> {
    let mut gil = GilYield::new();
    for (i, id) in ids.enumerate() {
        let len = encoded.byte_len(i);
        // SAFETY: PyBytes_FromStringAndSize(NULL, len) returns a new, unshared bytes object of
        // `len` bytes (or NULL with an exception set); all `len` bytes are written before it is
        // seen by anyone.
        let bytes = unsafe {
            let obj = ffi::PyBytes_FromStringAndSize(std::ptr::null(), len as ffi::Py_ssize_t);
            if obj.is_null() {
                return Err(PyErr::fetch(py));
            }
            let dst = std::slice::from_raw_parts_mut(ffi::PyBytes_AsString(obj).cast::<u8>(), len);
            encoded.write_into(i, dst);
            Bound::from_owned_ptr(py, obj)
        };
        out.set_item(id, bytes)?;
        gil.tick(py, 1 + len / 64);
    }
    Ok(())
}

/// A dict to fill with one value per id, in the order of `ids`: a copy of `template` when its
/// keys are exactly `ids` (the same objects in the same order, all exact `str`), so that filling
/// it replaces values instead of inserting keys and regrowing the table; otherwise a new dict.
/// Once every id is set, both give the same dict.
pub(crate) fn dict_for<'py, T>(
    py: Python<'py>,
    template: &Bound<'py, PyAny>,
    ids: &[Bound<'py, T>],
) -> PyResult<Bound<'py, PyDict>> {
    if let Ok(t) = template.cast_exact::<PyDict>() {
        if t.len() == ids.len() {
            let copy = t.copy()?;
            let mut pos: ffi::Py_ssize_t = 0;
            let mut key: *mut ffi::PyObject = std::ptr::null_mut();
            let mut value: *mut ffi::PyObject = std::ptr::null_mut();
            let mut same = true;
            for id in ids {
                // SAFETY: PyDict_Next on a dict we own; `key` is a borrowed reference, only
                // compared by address (and its type read) while `copy` is alive.
                let more = unsafe { ffi::PyDict_Next(copy.as_ptr(), &mut pos, &mut key, &mut value) } != 0;
                if !more || key != id.as_ptr() || !id.as_any().is_exact_instance_of::<PyString>() {
                    same = false;
                    break;
                }
            }
            if same {
                return Ok(copy);
            }
        }
    }
    Ok(PyDict::new(py))
}
