package kassign.broker;

/**
 * The native entry points of {@code libkassign} (rust/src/jni/). Call {@link NativeLibrary#load()}
 * before using them.
 */
final class NativeAssignor {

    private NativeAssignor() {}

    /**
     * One assignment, all arrays flat (see {@code rust/src/server/kassign.rs}, {@code FlatGroup}):
     * returns the owner of every partition in topic order (member index or -1).
     *
     * @throws org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException on bad
     *     input or an internal error (a Rust panic never reaches the JVM)
     */
    static native int[] assign(
        String[] memberIds,
        int[] memberRacks,
        String[] rackNames,
        String[] topics,
        int[] partitionCounts,
        int[] subOffsets,
        int[] subTopics,
        int[] ownedOffsets,
        int[] ownedTopics,
        int[] ownedPartitions,
        int[] partitionRackOffsets,
        int[] partitionRacks,
        byte[] assignable);

    /** The version of the crate the library was built from. */
    static native String version();
}
