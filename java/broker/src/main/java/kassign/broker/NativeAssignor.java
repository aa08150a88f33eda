package kassign.broker;

import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;

/**
 * The native entry points of {@code libkassign} (rust/jni/src/). Call {@link NativeLibrary#load()}
 * before using them.
 */
final class NativeAssignor {

    private NativeAssignor() {}

    /**
     * One assignment, all arrays flat (see {@code rust/core/src/server/kassign.rs}, {@code FlatGroup};
     * an empty {@code subOffsets}: every member subscribes to all of {@code subTopics}).
     *
     * <p>{@code memberCounts} and {@code free} choose the call, both null or both given:
     * <ul>
     *   <li>null, the full read ({@code assign_flat}): returns the owner of every partition in topic
     *       order (member index or -1);
     *   <li>given, the counts-first path ({@code assign_flat_counted}): the owned arrays list only
     *       the members {@link #membersToRead} said to read; {@code memberCounts[i]} is member i's
     *       current target size (or -1), {@code free} lists (ascending flat indexes) the partitions
     *       in no member's current target. Returns the owners of every partition but those the
     *       counted members keep: k partitions (ascending), then their k owners; or null when the
     *       counts do not add up (then read every member and call again with both null).
     * </ul>
     *
     * <p>{@code budgetNanos}: the time left for this assignment, or negative for no deadline. Past
     * it the core takes its fast balanced path (docs/broker.md, "Time budget").
     *
     * @throws org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException on bad
     *     input or an internal error (a Rust panic never reaches the JVM)
     */
    static int[] assign(
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
        byte[] assignable,
        int[] memberCounts,
        int[] free,
        long budgetNanos) {
        // Each string array crosses as one char[] and the end offset of every string, so the native
        // side copies it with one call instead of two JNI calls per string.
        int[] memberEnds = memberIds == null ? null : new int[memberIds.length];
        int[] rackEnds = rackNames == null ? null : new int[rackNames.length];
        int[] topicEnds = topics == null ? null : new int[topics.length];
        return assign0(chars("memberIds", memberIds, memberEnds), memberEnds, memberRacks,
            chars("rackNames", rackNames, rackEnds), rackEnds, chars("topics", topics, topicEnds), topicEnds,
            partitionCounts, subOffsets, subTopics, ownedOffsets, ownedTopics, ownedPartitions,
            partitionRackOffsets, partitionRacks, assignable, memberCounts, free, budgetNanos);
    }

    /**
     * The core's counts-first rule ({@code members_to_read}): for each member, whether its current
     * target must be read element by element (1) or its size stands for it (0); null when every
     * member must be read. {@code memberCounts[i]}: the member's current target size, or -1. The
     * member ids cross as for {@link #assign}; the core reads them only when the rule needs their
     * order (some member holding one more than the quota, and fewer extra slots than such members).
     */
    static byte[] membersToRead(String[] memberIds, int[] partitionCounts, int[] subOffsets, int[] subTopics,
            int[] memberCounts) {
        int[] memberEnds = memberIds == null ? null : new int[memberIds.length];
        return membersToRead0(chars("memberIds", memberIds, memberEnds), memberEnds, partitionCounts, subOffsets,
            subTopics, memberCounts);
    }

    /** The strings' characters back to back; {@code ends[i]} receives where string i ends. */
    private static char[] chars(String name, String[] strings, int[] ends) {
        if (strings == null) return null;
        long total = 0;
        for (int i = 0; i < strings.length; i++) {
            if (strings[i] == null) throw new PartitionAssignorException("kassign: " + name + "[" + i + "] is null");
            total += strings[i].length();
        }
        if (total > Integer.MAX_VALUE - 8) throw new PartitionAssignorException("kassign: " + name + " too long");
        char[] out = new char[(int) total];
        int at = 0;
        for (int i = 0; i < strings.length; i++) {
            String s = strings[i];
            s.getChars(0, s.length(), out, at);
            at += s.length();
            ends[i] = at;
        }
        return out;
    }

    private static native int[] assign0(
        char[] memberIdChars,
        int[] memberIdEnds,
        int[] memberRacks,
        char[] rackNameChars,
        int[] rackNameEnds,
        char[] topicChars,
        int[] topicEnds,
        int[] partitionCounts,
        int[] subOffsets,
        int[] subTopics,
        int[] ownedOffsets,
        int[] ownedTopics,
        int[] ownedPartitions,
        int[] partitionRackOffsets,
        int[] partitionRacks,
        byte[] assignable,
        int[] memberCounts,
        int[] free,
        long budgetNanos);

    private static native byte[] membersToRead0(char[] memberIdChars, int[] memberIdEnds, int[] partitionCounts,
        int[] subOffsets, int[] subTopics, int[] memberCounts);

    /**
     * Array elements copied from Java into native memory since the library was loaded, over all
     * calls (a diagnostic: the tests prove with it that a group over the caps is refused before
     * anything is copied).
     */
    static native long copiedElements();

    /** The version of the crate the library was built from. */
    static native String version();
}
