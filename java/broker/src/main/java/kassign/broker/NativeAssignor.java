package kassign.broker;

import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;

/**
 * The native entry points of {@code libkassign} (rust/jni/src/). Call {@link NativeLibrary#load()}
 * before using them.
 */
final class NativeAssignor {

    private NativeAssignor() {}

    /**
     * Whether a native answer is {@code {2}}: call again with the member ids ({@link #countsFirst}
     * and {@link #assign}'s counted call, made without them; {@code NEED_IDS} in rust/jni/src/lib.rs).
     */
    static boolean needsIds(int[] answer) {
        return answer != null && answer.length == 1 && answer[0] == 2;
    }

    /**
     * One assignment, all arrays flat (see {@code rust/core/src/server/kassign.rs}, {@code FlatGroup};
     * an empty {@code subOffsets}: every member subscribes to all of {@code subTopics}).
     *
     * <p>{@code memberCounts} and {@code free} choose the call, both null or both given:
     * <ul>
     *   <li>null, the full read ({@code assign_flat}): returns the owner of every partition in topic
     *       order (member index or -1);
     *   <li>given, the counts-first path ({@code assign_flat_counted}): the owned arrays list only
     *       the members {@link #countsFirst} said to read; {@code memberCounts[i]} is member i's
     *       current target size (or -1), {@code free} lists (ascending flat indexes) the partitions
     *       in no member's current target. Returns the owners of every partition but those the
     *       counted members keep: k partitions (ascending), then their k owners; or null when the
     *       counts do not add up (then read every member and call again with both null).
     * </ul>
     *
     * <p>{@code memberIds} may be null on the counts-first path when {@code memberHashes} is
     * given: the answer is then the one above, or {@code {2}} (one element, where the counted
     * answer has an even number): call again with the member ids (their order decides between
     * members whose hashes tie, or the group must be interned).
     *
     * <p>{@code memberHashes}: each member id's {@link String#hashCode()}; the core orders members
     * by it, then by id (docs/broker.md, "Ties"), so a tie needs the ids only where two hashes are
     * equal. Null: the core computes them from the ids.
     *
     * <p>{@code budgetNanos}: the time left for this assignment, or negative for no deadline. Past
     * it the core takes its fast balanced path (docs/broker.md, "Time budget").
     *
     * @throws org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException on bad
     *     input or an internal error (a Rust panic never reaches the JVM)
     */
    static int[] assign(
        Joined memberIds,
        int[] memberHashes,
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
        Joined racks = Joined.of("rackNames", rackNames);
        Joined names = Joined.of("topics", topics);
        return assign0(memberIds == null ? null : memberIds.chars, memberIds == null ? null : memberIds.ends,
            memberHashes, memberRacks, racks == null ? null : racks.chars, racks == null ? null : racks.ends,
            names == null ? null : names.chars, names == null ? null : names.ends, partitionCounts, subOffsets,
            subTopics, ownedOffsets, ownedTopics, ownedPartitions, partitionRackOffsets, partitionRacks, assignable,
            memberCounts, free, budgetNanos);
    }

    /**
     * The first call of the counts-first path ({@code counts_first} in rust/core/src/server/kassign.rs):
     * the core's rule ({@code members_to_read}) says, for each member, whether its current target
     * must be read element by element or its size stands for it; when nobody's must be read and
     * {@code free} is given, the core deals the group in the same call. {@code memberCounts[i]}:
     * the member's current target size, or -1. {@code free}: the partitions in no member's current
     * target (ascending flat indexes), given only when the group has no replica racks and every
     * partition is assignable; null otherwise. {@code memberHashes}: as for {@link #assign}.
     * {@code memberIds} may be null: the core reads the ids only where the answer depends on the
     * order of members whose hashes are equal (or on any order, when the hashes are null too). Returns null when every member must be
     * read; {@code {1, flags...}} (one per member, 1: read it, then call {@link #assign} with the
     * counts); {@code {0, at..., owners...}}, the answer as {@link #assign}'s counts-first answer;
     * or {@code {2}}: call again with the member ids (only when they were null).
     */
    static int[] countsFirst(Joined memberIds, int[] memberHashes, String[] topics, int[] partitionCounts,
            int[] subOffsets, int[] subTopics, int[] memberCounts, int[] free) {
        Joined names = Joined.of("topics", topics);
        return countsFirst0(memberIds == null ? null : memberIds.chars, memberIds == null ? null : memberIds.ends,
            memberHashes, names == null ? null : names.chars, names == null ? null : names.ends, partitionCounts, subOffsets,
            subTopics, memberCounts, free);
    }

    /**
     * Strings as they cross: their characters back to back and the end offset of each, so the
     * native side copies them with one call instead of two JNI calls per string.
     */
    record Joined(char[] chars, int[] ends) {
        /** The strings joined; null for null. */
        static Joined of(String name, String[] strings) {
            if (strings == null) return null;
            long total = 0;
            for (int i = 0; i < strings.length; i++) {
                if (strings[i] == null) throw new PartitionAssignorException("kassign: " + name + "[" + i + "] is null");
                total += strings[i].length();
            }
            if (total > Integer.MAX_VALUE - 8) throw new PartitionAssignorException("kassign: " + name + " too long");
            char[] out = new char[(int) total];
            int[] ends = new int[strings.length];
            int at = 0;
            for (int i = 0; i < strings.length; i++) {
                String s = strings[i];
                s.getChars(0, s.length(), out, at);
                at += s.length();
                ends[i] = at;
            }
            return new Joined(out, ends);
        }
    }

    private static native int[] assign0(
        char[] memberIdChars,
        int[] memberIdEnds,
        int[] memberHashes,
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

    private static native int[] countsFirst0(char[] memberIdChars, int[] memberIdEnds, int[] memberHashes,
        char[] topicChars, int[] topicEnds, int[] partitionCounts, int[] subOffsets, int[] subTopics, int[] memberCounts, int[] free);

    /**
     * Array elements copied from Java into native memory since the library was loaded, over all
     * calls (a diagnostic: the tests prove with it that a group over the caps is refused before
     * anything is copied).
     */
    static native long copiedElements();

    /** The version of the crate the library was built from. */
    static native String version();
}
