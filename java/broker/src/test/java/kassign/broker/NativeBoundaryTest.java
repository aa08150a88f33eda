package kassign.broker;

import java.util.Arrays;
import java.util.Map;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a group can send through the JNI boundary: over the caps or malformed, it is a
 * {@link PartitionAssignorException} for that group, the caps are judged before anything is copied
 * into native memory, and the JVM goes on assigning.
 */
class NativeBoundaryTest {

    static {
        NativeLibrary.load();
    }

    /** One call's arrays; the test changes a few and calls {@link #assign}. */
    private static final class Call {
        String[] memberIds = {"m0", "m1"};
        int[] memberRacks = {-1, -1};
        String[] rackNames = {};
        String[] topics = {"t"};
        int[] partitionCounts = {4};
        int[] subOffsets = {};
        int[] subTopics = {0};
        int[] ownedOffsets = {0, 0, 0};
        int[] ownedTopics = {};
        int[] ownedPartitions = {};
        int[] partitionRackOffsets;
        int[] partitionRacks;
        byte[] assignable;
        long budgetNanos = -1;

        int[] assign() {
            return NativeAssignor.assign(NativeAssignor.Joined.of("memberIds", memberIds), null, memberRacks, rackNames, topics, partitionCounts, subOffsets,
                subTopics, ownedOffsets, ownedTopics, ownedPartitions, partitionRackOffsets, partitionRacks,
                assignable, null, null, budgetNanos);
        }
    }

    /** The call fails with a PartitionAssignorException naming {@code what}; returns the elements it copied. */
    private static long refused(Call c, String what) {
        long before = NativeAssignor.copiedElements();
        PartitionAssignorException e = assertThrows(PartitionAssignorException.class, c::assign);
        assertTrue(e.getMessage().contains(what), e.getMessage());
        return NativeAssignor.copiedElements() - before;
    }

    /** The JVM and the library still assign a valid group. */
    private static void stillAssigns() {
        assertEquals(4, Arrays.stream(new Call().assign()).filter(o -> o == 0 || o == 1).count());
    }

    @Test
    void groupsOverTheCapsAreRefusedBeforeTheirArraysAreCopied() {
        // Members over the cap: judged from the arrays' lengths, nothing copied.
        Call c = new Call();
        int m = 500_001;
        c.memberIds = new String[m];
        Arrays.fill(c.memberIds, "m");
        c.memberRacks = new int[m];
        c.ownedOffsets = new int[m + 1];
        assertEquals(0, refused(c, "members: 500001 exceeds the broker's maximum"));
        // A member id longer than the cap allows on average.
        c = new Call();
        c.memberIds = new String[] {"m".repeat(600)};
        c.memberRacks = new int[1];
        c.ownedOffsets = new int[2];
        assertEquals(0, refused(c, "member id characters"));
        // 3M partitions (over the 2M cap) with a current target of 1.9M pairs, within the pairs' own
        // cap: only the two partition counts are copied before the total is refused, never the
        // 3.8M elements of the current target.
        c = new Call();
        c.topics = new String[] {"a", "b"};
        c.partitionCounts = new int[] {1_500_000, 1_500_000};
        c.subTopics = new int[] {0, 1};
        c.ownedTopics = new int[1_900_000];
        c.ownedPartitions = new int[1_900_000];
        c.ownedOffsets = new int[] {0, 1_900_000, 1_900_000};
        assertEquals(2, refused(c, "partitions: 3000000 exceeds the broker's maximum of 2000000"));
        // Replica racks beyond 4 per partition on average: refused after the counts only.
        c = new Call();
        c.rackNames = new String[] {"r"};
        c.partitionRackOffsets = new int[] {0, 0, 0, 0, 20};
        c.partitionRacks = new int[20];
        assertEquals(1, refused(c, "replica racks"));
        stillAssigns();
    }

    @Test
    void malformedGroupsAreAssignorExceptions() {
        Call c = new Call();
        c.partitionCounts = new int[] {4, 4};
        assertEquals(0, refused(c, "partition_counts: expected 1 entries, got 2"));
        c = new Call();
        c.ownedOffsets = new int[] {0, 2, 1};
        c.ownedTopics = new int[] {0};
        c.ownedPartitions = new int[] {0};
        refused(c, "owned_offsets");
        c = new Call();
        c.ownedTopics = new int[] {0};
        c.ownedPartitions = new int[] {};
        refused(c, "owned_partitions");
        c = new Call();
        c.subTopics = new int[] {7};
        refused(c, "sub_topics: index 7");
        c = new Call();
        c.memberRacks = new int[] {0, -1};
        refused(c, "member_racks: index 0");
        c = new Call();
        c.rackNames = new String[] {"r"};
        c.partitionRackOffsets = new int[] {0, 1, 1, 1};
        c.partitionRacks = new int[] {0};
        refused(c, "partition_rack_offsets: expected 5 entries");
        c = new Call();
        c.rackNames = new String[] {"r"};
        c.partitionRackOffsets = new int[] {0, 1, 1, 1, 1};
        c.partitionRacks = new int[] {3};
        refused(c, "partition_racks: index 3");
        c = new Call();
        c.assignable = new byte[3];
        refused(c, "assignable: expected 4 entries");
        c = new Call();
        c.partitionCounts = new int[] {Integer.MIN_VALUE};
        refused(c, "partition count must be >= 0");
        stillAssigns();
    }

    @Test
    void anExpiredBudgetStillGivesAValidBalancedAssignment() {
        // Homogeneous, with racks: every member gets 3 or 4 of 10 partitions.
        Call c = new Call();
        c.memberIds = new String[] {"m0", "m1", "m2"};
        c.memberRacks = new int[] {0, 1, 0};
        c.rackNames = new String[] {"a", "b"};
        c.partitionCounts = new int[] {10};
        c.ownedOffsets = new int[4];
        c.partitionRackOffsets = new int[11];
        c.partitionRacks = new int[10];
        for (int p = 0; p < 10; p++) {
            c.partitionRackOffsets[p + 1] = p + 1;
            c.partitionRacks[p] = p % 2;
        }
        c.budgetNanos = 0;
        int[] loads = new int[3];
        for (int o : c.assign()) loads[o]++;
        Arrays.sort(loads);
        assertEquals("[3, 3, 4]", Arrays.toString(loads));
        // Heterogeneous: every partition to one of its subscribers, loads as balanced as they can be.
        c = new Call();
        c.memberIds = new String[] {"m0", "m1", "m2"};
        c.memberRacks = new int[] {-1, -1, -1};
        c.topics = new String[] {"a", "b"};
        c.partitionCounts = new int[] {6, 3};
        c.subOffsets = new int[] {0, 2, 3, 4};
        c.subTopics = new int[] {0, 1, 0, 1};
        c.ownedOffsets = new int[4];
        c.budgetNanos = 0;
        int[] owners = c.assign();
        loads = new int[3];
        for (int f = 0; f < 9; f++) {
            int o = owners[f];
            assertTrue(f < 6 ? o == 0 || o == 1 : o == 0 || o == 2, "partition " + f + " to " + o);
            loads[o]++;
        }
        assertEquals("[3, 3, 3]", Arrays.toString(loads));
    }

    @Test
    void theBudgetIsABrokerSetting() {
        KassignAssignor a = new KassignAssignor();
        assertEquals(KassignAssignor.BUDGET_MS_DEFAULT * 1_000_000L, a.budgetNanos());
        a.configure(Map.of("broker.id", "1"));
        assertEquals(KassignAssignor.BUDGET_MS_DEFAULT * 1_000_000L, a.budgetNanos());
        a.configure(Map.of(KassignAssignor.BUDGET_MS_CONFIG, "250"));
        assertEquals(250_000_000L, a.budgetNanos());
        a.configure(Map.of(KassignAssignor.BUDGET_MS_CONFIG, 0));
        assertEquals(-1, a.budgetNanos());
        for (Object bad : new Object[] {"-1", "soon", "1.5"}) {
            assertThrows(ConfigException.class, () -> a.configure(Map.of(KassignAssignor.BUDGET_MS_CONFIG, bad)));
        }
    }
}
