//! The attributes the drop-in leader step reads from the clients' objects ([`ReadAttrs`]), and
//! the common case of reading one kafka-python member's subscription without a Python call that
//! could run Python code ([`read`]).
//!
//! In the common case every field sits in a set slot of a type already resolved by
//! [`SlotAttr`], and every value is of an exact builtin type (`list`, `str`, `bytes`, `int` or
//! `None`). Nothing can then run Python code while the member is read, so its objects are read
//! through borrowed pointers: no type-flag calls, no iterator objects. What the read hands back is
//! owned (new references, or plain Rust values copied while nothing could run Python code), so
//! its callers may run Python code afterwards: the safe functions here give nothing whose
//! validity depends on what runs next. Any
//! other member (an unset slot, a subclass, a tuple, a value out of range) is read by the general
//! path in [`crate::drop_in`], which gives the same fields, warnings and errors.

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::drop_in_owned::{EntryAttrs, GroupTopic, Histories};
use crate::slot_attr::SlotAttr;
use kassign_core::wire::History;

/// The attributes read from the client's objects, each found once per type.
pub(super) struct ReadAttrs<'py> {
    pub(super) member_id: SlotAttr<'py>,
    pub(super) metadata: SlotAttr<'py>,
    pub(super) group_instance_id: SlotAttr<'py>,
    /// kafka-python's `topics`, aiokafka's `subscription`.
    pub(super) topics: SlotAttr<'py>,
    pub(super) user_data: SlotAttr<'py>,
    pub(super) owned_partitions: SlotAttr<'py>,
    pub(super) generation_id: SlotAttr<'py>,
    pub(super) rack_id: SlotAttr<'py>,
    pub(super) entry: EntryAttrs<'py>,
}

impl<'py> ReadAttrs<'py> {
    /// The attributes, with the subscription's topic list named `topics_name`.
    pub(super) fn new(py: Python<'py>, topics_name: &Bound<'py, PyString>) -> Self {
        ReadAttrs {
            member_id: SlotAttr::new(intern!(py, "member_id")),
            metadata: SlotAttr::new(intern!(py, "metadata")),
            group_instance_id: SlotAttr::new(intern!(py, "group_instance_id")),
            topics: SlotAttr::new(topics_name),
            user_data: SlotAttr::new(intern!(py, "user_data")),
            owned_partitions: SlotAttr::new(intern!(py, "owned_partitions")),
            generation_id: SlotAttr::new(intern!(py, "generation_id")),
            rack_id: SlotAttr::new(intern!(py, "rack_id")),
            entry: EntryAttrs::new(py),
        }
    }
}

/// One member's subscription fields as [`read`] gives them (new references: they stay valid
/// whatever Python code runs later).
pub(super) struct Fields<'py> {
    /// The user data (an exact `bytes`).
    pub(super) user_data: Option<Bound<'py, PyBytes>>,
    /// The generation field (-1 when absent, out of range or not read).
    pub(super) generation: i32,
    /// A non-empty rack.
    pub(super) rack: Option<Bound<'py, PyString>>,
}

/// [`read`] for an aiokafka member metadata struct, whose `subscription` and `user_data` are
/// instance dict entries (resolved so on its type): `None` when either is missing or not of the
/// common case (`names` may then hold part of it, which the caller truncates).
pub(super) fn read_dict<'py>(
    attrs: &ReadAttrs<'py>,
    md: &Bound<'py, PyAny>,
    names: &mut Vec<Bound<'py, PyString>>,
) -> Option<Fields<'py>> {
    if !attrs.topics.reads_instance_dict(md) || !attrs.user_data.reads_instance_dict(md) {
        return None;
    }
    // SAFETY: `md` is live and the GIL is held. The dict look-ups are the only calls that can
    // run Python code (a key's `__eq__` on equal hashes): the first value is held as a new
    // reference across the second; after the second nothing runs Python code before
    // `read_common` has taken new references to what it returns, while `dict` (held) keeps
    // both values alive.
    unsafe {
        let py = md.py();
        let dict = ffi::PyObject_GenericGetDict(md.as_ptr(), std::ptr::null_mut());
        if dict.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let dict = Bound::from_owned_ptr(py, dict);
        let topics = ffi::PyDict_GetItemWithError(dict.as_ptr(), attrs.topics.name().as_ptr());
        if topics.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let topics = Bound::from_borrowed_ptr(py, topics);
        let user_data = ffi::PyDict_GetItemWithError(dict.as_ptr(), attrs.user_data.name().as_ptr());
        if user_data.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        read_common(py, topics.as_ptr(), user_data, names)
    }
}

/// The topics (appended to `names`, as new references) and user data (a new reference) of the
/// common case; the rest is left to the caller (generation -1, no rack). `None` outside the
/// common case (`names` then holds part).
///
/// # Safety
/// The GIL is held and both pointers are live objects, kept alive (with the list's items) until
/// this returns; it runs no Python code, so nothing can free them meanwhile. The results are new
/// references and do not depend on the pointers afterwards.
#[inline]
unsafe fn read_common<'py>(
    py: Python<'py>,
    topics: *mut ffi::PyObject,
    user_data: *mut ffi::PyObject,
    names: &mut Vec<Bound<'py, PyString>>,
) -> Option<Fields<'py>> {
    // SAFETY: the caller's contract (above): both pointers are live and the GIL is held; every
    // object read below is checked for its exact type before its layout is used, and nothing
    // here runs Python code, so no borrowed pointer can be freed before it is turned into a new
    // reference (`from_borrowed_ptr`).
    unsafe {
        let none = ffi::Py_None();
        if topics != none {
            if !is_exact(topics, &raw mut ffi::PyList_Type) {
                return None;
            }
            for i in 0..ffi::PyList_Size(topics) {
                let t = ffi::PyList_GetItem(topics, i);
                if t.is_null() || !is_exact(t, &raw mut ffi::PyUnicode_Type) {
                    return None;
                }
                names.push(Bound::from_borrowed_ptr(py, t).cast_into_unchecked());
            }
        }
        let user_data: Option<Bound<'py, PyBytes>> = if user_data == none {
            None
        } else if is_exact(user_data, &raw mut ffi::PyBytes_Type) {
            Some(Bound::from_borrowed_ptr(py, user_data).cast_into_unchecked())
        } else {
            return None;
        };
        Some(Fields {
            user_data,
            generation: -1,
            rack: None,
        })
    }
}

/// Whether `obj` is exactly of type `ty`.
///
/// # Safety
/// `obj` is a live object.
#[inline]
unsafe fn is_exact(obj: *mut ffi::PyObject, ty: *mut ffi::PyTypeObject) -> bool {
    // SAFETY: the caller passes a live object.
    unsafe { ffi::Py_TYPE(obj) == ty }
}

/// The UTF-8 of an exact `str`, `None` (the error cleared) when it has none (lone surrogates).
///
/// # Safety
/// `s` is a live object of exact type `str` and the GIL is held. The slice borrows the string's
/// UTF-8 buffer, which lives as long as the string: the caller picks `'a` and must not use the
/// slice after the string may have been freed (after any Python code has run, unless the caller
/// holds a reference to the string).
#[inline]
unsafe fn utf8<'a>(s: *mut ffi::PyObject) -> Option<&'a [u8]> {
    let mut len: ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a live exact str; its UTF-8 buffer lives as long as it does.
    unsafe {
        let data = ffi::PyUnicode_AsUTF8AndSize(s, &mut len);
        if data.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        Some(std::slice::from_raw_parts(data.cast::<u8>(), len as usize))
    }
}

/// An exact `int` in the int64 range, `None` (the error cleared) outside it.
///
/// # Safety
/// `i` is a live object of exact type `int`, and the GIL is held.
#[inline]
unsafe fn int64(i: *mut ffi::PyObject) -> Option<i64> {
    // SAFETY: `i` is a live exact int: converting it runs no Python code.
    unsafe {
        let v = ffi::PyLong_AsLongLong(i);
        if v == -1 && !ffi::PyErr_Occurred().is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        Some(v)
    }
}

/// Read a kafka-python subscription `md` (a `ConsumerProtocolSubscription`) the way the general
/// path does, when every field is in the common case (module doc): its topics appended to
/// `names`, its owned-partitions field (read when `kind` takes it) appended to `hist`, the rest
/// returned. `None` when the member is not in the common case; `names` and `hist` may then hold
/// part of it, which the caller truncates.
pub(super) fn read<'py>(
    attrs: &ReadAttrs<'py>,
    md: &Bound<'py, PyAny>,
    kind: History,
    names: &mut Vec<Bound<'py, PyString>>,
    hist: &mut Histories<'py>,
) -> Option<Fields<'py>> {
    // SAFETY: `md` is live and the GIL is held. Every pointer below is borrowed from a slot or a
    // list of `md`'s object graph, which nothing changes while this runs: it calls no Python
    // code. What it returns is owned: the topics, the rack and the user data as new references,
    // the owned partitions copied into `hist` (the topic's UTF-8 copied by `push_str` before
    // anything else runs).
    let py = md.py();
    unsafe {
        let none = ffi::Py_None();
        let (str_type, list_type, int_type) = (
            &raw mut ffi::PyUnicode_Type,
            &raw mut ffi::PyList_Type,
            &raw mut ffi::PyLong_Type,
        );
        let md = md.as_ptr();
        let topics = attrs.topics.slot_pointer(md)?;
        let user_data = attrs.user_data.slot_pointer(md)?;
        let rack = attrs.rack_id.slot_pointer(md)?;
        if topics.is_null() || user_data.is_null() || rack.is_null() {
            return None;
        }
        let Fields { user_data, .. } = read_common(py, topics, user_data, names)?;
        let rack = if rack == none {
            None
        } else if is_exact(rack, str_type) {
            match utf8(rack) {
                Some([]) | None => None,
                Some(_) => Some(Bound::from_borrowed_ptr(py, rack).cast_into_unchecked()),
            }
        } else {
            return None;
        };
        let mut generation = -1;
        if kind.reads_fields(user_data.as_ref().map(|b| b.as_bytes())) {
            let owned = attrs.owned_partitions.slot_pointer(md)?;
            let gen = attrs.generation_id.slot_pointer(md)?;
            if owned.is_null() || gen.is_null() {
                return None;
            }
            if owned != none {
                if !is_exact(owned, list_type) {
                    return None;
                }
                for i in 0..ffi::PyList_Size(owned) {
                    let entry = ffi::PyList_GetItem(owned, i);
                    if entry.is_null() {
                        return None;
                    }
                    let topic = attrs.entry.topic.slot_pointer(entry)?;
                    let parts = attrs.entry.partitions.slot_pointer(entry)?;
                    if topic.is_null() || parts.is_null() || !is_exact(topic, str_type) || !is_exact(parts, list_type) {
                        return None;
                    }
                    let name = std::str::from_utf8(utf8(topic)?).ok()?;
                    let (n0, p0) = (hist.names.len(), hist.parts.len());
                    let count = ffi::PyList_Size(parts);
                    hist.parts.reserve(count.max(0) as usize);
                    for j in 0..count {
                        let p = ffi::PyList_GetItem(parts, j);
                        if p.is_null() || !is_exact(p, int_type) {
                            return None;
                        }
                        hist.parts.push(int64(p)?);
                    }
                    hist.names.push_str(name);
                    hist.groups
                        .push((GroupTopic::Name(n0..hist.names.len()), p0..hist.parts.len()));
                }
            }
            if gen != none {
                if !is_exact(gen, int_type) {
                    return None;
                }
                generation = int64(gen).and_then(|g| i32::try_from(g).ok()).unwrap_or(-1);
            }
        }
        Some(Fields {
            user_data,
            generation,
            rack,
        })
    }
}
