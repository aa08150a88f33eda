package kassign.broker;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KassignAssignorTest {

    private final KassignAssignor assignor = new KassignAssignor();

    @Test
    void registeredForServiceLoaderUnderItsOwnName() {
        List<String> names = new ArrayList<>();
        for (ConsumerGroupPartitionAssignor a : ServiceLoader.load(ConsumerGroupPartitionAssignor.class)) {
            names.add(a.name());
        }
        assertEquals(List.of("kassign"), names);
        assertEquals(NativeLibrary.jarVersion(), NativeAssignor.version());
    }

    @Test
    void freshGroupIsBalanced() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(5), b = g.topic(5);
        g.member("m1", null, a, b).member("m2", null, a, b).member("m3", null, a, b);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        List<Integer> loads = new ArrayList<>();
        for (String m : g.members.keySet()) loads.add(FakeGroup.load(r, m));
        loads.sort(null);
        assertEquals(List.of(3, 3, 4), loads);
    }

    /**
     * Member ids cross as UTF-16 units; ASCII ones take a direct way, others are decoded (a lone
     * surrogate becomes U+FFFD), and each member's {@link String#hashCode()} crosses beside them. A
     * fresh group is dealt in the core's member order, by hash (as an unsigned number), then by id:
     * "b" (98) &lt; "\u00e9" (233) &lt; "a\uD800" (97 * 31 + 0xD800) &lt; "\u6210\u5458"
     * (0x6210 * 31 + 0x5458), each id arriving whole and distinct.
     */
    @Test
    void nonAsciiMemberIdsAreDealtInHashOrder() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(4);
        g.member("\u6210\u5458", null, a).member("b", null, a).member("\u00e9", null, a).member("a\uD800", null, a);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        assertEquals(Map.of(a, Set.of(0)), r.members().get("b").partitions());
        assertEquals(Map.of(a, Set.of(1)), r.members().get("\u00e9").partitions());
        assertEquals(Map.of(a, Set.of(2)), r.members().get("a\uD800").partitions());
        assertEquals(Map.of(a, Set.of(3)), r.members().get("\u6210\u5458").partitions());
    }

    @Test
    void balancedCurrentTargetIsKept() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(4);
        g.member("m1", null, a).member("m2", null, a).owns("m1", a, 1, 3).owns("m2", a, 0, 2);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        assertEquals(Map.of(a, Set.of(1, 3)), r.members().get("m1").partitions());
        assertEquals(Map.of(a, Set.of(0, 2)), r.members().get("m2").partitions());
    }

    /**
     * A member that keeps exactly its current target gets the object the group spec gave for it
     * (no new object); a member whose partitions change gets a new one.
     */
    @Test
    void aMemberKeepingItsCurrentTargetGetsItsOwnObjectBack() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(4);
        g.member("m1", null, a).member("m2", null, a).member("m3", null, a).owns("m1", a, 1, 3).owns("m2", a, 0);
        for (boolean countsFirst : new boolean[] {true, false}) {
            GroupAssignment r = KassignAssignor.compute(g, g, countsFirst, null);
            g.assertValid(r);
            assertSame(g.memberAssignment("m1"), r.members().get("m1"));
            assertSame(g.memberAssignment("m2"), r.members().get("m2"));
            assertEquals(Map.of(a, Set.of(2)), r.members().get("m3").partitions());
            assertNotSame(g.memberAssignment("m3"), r.members().get("m3"));
        }
    }

    @Test
    void heterogeneousGroupGetsTheOptimalLoads() {
        // m1 alone on x (4 partitions); everybody on y (2): m1 must not take any of y.
        FakeGroup g = new FakeGroup();
        Uuid x = g.topic(4), y = g.topic(2);
        g.member("m1", null, x, y).member("m2", null, y).member("m3", null, y);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        assertEquals(4, FakeGroup.load(r, "m1"));
        assertEquals(1, FakeGroup.load(r, "m2"));
        assertEquals(1, FakeGroup.load(r, "m3"));
    }

    @Test
    void moreMembersThanPartitions() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(2);
        for (int i = 0; i < 5; i++) g.member("m" + i, null, a);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
    }

    @Test
    void emptySubscriptionsAndEmptyGroup() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(3);
        g.member("idle", null).member("busy", null, a);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        assertEquals(3, FakeGroup.load(r, "busy"));
        FakeGroup empty = new FakeGroup();
        assertEquals(Map.of(), assignor.assign(empty, empty).members());
    }

    @Test
    void deletedTopicInTheCurrentTargetIsDropped() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(2);
        Uuid gone = Uuid.randomUuid(); // deleted since the last assignment: no metadata, nobody subscribes
        g.member("m1", null, a).member("m2", null, a).owns("m1", gone, 0, 1, 2).owns("m2", a, 0, 7);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        assertEquals(Map.of(a, Set.of(0)), r.members().get("m2").partitions());
    }

    @Test
    void unknownTopicIdHasNothingToAssign() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(2);
        Uuid unknown = Uuid.randomUuid(); // subscribed, but the describer does not know it (-1)
        g.member("m1", null, a, unknown).member("m2", null, unknown);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        assertEquals(2, FakeGroup.load(r, "m1"));
        assertEquals(0, FakeGroup.load(r, "m2"));
    }

    @Test
    void subscriptionViewsWhoseSizeCountsMissingTopics() {
        // The coordinator's subscribedTopicIds() is a view over names: size() counts a name that
        // resolves to no topic id, iteration skips it.
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(3);
        Set<Uuid> view = new java.util.AbstractSet<>() {
            public java.util.Iterator<Uuid> iterator() { return List.of(a).iterator(); }
            public int size() { return 2; }
        };
        g.members.put("m1", new FakeGroup.Sub(java.util.Optional.empty(), java.util.Optional.empty(), view));
        g.member("m2", null, a);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
    }

    @Test
    void partitionsThatAreNotAssignableStayUnassigned() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(6);
        g.member("m1", null, a).member("m2", null, a).owns("m1", a, 0, 1, 2);
        g.notAssignable.add(a + ":1");
        g.notAssignable.add(a + ":4");
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        assertEquals(2, FakeGroup.load(r, "m1"));
        assertEquals(2, FakeGroup.load(r, "m2"));
        assertEquals(Map.of(a, Set.of(0, 2)), r.members().get("m1").partitions());
    }

    @Test
    void racksAreMatchedWhenBalanceAllows() {
        FakeGroup g = new FakeGroup();
        Uuid a = g.topic(6);
        String[] racks = {"a", "b", "c"};
        for (int p = 0; p < 6; p++) {
            g.replicaRacks.computeIfAbsent(a, t -> new HashMap<>()).put(p, Set.of(racks[p % 3]));
        }
        g.member("ma", "a", a).member("mb", "b", a).member("mc", "c", a);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        assertEquals(Set.of(0, 3), r.members().get("ma").partitions().get(a));
        assertEquals(Set.of(1, 4), r.members().get("mb").partitions().get(a));
        assertEquals(Set.of(2, 5), r.members().get("mc").partitions().get(a));
    }

    @Test
    void millionPartitionsTenThousandMembers() {
        FakeGroup g = new FakeGroup();
        Uuid[] ts = new Uuid[100];
        for (int t = 0; t < ts.length; t++) ts[t] = g.topic(10_000);
        for (int i = 0; i < 10_000; i++) g.member(String.format("member-%05d", i), null, ts);
        GroupAssignment r = assignor.assign(g, g);
        g.assertValid(r);
        for (String m : g.members.keySet()) assertEquals(100, FakeGroup.load(r, m));
    }

    /** Member ids joined as they cross to the native calls. */
    /** Each member's partitions (the coordinator reads nothing else of a MemberAssignment). */
    private static Map<String, Map<Uuid, Set<Integer>>> plans(GroupAssignment r) {
        Map<String, Map<Uuid, Set<Integer>>> out = new HashMap<>();
        r.members().forEach((id, a) -> out.put(id, a.partitions()));
        return out;
    }

    private static NativeAssignor.Joined ids(String... memberIds) {
        return NativeAssignor.Joined.of("memberIds", memberIds);
    }

    @Test
    void badNativeInputIsAnAssignorException() {
        PartitionAssignorException e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
            ids("m"), null, new int[] {-1}, new String[0], new String[] {"t"}, new int[] {2},
            new int[] {0, 5}, new int[] {0}, new int[] {0, 0}, new int[0], new int[0], null, null, null, null, null, -1));
        assertTrue(e.getMessage().contains("sub_offsets"), e.getMessage());
        assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
            ids("m", "m"), null, new int[] {-1, -1}, new String[0], new String[] {"t"}, new int[] {2},
            new int[] {0, 1, 2}, new int[] {0, 0}, new int[] {0, 0, 0}, new int[0], new int[0], null, null, null,
            null, null, -1));
        assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
            ids("m"), null, new int[] {-1}, new String[0], new String[] {"t"}, new int[] {-3},
            new int[] {0, 1}, new int[] {0}, new int[] {0, 0}, new int[0], new int[0], null, null, null, null, null, -1));
        assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
            ids((String) null), null, new int[] {-1}, new String[0], new String[0], new int[0],
            new int[] {0, 0}, new int[0], new int[] {0, 0}, new int[0], new int[0], null, null, null, null, null, -1));
        // The counts-first calls check their arrays too.
        e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.countsFirst(
            ids("m"), null, new String[] {"t"}, new int[] {2}, new int[] {0, 5}, new int[] {0}, new int[] {1},
            null));
        assertTrue(e.getMessage().contains("sub_offsets"), e.getMessage());
        e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.countsFirst(
            ids("m"), null, new String[] {"t"}, new int[] {2}, new int[0], new int[] {0}, new int[] {1},
            new int[] {1, 0}));
        assertTrue(e.getMessage().contains("free"), e.getMessage());
        e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.countsFirst(
            ids("m"), null, new String[] {"t", "u"}, new int[] {2}, new int[0], new int[] {0}, new int[] {1},
            null));
        assertTrue(e.getMessage().contains("partition_counts"), e.getMessage());
        e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
            ids("m"), null, new int[] {-1}, new String[0], new String[] {"t"}, new int[] {2},
            new int[0], new int[] {0}, new int[] {0, 0}, new int[0], new int[0], null, null,
            null, new int[] {1}, new int[] {1, 1}, -1));
        assertTrue(e.getMessage().contains("free"), e.getMessage());
        e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
            ids("m"), null, new int[] {-1}, new String[0], new String[] {"t"}, new int[] {2},
            new int[0], new int[] {0}, new int[] {0, 0}, new int[0], new int[0], null, null,
            null, new int[] {1, 1}, new int[] {1}, -1));
        assertTrue(e.getMessage().contains("member_counts"), e.getMessage());
        // memberHashes, when given, has one hash per member.
        e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.countsFirst(
            ids("m"), new int[] {1, 2}, new String[] {"t"}, new int[] {2}, new int[0], new int[] {0},
            new int[] {1}, null));
        assertTrue(e.getMessage().contains("member_hashes"), e.getMessage());
        e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
            ids("m"), new int[] {1, 2}, new int[] {-1}, new String[0], new String[] {"t"}, new int[] {2},
            new int[0], new int[] {0}, new int[] {0, 0}, new int[0], new int[0], null, null, null, null, null, -1));
        assertTrue(e.getMessage().contains("member_hashes"), e.getMessage());
        // The ids may be left out only on the counted call, with the hashes.
        e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
            null, new int[] {7}, new int[] {-1}, new String[0], new String[] {"t"}, new int[] {2},
            new int[0], new int[] {0}, new int[] {0, 0}, new int[0], new int[0], null, null, null, null, null, -1));
        assertTrue(e.getMessage().contains("may be null only"), e.getMessage());
        e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
            null, null, new int[] {-1}, new String[0], new String[] {"t"}, new int[] {2},
            new int[0], new int[] {0}, new int[] {0, 0}, new int[0], new int[0], null, null,
            null, new int[] {0}, new int[] {0, 1}, -1));
        assertTrue(e.getMessage().contains("may be null only"), e.getMessage());
        // With them, a counted call answers; where hashes tie and decide, it asks for the ids.
        assertArrayEquals(new int[] {0, 1, 0, 0}, NativeAssignor.assign(
            null, new int[] {7}, new int[] {-1}, new String[0], new String[] {"t"}, new int[] {2},
            new int[0], new int[] {0}, new int[] {0, 0}, new int[0], new int[0], null, null,
            null, new int[] {0}, new int[] {0, 1}, -1));
        assertArrayEquals(new int[] {2}, NativeAssignor.assign(
            null, new int[] {7, 7}, new int[] {-1, -1}, new String[0], new String[] {"t"}, new int[] {3},
            new int[0], new int[] {0}, new int[] {0, 0, 0}, new int[0], new int[0], null, null,
            null, new int[] {0, 0}, new int[] {0, 1, 2}, -1));
        // memberCounts and free choose the call together: one of them alone is an error.
        for (int[][] pair : new int[][][] {{new int[] {1}, null}, {null, new int[0]}}) {
            e = assertThrows(PartitionAssignorException.class, () -> NativeAssignor.assign(
                ids("m"), null, new int[] {-1}, new String[0], new String[] {"t"}, new int[] {2},
                new int[0], new int[] {0}, new int[] {0, 0}, new int[0], new int[0], null, null,
                null, pair[0], pair[1], -1));
            assertTrue(e.getMessage().contains("go together"), e.getMessage());
        }
    }

    /**
     * A group spec whose member ids repeat one (GroupSpec.memberIds() is a Collection) is refused,
     * fresh and counted: the flat deal orders only the members it gives partitions to, so the
     * result map's size is the check.
     */
    @Test
    void repeatedMemberIdsAreRefused() {
        for (boolean fresh : new boolean[] {true, false}) {
            FakeGroup g = new FakeGroup();
            Uuid t = g.topic(6);
            for (int i = 0; i < 3; i++) g.member("m" + i, null, t);
            if (!fresh) {
                for (int i = 0; i < 3; i++) g.owns("m" + i, t, 2 * i, 2 * i + 1);
            }
            org.apache.kafka.coordinator.group.api.assignor.GroupSpec repeated =
                new org.apache.kafka.coordinator.group.api.assignor.GroupSpec() {
                    public java.util.Collection<String> memberIds() { return List.of("m0", "m1", "m2", "m2"); }
                    public org.apache.kafka.coordinator.group.api.assignor.SubscriptionType subscriptionType() {
                        return g.subscriptionType();
                    }
                    public boolean isPartitionAssigned(Uuid id, int p) { return g.isPartitionAssigned(id, p); }
                    public boolean isPartitionAssignable(Uuid id, int p) { return g.isPartitionAssignable(id, p); }
                    public org.apache.kafka.coordinator.group.api.assignor.MemberSubscription memberSubscription(
                            String id) {
                        return g.memberSubscription(id);
                    }
                    public org.apache.kafka.coordinator.group.api.assignor.MemberAssignment memberAssignment(String id) {
                        return g.memberAssignment(id);
                    }
                };
            // The same group with distinct ids is fine.
            g.assertValid(new KassignAssignor().assign(g, g));
            PartitionAssignorException e = assertThrows(PartitionAssignorException.class,
                () -> new KassignAssignor().assign(repeated, g));
            assertTrue(e.getMessage().contains("distinct") || e.getMessage().contains("duplicate"), e.getMessage());
        }
    }

    /**
     * The counts-first path (current targets judged from their sizes where the core's rule allows)
     * returns exactly what reading every current target returns, on random groups: mostly
     * HOMOGENEOUS (where the rule applies), with racks, members over and under quota, partitions
     * not assignable, and current targets naming unknown topics, partitions out of range, empty
     * sets, and partitions two members hold.
     */
    @Test
    void countsFirstEqualsTheFullRead() {
        Random rnd = new Random(27);
        for (int k = 0; k < 1500; k++) {
            FakeGroup g = new FakeGroup();
            Uuid[] ts = new Uuid[1 + rnd.nextInt(4)];
            int total = 0;
            for (int t = 0; t < ts.length; t++) {
                int n = rnd.nextInt(12);
                ts[t] = g.topic(n);
                total += n;
            }
            int members = 1 + rnd.nextInt(9);
            boolean homogeneous = rnd.nextInt(5) != 0;
            // In a third of the groups the ids come in pairs of equal String.hashCode ("Aa" and
            // "BB" hash alike), so the counted call without ids must ask for them.
            boolean ties = rnd.nextInt(3) == 0;
            for (int i = 0; i < members; i++) {
                List<Uuid> sub = new ArrayList<>();
                for (Uuid t : ts) if (homogeneous || rnd.nextBoolean()) sub.add(t);
                String id = ties ? "m" + (i / 2) + (i % 2 == 0 ? "Aa" : "BB") : "m" + rnd.nextInt(1000) + "-" + i;
                g.member(id, rnd.nextInt(3) == 0 ? null : "r" + rnd.nextInt(3), sub.toArray(new Uuid[0]));
            }
            if (rnd.nextBoolean()) {
                for (Uuid t : ts) {
                    for (int p = 0; p < g.partitions.get(t); p++) {
                        if (rnd.nextInt(3) == 0) g.replicaRacks.computeIfAbsent(t, x -> new HashMap<>()).put(p, Set.of("r" + rnd.nextInt(3)));
                    }
                }
            }
            boolean clean = rnd.nextBoolean();
            List<String> ids = new ArrayList<>(g.members.keySet());
            for (int f = 0; f < total; f++) {
                if (rnd.nextInt(4) == 0) continue; // free
                int t = 0, p = f;
                while (p >= g.partitions.get(ts[t])) p -= g.partitions.get(ts[t++]);
                // Skewed owners: some members end up over quota.
                String owner = ids.get(rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(ids.size()));
                g.owns(owner, ts[t], p);
                if (!clean && rnd.nextInt(15) == 0) g.owns(ids.get(rnd.nextInt(ids.size())), ts[t], p);
            }
            if (!clean) {
                String m = ids.get(rnd.nextInt(ids.size()));
                switch (rnd.nextInt(4)) {
                    case 0 -> g.owns(m, Uuid.randomUuid(), 0); // a topic that does not exist
                    case 1 -> g.owns(m, ts[0], g.partitions.get(ts[0]) + rnd.nextInt(3)); // out of range
                    case 2 -> g.owns(m, ts[ts.length - 1]); // an empty set
                    default -> g.notAssignable.add(ts[0] + ":0");
                }
            }
            GroupAssignment full = KassignAssignor.compute(g, g, false, null);
            GroupAssignment counted = KassignAssignor.compute(g, g, true, null);
            assertEquals(plans(full), plans(counted), "group " + k);
            g.assertValid(counted);
        }
    }

    @Test
    void concurrentCallsAgreeWithSerialOnes() throws Exception {
        Random rnd = new Random(7);
        List<FakeGroup> groups = new ArrayList<>();
        for (int k = 0; k < 64; k++) {
            FakeGroup g = new FakeGroup();
            Uuid[] ts = new Uuid[1 + rnd.nextInt(4)];
            for (int t = 0; t < ts.length; t++) ts[t] = g.topic(rnd.nextInt(30));
            int members = 1 + rnd.nextInt(12);
            for (int i = 0; i < members; i++) {
                List<Uuid> sub = new ArrayList<>();
                for (Uuid t : ts) if (rnd.nextBoolean()) sub.add(t);
                g.member("m" + i, rnd.nextBoolean() ? null : "r" + rnd.nextInt(3), sub.toArray(new Uuid[0]));
            }
            groups.add(g);
        }
        List<GroupAssignment> serial = new ArrayList<>();
        for (FakeGroup g : groups) serial.add(assignor.assign(g, g));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int round = 0; round < 4; round++) {
                List<Future<GroupAssignment>> fs = new ArrayList<>();
                for (FakeGroup g : groups) fs.add(pool.submit(() -> assignor.assign(g, g)));
                for (int k = 0; k < groups.size(); k++) {
                    GroupAssignment r = fs.get(k).get();
                    groups.get(k).assertValid(r);
                    assertEquals(serial.get(k), r);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
