//! Reading an attribute of a client's objects with `getattr` semantics, fast where a slot can be
//! read directly (the drop-in leader step reads every member's fields this way).

use pyo3::exceptions::PyAttributeError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};

/// `getattr(obj, name, None)`, with None for a missing attribute or a `None` value.
fn attr<'py>(obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
    match obj.getattr_opt(name)? {
        Some(v) if !v.is_none() => Ok(Some(v)),
        _ => Ok(None),
    }
}

/// A slot (member) descriptor and its `__get__`.
type SlotDescriptor<'py> = (Bound<'py, PyAny>, ffi::descrgetfunc);

/// One attribute of the client's objects, read with `getattr` semantics but without its cost
/// where that is safe. kafka-python's data containers (`JoinGroupResponseMember`,
/// `ConsumerProtocolSubscription`) keep their fields in `__slots__` and define a Python
/// `__getattr__` (the defaults of fields outside the decoded version), so every plain `getattr`
/// goes through the slot hook, two type look-ups and the generic path. When an object's type
/// uses `object.__getattribute__` and the attribute resolves on its MRO to a slot (member)
/// descriptor, which as a data descriptor is what the generic path returns first, the slot is
/// read through that descriptor directly: the same value. An unset slot, and any other type,
/// take the ordinary `getattr`, which calls `__getattr__` as before. The descriptor is found
/// once per type.
pub(super) struct SlotAttr<'py> {
    name: Bound<'py, PyString>,
    /// The type last seen and, if the fast path applies to it, its slot descriptor and that
    /// descriptor's `__get__`.
    seen: Option<(Bound<'py, PyType>, Option<SlotDescriptor<'py>>)>,
}

impl<'py> SlotAttr<'py> {
    pub(super) fn new(name: &Bound<'py, PyString>) -> Self {
        SlotAttr {
            name: name.clone(),
            seen: None,
        }
    }

    /// The slot descriptor `name` resolves to on `ty`, when reading it directly gives what
    /// `getattr` gives.
    fn slot_descriptor(ty: &Bound<'py, PyType>, name: &Bound<'py, PyString>) -> PyResult<Option<SlotDescriptor<'py>>> {
        let py = ty.py();
        let object = py.get_type::<PyAny>();
        if !ty
            .getattr(intern!(py, "__getattribute__"))?
            .is(&object.getattr(intern!(py, "__getattribute__"))?)
        {
            return Ok(None);
        }
        for class in ty.getattr(intern!(py, "__mro__"))?.cast_into::<PyTuple>()?.iter() {
            let Some(found) = class.getattr(intern!(py, "__dict__"))?.get_item(name).ok() else {
                continue;
            };
            let member_descriptor = py
                .import(intern!(py, "types"))?
                .getattr(intern!(py, "MemberDescriptorType"))?;
            if !found.get_type().is(&member_descriptor) {
                return Ok(None);
            }
            // SAFETY: `found`'s type is `member_descriptor`, a static type; PyType_GetSlot
            // accepts static types from Python 3.10 (the abi3 floor) and returns its
            // tp_descr_get, which member descriptors always have.
            let get = unsafe { ffi::PyType_GetSlot(found.get_type().as_type_ptr(), ffi::Py_tp_descr_get) };
            if get.is_null() {
                return Ok(None);
            }
            // SAFETY: the Py_tp_descr_get slot holds a `descrgetfunc`.
            let get: ffi::descrgetfunc = unsafe { std::mem::transmute(get) };
            return Ok(Some((found, get)));
        }
        Ok(None)
    }

    /// The slot's value when the fast path applies and the slot is set, else None.
    fn fast(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = obj.py();
        let stale = !matches!(&self.seen, Some((seen, _)) if seen.as_type_ptr() == obj.get_type_ptr());
        if stale {
            let ty = obj.get_type();
            let descr = Self::slot_descriptor(&ty, &self.name)?;
            self.seen = Some((ty, descr));
        }
        let Some((ty, Some((descr, get)))) = &self.seen else {
            return Ok(None);
        };
        // SAFETY: `get` is the member descriptor's tp_descr_get, called as Python calls it
        // (descriptor, instance, owner type); `obj` is an instance of `ty`, on whose MRO the
        // descriptor was found. It returns a new reference, or NULL with AttributeError set for
        // an unset slot.
        let value = unsafe { get(descr.as_ptr(), obj.as_ptr(), ty.as_ptr()) };
        if value.is_null() {
            let err = PyErr::fetch(py);
            if !err.is_instance_of::<PyAttributeError>(py) {
                return Err(err);
            }
            return Ok(None);
        }
        // SAFETY: a new, non-null reference.
        Ok(Some(unsafe { Bound::from_owned_ptr(py, value) }))
    }

    /// `getattr(obj, name)`.
    pub(super) fn get(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self.fast(obj)? {
            Some(v) => Ok(v),
            None => obj.getattr(&self.name),
        }
    }

    /// `getattr(obj, name, None)` told apart from a missing attribute (None).
    pub(super) fn opt_raw(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.fast(obj)? {
            Some(v) => Ok(Some(v)),
            None => obj.getattr_opt(&self.name),
        }
    }

    /// `getattr(obj, name, None)`, with None also for a `None` value (as [`attr`]).
    pub(super) fn opt(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.fast(obj)? {
            Some(v) if !v.is_none() => Ok(Some(v)),
            Some(_) => Ok(None),
            None => attr(obj, &self.name),
        }
    }
}
