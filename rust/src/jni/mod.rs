//! The JNI boundary of the broker-side assignor (`java/broker/`, class
//! `kassign.broker.NativeAssignor`): Java arrays in, the owner array out, one call per `assign`.
//!
//! Only conversion happens here: the arrays are copied into Rust, handed to
//! [`crate::server::kassign::assign_flat`] (which checks them), and the owners copied back. An
//! input error or a panic becomes a Java
//! `org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException`; nothing unwinds
//! into the JVM. There is no global state: concurrent calls from several coordinator threads
//! share nothing.

use std::panic::{catch_unwind, AssertUnwindSafe};

use jni::objects::{JByteArray, JCharArray, JClass, JIntArray};
use jni::sys::{jintArray, jstring};
use jni::JNIEnv;

use crate::server::kassign::{assign_flat, FlatGroup};

const ASSIGNOR_EXCEPTION: &str = "org/apache/kafka/coordinator/group/api/assignor/PartitionAssignorException";

/// A failure to report to Java: the message of a `PartitionAssignorException`.
struct Failure(String);

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Failure {
        Failure(format!("kassign: JNI error: {e}"))
    }
}

fn ints(env: &mut JNIEnv<'_>, arr: &JIntArray<'_>) -> Result<Vec<i32>, Failure> {
    if arr.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(arr)? as usize;
    let mut buf = vec![0i32; n];
    env.get_int_array_region(arr, 0, &mut buf)?;
    Ok(buf)
}

fn bytes(env: &mut JNIEnv<'_>, arr: &JByteArray<'_>) -> Result<Vec<u8>, Failure> {
    if arr.is_null() {
        return Ok(Vec::new());
    }
    Ok(env.convert_byte_array(arr)?)
}

/// Strings that cross as their characters back to back (`chars`, UTF-16) and the end offset of
/// each (`ends`): two bulk copies, however many strings. Offsets are checked (non-decreasing,
/// within `chars`); a lone surrogate becomes U+FFFD.
fn strings(
    env: &mut JNIEnv<'_>,
    name: &str,
    chars: &JCharArray<'_>,
    ends: &JIntArray<'_>,
) -> Result<Vec<String>, Failure> {
    let ends = ints(env, ends)?;
    let buf = if chars.is_null() {
        Vec::new()
    } else {
        let n = env.get_array_length(chars)? as usize;
        let mut buf = vec![0u16; n];
        env.get_char_array_region(chars, 0, &mut buf)?;
        buf
    };
    let mut out = Vec::with_capacity(ends.len());
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
        out.push(String::from_utf16_lossy(&buf[start..end]));
        start = end;
    }
    Ok(out)
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// `private static native int[] assign0(char[] memberIdChars, int[] memberIdEnds,
/// int[] memberRacks, char[] rackNameChars, int[] rackNameEnds, char[] topicChars, int[] topicEnds,
/// int[] partitionCounts, int[] subOffsets, int[] subTopics, int[] ownedOffsets,
/// int[] ownedTopics, int[] ownedPartitions, int[] partitionRackOffsets, int[] partitionRacks,
/// byte[] assignable)`; the arrays as [`FlatGroup`] documents them (null = empty), each string
/// array as its characters and end offsets (`NativeAssignor.assign` joins them).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_kassign_broker_NativeAssignor_assign0<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    member_id_chars: JCharArray<'local>,
    member_id_ends: JIntArray<'local>,
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
) -> jintArray {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<jintArray, Failure> {
        let member_racks = ints(&mut env, &member_racks)?;
        let partition_counts = ints(&mut env, &partition_counts)?;
        let sub_offsets = ints(&mut env, &sub_offsets)?;
        let sub_topics = ints(&mut env, &sub_topics)?;
        let owned_offsets = ints(&mut env, &owned_offsets)?;
        let owned_topics = ints(&mut env, &owned_topics)?;
        let owned_partitions = ints(&mut env, &owned_partitions)?;
        let partition_rack_offsets = ints(&mut env, &partition_rack_offsets)?;
        let partition_racks = ints(&mut env, &partition_racks)?;
        let assignable = bytes(&mut env, &assignable)?;
        let group = FlatGroup {
            member_ids: strings(&mut env, "memberIds", &member_id_chars, &member_id_ends)?,
            member_racks: &member_racks,
            rack_names: strings(&mut env, "rackNames", &rack_name_chars, &rack_name_ends)?,
            topics: strings(&mut env, "topics", &topic_chars, &topic_ends)?,
            partition_counts: &partition_counts,
            sub_offsets: &sub_offsets,
            sub_topics: &sub_topics,
            owned_offsets: &owned_offsets,
            owned_topics: &owned_topics,
            owned_partitions: &owned_partitions,
            partition_rack_offsets: &partition_rack_offsets,
            partition_racks: &partition_racks,
            assignable: &assignable,
        };
        let owners = assign_flat(group).map_err(|e| Failure(format!("kassign: {e}")))?;
        let n = i32::try_from(owners.len()).map_err(|_| Failure("kassign: too many partitions".into()))?;
        let out = env.new_int_array(n)?;
        env.set_int_array_region(&out, 0, &owners)?;
        Ok(out.into_raw())
    }));
    let message = match result {
        Ok(Ok(arr)) => return arr,
        Ok(Err(Failure(msg))) => msg,
        Err(p) => format!(
            "kassign: internal error (a bug, please report it): {}",
            panic_message(&*p)
        ),
    };
    // A pending Java exception (from a failed JNI call) is replaced by the assignor's own.
    if env.exception_check().unwrap_or(false) {
        let _ = env.exception_clear();
    }
    let _ = env.throw_new(ASSIGNOR_EXCEPTION, message);
    std::ptr::null_mut()
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
