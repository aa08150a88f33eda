//! Reading an attribute of a client's objects with `getattr` semantics, fast where a slot can be
//! read directly (the drop-in leader step reads every member's fields this way).

use pyo3::exceptions::PyAttributeError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyTuple, PyType};

/// `getattr(obj, name, None)`, with None for a missing attribute or a `None` value.
fn attr<'py>(obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
    match obj.getattr_opt(name)? {
        Some(v) if !v.is_none() => Ok(Some(v)),
        _ => Ok(None),
    }
}

/// A slot (member) descriptor, its `__get__` and, when it could be confirmed, the offset of the
/// slot in the instance (see [`slot_offset`]).
struct SlotDescriptor<'py> {
    descr: Bound<'py, PyAny>,
    get: ffi::descrgetfunc,
    offset: Option<usize>,
}

/// The head of CPython's `PyMemberDescrObject` (`Include/cpython/descrobject.h`: `PyDescr_COMMON`
/// then `d_member`, the same from 3.3 to 3.15): the common descriptor fields, then the slot's
/// `PyMemberDef` (which is in the stable ABI). `ffi::PyObject` is the header of the build this
/// module is compiled for (the free-threaded header in a free-threaded build). docs/cpython-layout.md,
/// "CPython object layouts".
#[repr(C)]
struct MemberDescrHead {
    ob_base: ffi::PyObject,
    d_type: *mut ffi::PyTypeObject,
    d_name: *mut ffi::PyObject,
    d_qualname: *mut ffi::PyObject,
    d_member: *const ffi::PyMemberDef,
}

/// Whether the fast reads apply here: the interpreter is CPython (`sys.implementation.name`) and
/// the GIL is on (`sys._is_gil_enabled()`, 3.13+; earlier versions always have it). Elsewhere
/// (PyPy, GraalPy, a free-threaded CPython run with the GIL forced off) every attribute is read by
/// the ordinary `getattr`: the fast reads hand out borrowed references that only the GIL keeps
/// valid. Decided once: the GIL's state is settled by the time this module is imported.
fn fast_reads(py: Python<'_>) -> bool {
    static FAST: PyOnceLock<bool> = PyOnceLock::new();
    *FAST.get_or_init(py, || {
        let check = || -> PyResult<bool> {
            let sys = py.import("sys")?;
            if sys.getattr("implementation")?.getattr("name")?.extract::<String>()? != "cpython" {
                return Ok(false);
            }
            match sys.getattr_opt("_is_gil_enabled")? {
                Some(enabled) => enabled.call0()?.is_truthy(),
                None => Ok(true),
            }
        };
        check().unwrap_or(false)
    })
}

/// Whether this interpreter's member descriptors have the head [`MemberDescrHead`] describes:
/// CPython 3.10 (the abi3 floor) to 3.15, whose headers were read. The wheel's abi3 build also
/// loads on later versions; there every slot is read through its descriptor's `__get__` instead.
fn member_layout_known(py: Python<'_>) -> bool {
    let version = py.version_info();
    fast_reads(py) && version.major == 3 && (10..16).contains(&version.minor)
}

/// The offset of the object slot that `descr` (a member descriptor found on `ty`'s MRO for
/// `name`) reads, when its `PyMemberDef` confirms it: the descriptor's own name is `name`, the
/// definition's name is `name` too, the slot holds an object (`Py_T_OBJECT_EX`, what
/// `__slots__` make: unset reads raise AttributeError), at an absolute offset and not audited
/// (no flag but read-only), and it lies inside the instance (`ty.__basicsize__`). Anything else: None, and the slot is read through
/// the descriptor's `__get__`.
fn slot_offset(
    ty: &Bound<'_, PyType>,
    name: &Bound<'_, PyString>,
    descr: &Bound<'_, PyAny>,
) -> PyResult<Option<usize>> {
    let py = ty.py();
    if !member_layout_known(py) {
        return Ok(None);
    }
    let basic: usize = ty.getattr(intern!(py, "__basicsize__"))?.extract()?;
    let want = name.to_str()?;
    // SAFETY: `descr`'s type is `types.MemberDescriptorType` (checked by the caller), whose
    // instances are `PyMemberDescrObject`s starting with `MemberDescrHead`; `d_name` is checked
    // to be `name` before `d_member` is followed, and a member definition lives as long as its
    // type (which `ty` keeps alive).
    unsafe {
        let head = descr.as_ptr() as *const MemberDescrHead;
        let d_name = (*head).d_name;
        if d_name.is_null() || !Bound::from_borrowed_ptr(py, d_name).eq(name)? {
            return Ok(None);
        }
        let def = (*head).d_member;
        if def.is_null() || (*def).name.is_null() {
            return Ok(None);
        }
        let def_name = std::ffi::CStr::from_ptr((*def).name);
        let Ok(offset) = usize::try_from((*def).offset) else {
            return Ok(None);
        };
        let fits = offset >= std::mem::size_of::<ffi::PyObject>()
            && offset % std::mem::align_of::<*mut ffi::PyObject>() == 0
            && offset + std::mem::size_of::<*mut ffi::PyObject>() <= basic;
        if def_name.to_bytes() != want.as_bytes()
            || (*def).type_code != ffi::Py_T_OBJECT_EX
            || ((*def).flags & !ffi::Py_READONLY) != 0
            || !fits
        {
            return Ok(None);
        }
        Ok(Some(offset))
    }
}

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
///
/// aiokafka's structs keep their fields in the instance dict, and no class on their MRO has an
/// attribute of that name: `getattr` then returns the instance dict's entry, which is read
/// directly; a missing entry takes the ordinary `getattr` (AttributeError or `__getattr__`).
///
/// Only on CPython with the GIL on ([`fast_reads`]); the slot's offset is used only where the
/// member descriptor's layout is known ([`member_layout_known`]).
pub(super) struct SlotAttr<'py> {
    name: Bound<'py, PyString>,
    /// The type last seen and how the attribute is read on it.
    seen: Option<(Bound<'py, PyType>, ReadPath<'py>)>,
}

/// How an attribute is read on one type.
enum ReadPath<'py> {
    /// Through its slot descriptor (or at the slot's offset, when confirmed).
    Slot(SlotDescriptor<'py>),
    /// From the instance dict: no class on the MRO has the attribute, and the type uses
    /// `object.__getattribute__`.
    InstanceDict,
    /// By the ordinary `getattr`.
    Getattr,
}

impl<'py> SlotAttr<'py> {
    pub(super) fn new(name: &Bound<'py, PyString>) -> Self {
        SlotAttr {
            name: name.clone(),
            seen: None,
        }
    }

    /// How `name` is read on `ty` with what `getattr` gives (see [`ReadPath`]).
    fn resolve(ty: &Bound<'py, PyType>, name: &Bound<'py, PyString>) -> PyResult<ReadPath<'py>> {
        let py = ty.py();
        if !fast_reads(py) {
            return Ok(ReadPath::Getattr);
        }
        let object = py.get_type::<PyAny>();
        if !ty
            .getattr(intern!(py, "__getattribute__"))?
            .is(&object.getattr(intern!(py, "__getattribute__"))?)
        {
            return Ok(ReadPath::Getattr);
        }
        Ok(match Self::slot_descriptor(ty, name)? {
            Some(Some(d)) => ReadPath::Slot(d),
            Some(None) => ReadPath::Getattr,
            None if ty.getattr(intern!(py, "__dictoffset__"))?.extract::<isize>()? != 0 => ReadPath::InstanceDict,
            None => ReadPath::Getattr,
        })
    }

    /// What `name` is on `ty`'s MRO: `None` when no class has it, `Some(Some(d))` for a slot
    /// descriptor, `Some(None)` for anything else.
    #[allow(clippy::option_option)]
    fn slot_descriptor(
        ty: &Bound<'py, PyType>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Option<Option<SlotDescriptor<'py>>>> {
        let py = ty.py();
        for class in ty.getattr(intern!(py, "__mro__"))?.cast_into::<PyTuple>()?.iter() {
            let Some(found) = class.getattr(intern!(py, "__dict__"))?.get_item(name).ok() else {
                continue;
            };
            static MEMBER_DESCRIPTOR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
            let member_descriptor = MEMBER_DESCRIPTOR.import(py, "types", "MemberDescriptorType")?;
            if !found.get_type().is(member_descriptor) {
                return Ok(Some(None));
            }
            // SAFETY: `found`'s type is `member_descriptor`, a static type; PyType_GetSlot
            // accepts static types from Python 3.10 (the abi3 floor) and returns its
            // tp_descr_get, which member descriptors always have.
            let get = unsafe { ffi::PyType_GetSlot(found.get_type().as_type_ptr(), ffi::Py_tp_descr_get) };
            if get.is_null() {
                return Ok(Some(None));
            }
            // SAFETY: the Py_tp_descr_get slot holds a `descrgetfunc`.
            let get: ffi::descrgetfunc = unsafe { std::mem::transmute(get) };
            let offset = slot_offset(ty, name, &found)?;
            return Ok(Some(Some(SlotDescriptor {
                descr: found,
                get,
                offset,
            })));
        }
        Ok(None)
    }

    /// The attribute's value when a read without `getattr` applies and finds it (a set slot, an instance dict
    /// entry), else None.
    #[inline]
    fn read_without_getattr(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let fresh = matches!(&self.seen, Some((seen, _)) if seen.as_type_ptr() == obj.get_type_ptr());
        if !fresh {
            let ty = obj.get_type();
            let mut path = Self::resolve(&ty, &self.name)?;
            if let ReadPath::Slot(d) = &mut path {
                // The offset is used only if it reads what the descriptor reads on this object.
                if d.offset.is_some()
                    && !same(
                        &Self::read_slot_at_offset(obj, d.offset),
                        &Self::read_slot_via_descriptor(&ty, d, obj)?,
                    )
                {
                    d.offset = None;
                }
            }
            self.seen = Some((ty, path));
        }
        match &self.seen {
            Some((_, ReadPath::Slot(d @ SlotDescriptor { offset: Some(_), .. }))) => {
                Ok(Self::read_slot_at_offset(obj, d.offset))
            }
            Some((ty, ReadPath::Slot(d))) => Self::read_slot_via_descriptor(ty, d, obj),
            Some((_, ReadPath::InstanceDict)) => Self::read_instance_dict(obj, &self.name),
            _ => Ok(None),
        }
    }

    /// The instance dict's entry for `name`, None when missing (or when `obj` has no dict).
    fn read_instance_dict(obj: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = obj.py();
        // SAFETY: PyObject_GenericGetDict returns a new reference to the instance dict (the
        // dict the generic `getattr` reads), or NULL with an exception set;
        // PyDict_GetItemWithError returns a borrowed reference, taken at once.
        unsafe {
            let dict = ffi::PyObject_GenericGetDict(obj.as_ptr(), std::ptr::null_mut());
            if dict.is_null() {
                ffi::PyErr_Clear();
                return Ok(None);
            }
            let dict = Bound::from_owned_ptr(py, dict);
            let value = ffi::PyDict_GetItemWithError(dict.as_ptr(), name.as_ptr());
            if value.is_null() {
                return match PyErr::take(py) {
                    Some(err) => Err(err),
                    None => Ok(None),
                };
            }
            Ok(Some(Bound::from_borrowed_ptr(py, value)))
        }
    }

    /// The slot at `offset` of `obj` (an instance of the type the offset was found on), None
    /// when unset.
    #[inline]
    fn read_slot_at_offset(obj: &Bound<'py, PyAny>, offset: Option<usize>) -> Option<Bound<'py, PyAny>> {
        let offset = offset?;
        // SAFETY: `offset` is a `Py_T_OBJECT_EX` slot of `obj`'s type inside its basic size
        // (`slot_offset`), which holds a borrowed object pointer or NULL when unset; the caller
        // checked that `obj`'s type is that type.
        unsafe {
            let value = *(obj.as_ptr() as *const u8).add(offset).cast::<*mut ffi::PyObject>();
            Bound::from_borrowed_ptr_or_opt(obj.py(), value)
        }
    }

    /// The slot read through the descriptor's `__get__`, None when unset.
    fn read_slot_via_descriptor(
        ty: &Bound<'py, PyType>,
        d: &SlotDescriptor<'py>,
        obj: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = obj.py();
        // SAFETY: `get` is the member descriptor's tp_descr_get, called as Python calls it
        // (descriptor, instance, owner type); `obj` is an instance of `ty`, on whose MRO the
        // descriptor was found. It returns a new reference, or NULL with AttributeError set for
        // an unset slot.
        let value = unsafe { (d.get)(d.descr.as_ptr(), obj.as_ptr(), ty.as_ptr()) };
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

    /// The slot's raw value on `obj` when the read at the offset applies to `obj`'s type (the
    /// type this attribute last resolved on, with a confirmed offset): `Some(null)` for an unset slot, else
    /// a borrowed pointer. `None`: read with [`Self::get`] or [`Self::opt`], which also resolve a
    /// new type. Runs no Python code.
    ///
    /// # Safety
    /// `obj` is a live object and the GIL is held. The pointer returned is borrowed from the slot:
    /// it is valid only while the slot keeps it, so the caller may not run any Python code (which
    /// could rebind the slot or free `obj`) before it has taken a new reference to it or finished
    /// with it.
    #[inline]
    pub(super) unsafe fn slot_pointer(&self, obj: *mut ffi::PyObject) -> Option<*mut ffi::PyObject> {
        match &self.seen {
            // SAFETY (the guard's `Py_TYPE`): the caller's contract, `obj` is a live object.
            Some((
                ty,
                ReadPath::Slot(SlotDescriptor {
                    offset: Some(offset), ..
                }),
            )) if ty.as_type_ptr() == unsafe { ffi::Py_TYPE(obj) } => {
                // SAFETY: as in `read_slot_at_offset`: `offset` is an object slot of this exact
                // type, and `obj` is live.
                Some(unsafe { *(obj as *const u8).add(*offset).cast::<*mut ffi::PyObject>() })
            }
            _ => None,
        }
    }

    /// Whether this attribute was resolved to the instance dict ([`ReadPath::InstanceDict`]) on `obj`'s type.
    pub(super) fn reads_instance_dict(&self, obj: &Bound<'py, PyAny>) -> bool {
        matches!(&self.seen, Some((ty, ReadPath::InstanceDict)) if ty.as_type_ptr() == obj.get_type_ptr())
    }

    /// The attribute's name.
    pub(super) fn name(&self) -> &Bound<'py, PyString> {
        &self.name
    }

    /// `getattr(obj, name)`.
    pub(super) fn get(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match self.read_without_getattr(obj)? {
            Some(v) => Ok(v),
            None => obj.getattr(&self.name),
        }
    }

    /// `getattr(obj, name, None)` told apart from a missing attribute (None).
    pub(super) fn get_if_present(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.read_without_getattr(obj)? {
            Some(v) => Ok(Some(v)),
            None => obj.getattr_opt(&self.name),
        }
    }

    /// `getattr(obj, name, None)`, with None also for a `None` value (as [`attr`]).
    pub(super) fn opt(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.read_without_getattr(obj)? {
            Some(v) if !v.is_none() => Ok(Some(v)),
            Some(_) => Ok(None),
            None => attr(obj, &self.name),
        }
    }
}

/// The same object, or both absent.
fn same(a: &Option<Bound<'_, PyAny>>, b: &Option<Bound<'_, PyAny>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.is(b),
        (None, None) => true,
        _ => false,
    }
}
