//! The JNI boundary of the broker-side assignor (`java/broker/`, class
//! `kassign.broker.NativeAssignor`): Java arrays in, the owner array out, one to three calls per
//! `assign` (the counts-first path answers in its first call when it can).
//!
//! Only conversion happens here. The arrays' *lengths* are read first and judged by
//! [`Lengths::check`] (the broker caps, docs/broker.md "Native memory"); then the partition counts
//! (at most [`kassign_core::server::kassign::BROKER_MAX_TOPICS`] of them) are copied and their total judged;
//! only then is anything else copied into native memory, each buffer reserved fallibly (a failed
//! reservation is an error for this group, never an abort). The member ids become one UTF-8
//! buffer ([`FlatIds`], no `String` per member), and the group goes to
//! [`kassign_core::server::kassign::assign_flat_ids`] (which checks its contents and decides whether
//! the group is dealt flat or interned); the owners are copied back. The counts-first path asks
//! [`counts_first`] first: whose current target Java must read (then the same entry point with
//! the members' counts finishes), or, when nobody's must be read, the answer in that one call. An input error or a panic becomes a Java
//! `org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException`; nothing unwinds
//! into the JVM, and a pending Java `Error` (an `OutOfMemoryError` from a JNI allocation) is left
//! as it is. Concurrent calls from several coordinator threads share nothing but
//! [`COPIED`], a diagnostic counter.

// A panic must unwind to `catch_unwind` in `guarded`: with `panic = "abort"` it would take the
// broker's JVM down.
#[cfg(not(panic = "unwind"))]
compile_error!("the JNI boundary needs panic = \"unwind\": a panic must become a Java exception, not abort the JVM");

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use jni::objects::{JByteArray, JCharArray, JClass, JIntArray, JPrimitiveArray, JThrowable, ReleaseMode};
use jni::sys::{jintArray, jlong, jstring};
use jni::JNIEnv;

use kassign_core::server::kassign::{
    assign_flat_ids, counts_first, native_bound, partition_total, CountsFirst, FlatAnswer, FlatGroup, FlatIds, Lengths,
    MemberKeys,
};

const ASSIGNOR_EXCEPTION: &str = "org/apache/kafka/coordinator/group/api/assignor/PartitionAssignorException";

/// Array elements copied from Java into native memory since the library was loaded, over all
/// calls: `NativeAssignor.copiedElements()`, which the Java tests read to prove that a group over
/// the caps is refused before its arrays are copied.
static COPIED: AtomicU64 = AtomicU64::new(0);

/// The one-element answer of `countsFirst0` and of `assign0`'s counted call made without the
/// member ids: call again with them ([`FlatAnswer::NeedIds`], [`CountsFirst::NeedIds`]).
const NEED_IDS: i32 = 2;

/// A failure to report to Java: the message of a `PartitionAssignorException`.
struct Failure(String);

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Failure {
        Failure(format!("kassign: JNI error: {e}"))
    }
}

impl From<kassign_core::model::InputError> for Failure {
    fn from(e: kassign_core::model::InputError) -> Failure {
        Failure(format!("kassign: {e}"))
    }
}

/// The length of a Java array; 0 for null.
fn len<T: jni::objects::TypeArray>(env: &JNIEnv<'_>, arr: &JPrimitiveArray<'_, T>) -> Result<usize, Failure> {
    if arr.is_null() {
        return Ok(0);
    }
    Ok(env.get_array_length(arr)?.max(0) as usize)
}

/// A zeroed buffer of `n` elements, reserved fallibly: an allocation failure is an error for this
/// group (never an abort of the JVM).
fn buffer<T: Copy + Default>(n: usize) -> Result<Vec<T>, Failure> {
    let mut buf: Vec<T> = Vec::new();
    buf.try_reserve_exact(n).map_err(|_| {
        Failure(format!(
            "kassign: cannot reserve {} bytes of native memory for this group",
            n.saturating_mul(std::mem::size_of::<T>())
        ))
    })?;
    buf.resize(n, T::default());
    COPIED.fetch_add(n as u64, Ordering::Relaxed);
    Ok(buf)
}

fn ints(env: &mut JNIEnv<'_>, arr: &JIntArray<'_>) -> Result<Vec<i32>, Failure> {
    let mut buf = buffer(len(env, arr)?)?;
    if !buf.is_empty() {
        env.get_int_array_region(arr, 0, &mut buf)?;
    }
    Ok(buf)
}

/// The members' `String.hashCode`s (an `int[]`; null: not given) as the core's unsigned hashes.
fn hashes(env: &mut JNIEnv<'_>, arr: &JIntArray<'_>) -> Result<Option<Vec<u32>>, Failure> {
    if arr.is_null() {
        return Ok(None);
    }
    Ok(Some(ints(env, arr)?.into_iter().map(|h| h as u32).collect()))
}

fn bytes(env: &mut JNIEnv<'_>, arr: &JByteArray<'_>) -> Result<Vec<u8>, Failure> {
    let mut buf: Vec<i8> = buffer(len(env, arr)?)?;
    if !buf.is_empty() {
        env.get_byte_array_region(arr, 0, &mut buf)?;
    }
    Ok(buf.into_iter().map(|b| b as u8).collect())
}

/// Strings that cross as their characters back to back (`chars`, UTF-16) and the end offset of
/// each (`ends`): two bulk copies, however many strings. Returns the characters and each
/// string's range in them, the offsets checked (non-decreasing, within `chars`).
fn joined(
    env: &mut JNIEnv<'_>,
    name: &str,
    chars: &JCharArray<'_>,
    ends: &JIntArray<'_>,
) -> Result<(Vec<u16>, Vec<std::ops::Range<usize>>), Failure> {
    let ends = ints(env, ends)?;
    let mut buf: Vec<u16> = buffer(len(env, chars)?)?;
    if !buf.is_empty() {
        env.get_char_array_region(chars, 0, &mut buf)?;
    }
    let mut ranges = Vec::new();
    ranges
        .try_reserve_exact(ends.len())
        .map_err(|_| Failure(format!("kassign: cannot reserve native memory for this group's {name}")))?;
    let mut start = 0usize;
    for (i, &end) in ends.iter().enumerate() {
        let end = usize::try_from(end)
            .ok()
            .filter(|&e| e >= start && e <= buf.len())
            .ok_or_else(|| {
                Failure(format!(
                    "kassign: {name}: end offset {i} ({end}) is out of order or past the characters"
                ))
            })?;
        ranges.push(start..end);
        start = end;
    }
    Ok((buf, ranges))
}

/// Strings as [`joined`] reads them, one `String` each (a lone surrogate becomes U+FFFD).
fn strings(
    env: &mut JNIEnv<'_>,
    name: &str,
    chars: &JCharArray<'_>,
    ends: &JIntArray<'_>,
) -> Result<Vec<String>, Failure> {
    let (buf, ranges) = joined(env, name, chars, ends)?;
    Ok(ranges.into_iter().map(|r| utf16(&buf[r])).collect())
}

/// One string from its UTF-16 code units. Topic ids are ASCII, which takes the direct way (one
/// byte per unit, no decoding per character); anything else is decoded, a lone surrogate becoming
/// U+FFFD.
fn utf16(units: &[u16]) -> String {
    if units.iter().all(|&u| u < 0x80) {
        let bytes: Vec<u8> = units.iter().map(|&u| u as u8).collect();
        // ASCII bytes are UTF-8: from_utf8 cannot fail here (its check is one fast pass).
        if let Ok(s) = String::from_utf8(bytes) {
            return s;
        }
    }
    String::from_utf16_lossy(units)
}

/// The member ids as UTF-8 bytes back to back ([`FlatIds`]), from their characters and end
/// offsets as [`joined`] takes strings, without a `String` per id. The characters are read in
/// place (a critical section, no copy of them into native memory): ASCII ids (the usual case) are
/// narrowed a byte per unit in one pass; anything else is decoded as [`utf16`] decodes it.
fn flat_ids(env: &mut JNIEnv<'_>, chars: &JCharArray<'_>, ends: &JIntArray<'_>) -> Result<FlatIds, Failure> {
    let ends = ints(env, ends)?;
    let n = len(env, chars)?;
    let mut start = 0usize;
    for (i, &end) in ends.iter().enumerate() {
        start = usize::try_from(end)
            .ok()
            .filter(|&e| e >= start && e <= n)
            .ok_or_else(|| {
                Failure(format!(
                    "kassign: memberIds: end offset {i} ({end}) is out of order or past the characters"
                ))
            })?;
    }
    let fail = || Failure("kassign: cannot reserve native memory for this group's member ids".into());
    let mut bytes: Vec<u8> = Vec::new();
    bytes.try_reserve_exact(n).map_err(|_| fail())?;
    let mut out: Vec<usize> = Vec::new();
    out.try_reserve_exact(ends.len()).map_err(|_| fail())?;
    if n == 0 {
        out.resize(ends.len(), 0);
        return Ok(FlatIds::new(bytes, out)?);
    }
    COPIED.fetch_add(n as u64, Ordering::Relaxed);
    // SAFETY: the array is the one `NativeAssignor.Joined` has just built for this call, shared
    // with no other thread; no other view of it exists while this one lives, and no JNI call is
    // made before it is released (at the end of this block).
    let units = unsafe { env.get_array_elements_critical(chars, ReleaseMode::NoCopyBack)? };
    if units.iter().fold(0u16, |a, &u| a | u) < 0x80 {
        bytes.extend(units.iter().map(|&u| u as u8));
        out.extend(ends.iter().map(|&e| e as usize));
    } else {
        let mut start = 0usize;
        for &end in &ends {
            let piece = &units[start..end as usize];
            if piece.iter().fold(0u16, |a, &u| a | u) < 0x80 {
                bytes.extend(piece.iter().map(|&u| u as u8));
            } else {
                let s = String::from_utf16_lossy(piece);
                bytes.try_reserve(s.len()).map_err(|_| fail())?;
                bytes.extend_from_slice(s.as_bytes());
            }
            out.push(bytes.len());
            start = end as usize;
        }
    }
    drop(units);
    Ok(FlatIds::new(bytes, out)?)
}

/// Calls whose [`native_bound`] is below this skip [`probe`]: a process that cannot map a few
/// MiB more is failing whatever this call does, and mapping and unmapping the bound on every call
/// of a small group costs more than the assignment.
const PROBE_FROM_BYTES: usize = 16 << 20;

/// Reserve the whole call's native memory ([`native_bound`]) fallibly once up front, and let it
/// go: where the process cannot map that much (an address-space limit, strict overcommit), the
/// group is refused here rather than by an allocation failure later, which would abort. Below
/// [`PROBE_FROM_BYTES`] nothing is reserved.
fn probe(lengths: &Lengths, total: usize) -> Result<(), Failure> {
    let bound = native_bound(lengths, total);
    if bound < PROBE_FROM_BYTES {
        return Ok(());
    }
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bound).map_err(|_| {
        Failure(format!(
            "kassign: cannot reserve the {bound} bytes of native memory this group needs"
        ))
    })
}

/// The arrays of one group as Java passes them (see `assign0`), copied into Rust.
struct Arrays {
    member_racks: Vec<i32>,
    rack_names: Vec<String>,
    topics: Vec<String>,
    partition_counts: Vec<i32>,
    sub_offsets: Vec<i32>,
    sub_topics: Vec<i32>,
    owned_offsets: Vec<i32>,
    owned_topics: Vec<i32>,
    owned_partitions: Vec<i32>,
    partition_rack_offsets: Vec<i32>,
    partition_racks: Vec<i32>,
    assignable: Vec<u8>,
}

impl Arrays {
    /// The group (its member ids travel apart, as [`FlatIds`]).
    fn group(&mut self) -> FlatGroup<'_> {
        FlatGroup {
            member_ids: Vec::new(),
            member_racks: &self.member_racks,
            rack_names: std::mem::take(&mut self.rack_names),
            topics: std::mem::take(&mut self.topics),
            partition_counts: &self.partition_counts,
            sub_offsets: &self.sub_offsets,
            sub_topics: &self.sub_topics,
            owned_offsets: &self.owned_offsets,
            owned_topics: &self.owned_topics,
            owned_partitions: &self.owned_partitions,
            partition_rack_offsets: &self.partition_rack_offsets,
            partition_racks: &self.partition_racks,
            assignable: &self.assignable,
        }
    }
}

/// Run `body`, turning an error or a panic into a pending `PartitionAssignorException` (and a
/// null return). A pending Java `Error` (an `OutOfMemoryError` from a failed JNI allocation) is
/// left pending as it is; any other pending Java exception is replaced by the assignor's own.
fn guarded<'local, T>(
    env: &mut JNIEnv<'local>,
    body: impl FnOnce(&mut JNIEnv<'local>) -> Result<*mut T, Failure>,
) -> *mut T {
    let message = match catch_unwind(AssertUnwindSafe(|| body(env))) {
        Ok(Ok(out)) => return out,
        Ok(Err(Failure(msg))) => msg,
        Err(p) => format!(
            "kassign: internal error (a bug, please report it): {}",
            kassign_core::panic_message(&*p)
        ),
    };
    if env.exception_check().unwrap_or(false) {
        // Only a few JNI functions may run with an exception pending: take it out, look, and
        // throw the same object again if it is an Error.
        let pending: Option<JThrowable<'_>> = env.exception_occurred().ok().filter(|t| !t.is_null());
        let _ = env.exception_clear();
        if let Some(t) = pending {
            if env.is_instance_of(&t, "java/lang/Error").unwrap_or(true) {
                let _ = env.throw(t);
                return std::ptr::null_mut();
            }
        }
    }
    let _ = env.throw_new(ASSIGNOR_EXCEPTION, message);
    std::ptr::null_mut()
}

fn int_array(env: &mut JNIEnv<'_>, values: &[i32]) -> Result<jintArray, Failure> {
    let n = i32::try_from(values.len()).map_err(|_| Failure("kassign: too many partitions".into()))?;
    let out = env.new_int_array(n)?;
    env.set_int_array_region(&out, 0, values)?;
    Ok(out.into_raw())
}

/// `private static native int[] assign0(char[] memberIdChars, int[] memberIdEnds,
/// int[] memberRacks, char[] rackNameChars, int[] rackNameEnds, char[] topicChars, int[] topicEnds,
/// int[] partitionCounts, int[] subOffsets, int[] subTopics, int[] ownedOffsets,
/// int[] ownedTopics, int[] ownedPartitions, int[] partitionRackOffsets, int[] partitionRacks,
/// byte[] assignable, int[] memberCounts, int[] free, long budgetNanos)`: the group's arrays as
/// [`FlatGroup`] documents them (null = empty), each string array as its characters and end
/// offsets (`NativeAssignor.assign` joins them).
///
/// `memberCounts` and `free` choose the call, both null or both given:
/// * null: the full read, the owner of every partition
///   ([`kassign_core::server::kassign::assign_flat_until`]'s answer);
/// * given: the counts-first path
///   ([`kassign_core::server::kassign::assign_flat_counted`]'s answer: k partitions, then their k
///   owners), or null when every member must be read after all (then call again without them).
///   On this path `memberIdChars`/`memberIdEnds` may be null when `memberHashes` is given: then
///   the answer may be `{NEED_IDS}` (one element, where a counted answer has an even number):
///   call again with the ids.
///
/// Both go through [`assign_flat_ids`].
///
/// `budgetNanos`: the time left for this assignment (the deadline is now plus that), or negative
/// for none.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_kassign_broker_NativeAssignor_assign0<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    member_id_chars: JCharArray<'local>,
    member_id_ends: JIntArray<'local>,
    member_hashes: JIntArray<'local>,
    member_racks: JIntArray<'local>,
    rack_name_chars: JCharArray<'local>,
    rack_name_ends: JIntArray<'local>,
    topic_chars: JCharArray<'local>,
    topic_ends: JIntArray<'local>,
    partition_counts: JIntArray<'local>,
    sub_offsets: JIntArray<'local>,
    sub_topics: JIntArray<'local>,
    owned_offsets: JIntArray<'local>,
    owned_topics: JIntArray<'local>,
    owned_partitions: JIntArray<'local>,
    partition_rack_offsets: JIntArray<'local>,
    partition_racks: JIntArray<'local>,
    assignable: JByteArray<'local>,
    member_counts: JIntArray<'local>,
    free: JIntArray<'local>,
    budget_nanos: jlong,
) -> jintArray {
    let deadline = u64::try_from(budget_nanos)
        .ok()
        .map(|n| Instant::now() + Duration::from_nanos(n));
    guarded(&mut env, |env| {
        let counting = match (member_counts.is_null(), free.is_null()) {
            (true, true) => false,
            (false, false) => true,
            _ => {
                return Err(Failure(
                    "kassign: memberCounts and free go together: both null (the full read) or both given".into(),
                ))
            }
        };
        // Without the ids (null: the counted call, the hashes given), the members are the hashes.
        let with_ids = !member_id_ends.is_null();
        if !with_ids && (!counting || member_hashes.is_null()) {
            return Err(Failure(
                "kassign: memberIds may be null only with memberCounts, free and memberHashes".into(),
            ));
        }
        // Lengths first: nothing is copied from a group over the caps.
        let lengths = Lengths {
            member_ids: len(env, if with_ids { &member_id_ends } else { &member_hashes })?,
            member_id_chars: len(env, &member_id_chars)?,
            member_hashes: len(env, &member_hashes)?,
            member_racks: len(env, &member_racks)?,
            rack_names: len(env, &rack_name_ends)?,
            rack_name_chars: len(env, &rack_name_chars)?,
            topics: len(env, &topic_ends)?,
            topic_chars: len(env, &topic_chars)?,
            partition_counts: len(env, &partition_counts)?,
            sub_offsets: len(env, &sub_offsets)?,
            sub_topics: len(env, &sub_topics)?,
            owned_offsets: len(env, &owned_offsets)?,
            owned_topics: len(env, &owned_topics)?,
            owned_partitions: len(env, &owned_partitions)?,
            partition_rack_offsets: len(env, &partition_rack_offsets)?,
            partition_racks: len(env, &partition_racks)?,
            assignable: len(env, &assignable)?,
            member_counts: if counting {
                Some(len(env, &member_counts)?)
            } else {
                None
            },
            free: if counting { Some(len(env, &free)?) } else { None },
        };
        lengths.check()?;
        let counts = ints(env, &partition_counts)?;
        let total = partition_total(&counts)?;
        lengths.check_with_total(total)?;
        probe(&lengths, total)?;
        let counted = if counting {
            Some((ints(env, &member_counts)?, ints(env, &free)?))
        } else {
            None
        };
        let ids = if with_ids {
            Some(flat_ids(env, &member_id_chars, &member_id_ends)?)
        } else {
            None
        };
        let hashes = hashes(env, &member_hashes)?;
        let mut arrays = Arrays {
            member_racks: ints(env, &member_racks)?,
            rack_names: strings(env, "rackNames", &rack_name_chars, &rack_name_ends)?,
            topics: strings(env, "topics", &topic_chars, &topic_ends)?,
            partition_counts: counts,
            sub_offsets: ints(env, &sub_offsets)?,
            sub_topics: ints(env, &sub_topics)?,
            owned_offsets: ints(env, &owned_offsets)?,
            owned_topics: ints(env, &owned_topics)?,
            owned_partitions: ints(env, &owned_partitions)?,
            partition_rack_offsets: ints(env, &partition_rack_offsets)?,
            partition_racks: ints(env, &partition_racks)?,
            assignable: bytes(env, &assignable)?,
        };
        let counted = counted
            .as_ref()
            .map(|(counts, free)| (counts.as_slice(), free.as_slice()));
        match assign_flat_ids(arrays.group(), ids.as_ref(), hashes.as_deref(), counted, deadline)? {
            FlatAnswer::Owners(owners) => int_array(env, &owners),
            FlatAnswer::ReadAll => Ok(std::ptr::null_mut()),
            FlatAnswer::NeedIds => int_array(env, &[NEED_IDS]),
        }
    })
}

/// `private static native int[] countsFirst0(char[] memberIdChars, int[] memberIdEnds,
/// int[] memberHashes, char[] topicChars, int[] topicEnds, int[] partitionCounts, int[] subOffsets, int[] subTopics,
/// int[] memberCounts, int[] free)`: [`counts_first`], the first call of the counts-first path.
/// Returns null when every member must be read ([`CountsFirst::ReadAll`]), `{1, read...}` (one
/// flag per member, 1 = read its current target, then call `assign0` with the counts),
/// `{0, at..., owners...}`: the answer, as `assign0`'s counts-first answer (`free` given: the
/// caller found no replica racks and every partition assignable; null otherwise), or `{2}`: call
/// again with the member ids (null ids, and the answer depends on their order). The lengths are
/// judged before anything is copied, as for `assign0`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_kassign_broker_NativeAssignor_countsFirst0<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    member_id_chars: JCharArray<'local>,
    member_id_ends: JIntArray<'local>,
    member_hashes: JIntArray<'local>,
    topic_chars: JCharArray<'local>,
    topic_ends: JIntArray<'local>,
    partition_counts: JIntArray<'local>,
    sub_offsets: JIntArray<'local>,
    sub_topics: JIntArray<'local>,
    member_counts: JIntArray<'local>,
    free: JIntArray<'local>,
) -> jintArray {
    guarded(&mut env, |env| {
        // Without the ids (null), the members are the counts.
        let with_ids = !member_id_ends.is_null();
        let hash_count = len(env, &member_hashes)?;
        let lengths = Lengths::counts_rule(
            if with_ids {
                len(env, &member_id_ends)?
            } else {
                len(env, &member_counts)?
            },
            len(env, &member_id_chars)?,
            hash_count,
            len(env, &topic_ends)?,
            len(env, &topic_chars)?,
            len(env, &partition_counts)?,
            len(env, &sub_offsets)?,
            len(env, &sub_topics)?,
            len(env, &member_counts)?,
            len(env, &free)?,
        );
        lengths.check()?;
        let counts = ints(env, &partition_counts)?;
        let total = partition_total(&counts)?;
        lengths.check_with_total(total)?;
        probe(&lengths, total)?;
        let offsets = ints(env, &sub_offsets)?;
        let topics = ints(env, &sub_topics)?;
        let members = ints(env, &member_counts)?;
        let free = if free.is_null() { None } else { Some(ints(env, &free)?) };
        let names = strings(env, "topics", &topic_chars, &topic_ends)?;
        let ids = if with_ids {
            Some(flat_ids(env, &member_id_chars, &member_id_ends)?)
        } else {
            None
        };
        let hashes = hashes(env, &member_hashes)?;
        let answer = counts_first(
            &names,
            &counts,
            &offsets,
            &topics,
            &members,
            free.as_deref(),
            MemberKeys {
                hashes: hashes.as_deref(),
                ids: ids.as_ref(),
            },
        )?;
        let out: Vec<i32> = match answer {
            CountsFirst::ReadAll => return Ok(std::ptr::null_mut()),
            CountsFirst::Read(read) => std::iter::once(1).chain(read.iter().map(|&r| r as i32)).collect(),
            CountsFirst::Dealt(dealt) => std::iter::once(0).chain(dealt).collect(),
            CountsFirst::NeedIds => vec![NEED_IDS],
        };
        int_array(env, &out)
    })
}

/// `static native long copiedElements()`: [`COPIED`].
#[no_mangle]
pub extern "system" fn Java_kassign_broker_NativeAssignor_copiedElements<'local>(
    _env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jlong {
    COPIED.load(Ordering::Relaxed) as jlong
}

/// `static native String version()`: the crate version, so the Java side can check at load time
/// that the library it loaded is the one it was built with.
#[no_mangle]
pub extern "system" fn Java_kassign_broker_NativeAssignor_version<'local>(
    env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jstring {
    match env.new_string(env!("CARGO_PKG_VERSION")) {
        Ok(s) => s.into_raw(),
        Err(_) => std::ptr::null_mut(),
    }
}
