package kassign.broker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;

import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

/**
 * kassign's broker-side assignor for the consumer group protocol (KIP-848), named {@value #NAME}.
 *
 * <p>It computes kassign's {@code server-kassign} (docs/broker.md): the most balanced assignment
 * the subscriptions allow (smallest sum of squared member loads), then the most partitions kept
 * from the current target assignment, then KIP-881 rack locality (member rack against the racks of
 * a partition's replicas), never at the cost of balance. Partitions the group spec marks as not
 * assignable stay unassigned.
 *
 * <p>The computation runs in kassign's Rust core through JNI: the group crosses as flat arrays and
 * the owners come back as one {@code int[]}. When the core's counts-first rule applies (docs/broker.md,
 * "Reading the current target"), the first call takes the members' current target sizes and either
 * answers or says whose current sets must be read (then a second call computes from those sets and
 * the others' sizes). This class only converts. It keeps no state between calls and is safe to call
 * from several threads at once.
 *
 * <p>Install: put the jar on the broker's class path and name {@code kassign.broker.KassignAssignor}
 * in {@code group.consumer.assignors}; clients select it with {@code group.remote.assignor=kassign}.
 * The constructor loads the native library, so a broker that cannot load it fails at start-up with
 * a message saying what to do ({@link NativeLibrary}).
 */
public final class KassignAssignor implements ConsumerGroupPartitionAssignor, Configurable {

    /** The assignor's name, as clients give it in {@code group.remote.assignor}. */
    public static final String NAME = "kassign";

    /**
     * Broker setting: the time budget of one assignment in milliseconds (0: none). The broker
     * hands its whole configuration to {@link #configure} when it creates the assignors of
     * {@code group.consumer.assignors}. Past the budget the core takes its fast balanced path
     * (docs/broker.md, "Time budget").
     */
    public static final String BUDGET_MS_CONFIG = "kassign.assignment.budget.ms";

    /** {@value #BUDGET_MS_CONFIG} when the broker does not set it. */
    public static final long BUDGET_MS_DEFAULT = 1000;

    private volatile long budgetNanos = BUDGET_MS_DEFAULT * 1_000_000L;

    /**
     * Debug: with the system property {@code kassign.broker.timing=true}, each assignment prints
     * the time of its phases to standard error (docs/broker.md, "Where the time goes"). Off by default.
     */
    static final boolean TIMING = Boolean.getBoolean("kassign.broker.timing");

    /** The phase splits of one assignment when {@link #TIMING}; a no-op otherwise. */
    private static final class Splits {
        private final StringBuilder b = TIMING ? new StringBuilder("kassign timing:") : null;
        private static final java.lang.management.ThreadMXBean THREADS =
            TIMING ? java.lang.management.ManagementFactory.getThreadMXBean() : null;
        private long last = TIMING ? System.nanoTime() : 0;
        private long lastCpu = TIMING ? THREADS.getCurrentThreadCpuTime() : 0;

        /** The wall time and the calling thread's CPU time since the last mark, in microseconds. */
        void mark(String phase) {
            if (b == null) return;
            long now = System.nanoTime();
            long cpu = THREADS.getCurrentThreadCpuTime();
            b.append(' ').append(phase).append('=').append((now - last) / 1000).append("us");
            b.append('/').append((cpu - lastCpu) / 1000).append("cpu");
            last = now;
            lastCpu = cpu;
        }

        void print() {
            if (b != null) System.err.println(b);
        }
    }

    /** Loads the native library now (not on a group's first rebalance). */
    public KassignAssignor() {
        NativeLibrary.load();
    }

    /** Reads {@value #BUDGET_MS_CONFIG} (a whole number of milliseconds, 0 for no budget). */
    @Override
    public void configure(Map<String, ?> configs) {
        Object v = configs.get(BUDGET_MS_CONFIG);
        if (v == null) return;
        long ms;
        try {
            ms = v instanceof Number n ? n.longValue() : Long.parseLong(v.toString().trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(BUDGET_MS_CONFIG, v, "must be a whole number of milliseconds (0: no budget)");
        }
        if (ms < 0 || ms > Long.MAX_VALUE / 1_000_000L) {
            throw new ConfigException(BUDGET_MS_CONFIG, v, "must be between 0 (no budget) and "
                + Long.MAX_VALUE / 1_000_000L);
        }
        budgetNanos = ms == 0 ? -1 : ms * 1_000_000L;
    }

    /** The time budget of one assignment in nanoseconds, or -1 for none. */
    long budgetNanos() {
        return budgetNanos;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(GroupSpec groupSpec, SubscribedTopicDescriber describer)
            throws PartitionAssignorException {
        try {
            long budget = budgetNanos;
            long deadline = budget < 0 ? 0 : System.nanoTime() + budget;
            return compute(groupSpec, describer, true, budget < 0 ? null : deadline);
        } catch (PartitionAssignorException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new PartitionAssignorException("kassign: " + e, e);
        }
    }

    /** A HashMap/HashSet capacity that holds {@code n} entries without resizing. */
    private static int capacity(int n) {
        return (int) (n / 0.75f) + 1;
    }

    /**
     * The number of partitions in a current target, from its sets' sizes alone; -1 when a set is
     * empty or null (the full read handles those). Walked with {@code forEach}, the map's own walk
     * of its table: no iterator or entry objects, measurably faster than a for-each loop over
     * {@code values()} on the coordinator's unmodifiable maps. One instance per call, reused for
     * every member.
     */
    private static final class Sizer implements BiConsumer<Uuid, Set<Integer>> {
        private long n;
        private boolean bad;

        @Override
        public void accept(Uuid topic, Set<Integer> set) {
            int size = set == null ? 0 : set.size();
            if (size == 0) bad = true;
            n += size;
        }

        int size(Map<Uuid, Set<Integer>> current) {
            n = 0;
            bad = false;
            current.forEach(this);
            return bad ? -1 : (int) Math.min(n, Integer.MAX_VALUE);
        }
    }

    /**
     * Every partition's replica racks as rack indexes (new names added to {@code rackNames}):
     * {offsets (one per partition plus one), racks}.
     */
    private static int[][] replicaRacks(SubscribedTopicDescriber describer, List<Uuid> topics, int[] partitionCounts,
            int total, Map<String, Integer> rackIndex, List<String> rackNames) {
        int[] offsets = new int[total + 1];
        int[] buf = new int[Math.max(16, total)];
        int n = 0;
        int flat = 0;
        for (int t = 0; t < partitionCounts.length; t++) {
            for (int p = 0; p < partitionCounts[t]; p++) {
                Set<String> racks = describer.racksForPartition(topics.get(t), p);
                if (racks != null) {
                    for (String r : racks) {
                        if (r == null || r.isEmpty()) continue;
                        if (n == buf.length) buf = Arrays.copyOf(buf, buf.length * 2);
                        buf[n++] = rackIndex.computeIfAbsent(r, x -> {
                            rackNames.add(x);
                            return rackNames.size() - 1;
                        });
                    }
                }
                offsets[++flat] = n;
            }
        }
        return new int[][] {offsets, Arrays.copyOf(buf, n)};
    }

    /**
     * One pass over the partitions, in topic order: {@code isPartitionAssignable} for each and,
     * when {@code withFree}, {@code isPartitionAssigned}.
     */
    private static final class PartitionScan {
        /** One flag per partition (0: not assignable); null when every partition is (the usual case). */
        byte[] assignable;
        /** The partitions (flat, ascending) in no member's current target; null without {@code withFree}. */
        int[] free;

        private final int total;
        private int k;

        PartitionScan(GroupSpec groupSpec, List<Uuid> topics, int[] partitionCounts, int total, boolean withFree) {
            this.total = total;
            free = withFree ? new int[16] : null;
            int flat = 0;
            for (int t = 0; t < partitionCounts.length; t++) {
                // One call per topic: a method called often is compiled whole early, where a loop
                // over every partition would wait for on-stack replacement.
                topic(groupSpec, topics.get(t), partitionCounts[t], flat);
                flat += partitionCounts[t];
            }
            if (withFree) free = Arrays.copyOf(free, k);
        }

        private void topic(GroupSpec groupSpec, Uuid id, int n, int flat) {
            for (int p = 0; p < n; p++, flat++) {
                if (!groupSpec.isPartitionAssignable(id, p)) {
                    if (assignable == null) {
                        assignable = new byte[total];
                        Arrays.fill(assignable, (byte) 1);
                    }
                    assignable[flat] = 0;
                }
                if (free != null && !groupSpec.isPartitionAssigned(id, p)) {
                    if (k == free.length) free = Arrays.copyOf(free, k * 2);
                    free[k++] = flat;
                }
            }
        }
    }

    /** The counts-first answer's partitions must ascend within range, its owners name members. */
    private static void checkAnswer(int[] at, int[] owners, int total, int m) {
        boolean ok = at.length == owners.length;
        for (int j = 0; ok && j < at.length; j++) {
            ok = at[j] >= 0 && at[j] < total && (j == 0 || at[j] > at[j - 1]) && owners[j] < m;
        }
        if (!ok) throw new PartitionAssignorException("kassign: the native library returned a malformed answer");
    }

    /** How many topics member {@code i} subscribes to (subscriptions as {@code FlatGroup} has them). */
    private static int subWidth(int[] subOffsets, int[] subTopics, int i) {
        return subOffsets.length == 0 ? subTopics.length : subOffsets[i + 1] - subOffsets[i];
    }

    /**
     * The assignment; {@code countsFirst} lets the core skip reading the elements of current
     * targets it can judge from their sizes ({@code members_to_read} in
     * rust/core/src/server/kassign.rs). Without it every current target is read (the tests compare the
     * two). {@code deadline}: the {@link System#nanoTime()} the assignment is due by, or null.
     */
    static GroupAssignment compute(GroupSpec groupSpec, SubscribedTopicDescriber describer, boolean countsFirst,
            Long deadline) {
        Splits splits = new Splits();
        Members in = new Members(groupSpec, describer, countsFirst);
        splits.mark("members");
        String[] memberIds = in.memberIds;
        int m = memberIds.length;
        Map<Uuid, Integer> topicIndex = in.topicIndex;
        List<Uuid> topics = in.topics;
        List<String> rackNames = in.rackNames;
        int[] subOffsets = in.subOffsets;
        int[] subTopics = in.subTopics;
        Map<Uuid, Set<Integer>>[] currentMaps = in.currentMaps;
        int nt = topics.size();
        String[] topicNames = new String[nt];
        int[] partitionCounts = new int[nt];
        long totalPartitions = 0;
        for (int t = 0; t < nt; t++) {
            topicNames[t] = topics.get(t).toString();
            partitionCounts[t] = in.counts.get(t);
            totalPartitions += partitionCounts[t];
        }
        if (totalPartitions > Integer.MAX_VALUE - 8) {
            throw new PartitionAssignorException("kassign: " + totalPartitions + " partitions exceed the supported maximum");
        }
        int total = (int) totalPartitions;
        int[] topicBase = new int[nt + 1];
        for (int t = 0; t < nt; t++) topicBase[t + 1] = topicBase[t] + partitionCounts[t];
        // Replica racks (only read when some member has a rack: otherwise they cannot matter).
        int[][] replicaRacks = in.anyRack
            ? replicaRacks(describer, topics, partitionCounts, total, in.rackIndex, rackNames) : null;
        int[] partitionRackOffsets = in.anyRack ? replicaRacks[0] : null;
        int[] partitionRacks = in.anyRack ? replicaRacks[1] : null;
        // Counts first: when the core's rule judges some members from their sizes alone, only the
        // others' sets are read, and the partitions nobody holds come from isPartitionAssigned (in
        // the same pass as isPartitionAssignable). When it judges every member so, and the group
        // has no replica racks and every partition is assignable, the first call is the last.
        boolean counts = countsFirst && in.anyCurrent;
        PartitionScan scan = new PartitionScan(groupSpec, topics, partitionCounts, total, counts);
        splits.mark("scan");
        byte[] assignable = scan.assignable;
        byte[] read = null;
        // The owners: of every partition (at == null), or of the partitions at[j] (ascending).
        int[] at = null;
        int[] owners = null;
        boolean[] counted = new boolean[m];
        // The member ids as they cross, joined once for every call that takes them: not at all
        // when the counts-first call answers without them.
        NativeAssignor.Joined joinedIds = null;
        if (counts) {
            boolean flat = !in.anyRack && assignable == null;
            int[] first = NativeAssignor.countsFirst(null, in.memberHashes, topicNames, partitionCounts,
                subOffsets, subTopics, in.memberCounts, flat ? scan.free : null);
            if (NativeAssignor.needsIds(first)) {
                splits.mark("countsFirstWithoutIds");
                joinedIds = NativeAssignor.Joined.of("memberIds", memberIds);
                splits.mark("joinIds");
                first = NativeAssignor.countsFirst(joinedIds, in.memberHashes, topicNames, partitionCounts, subOffsets, subTopics,
                    in.memberCounts, flat ? scan.free : null);
            }
            splits.mark("countsFirst");
            if (first == null) {
                // Every member's current target must be read: the full read below.
            } else if (first[0] == 0 && flat && first.length % 2 == 1) {
                int half = (first.length - 1) / 2;
                at = Arrays.copyOfRange(first, 1, 1 + half);
                owners = Arrays.copyOfRange(first, 1 + half, first.length);
                checkAnswer(at, owners, total, m);
                Arrays.fill(counted, true);
            } else if (first[0] == 1 && first.length == m + 1) {
                if (assignable == null) { // partitions not assignable: the full read
                    read = new byte[m];
                    for (int i = 0; i < m; i++) read[i] = (byte) first[i + 1];
                }
            } else {
                throw new PartitionAssignorException("kassign: the native library returned a malformed answer");
            }
        }
        String[] rackArray = rackNames.toArray(new String[0]);
        CurrentTargets cur = owners != null ? CurrentTargets.none(m) : null;
        // The native call: counts first when the rule judged some members by size; the full read
        // when it did not, or when the counts-first call answers null (its counts do not add up).
        // The counted call goes without the ids (the hashes order the members) unless it answers
        // that it needs them.
        for (byte[] only = read; owners == null; only = null) {
            boolean counting = only != null;
            if (!counting && joinedIds == null) joinedIds = NativeAssignor.Joined.of("memberIds", memberIds);
            // A fresh HOMOGENEOUS group (every current target empty, sizes read) has nothing to read.
            cur = countsFirst && in.homogeneous && !in.anyCurrent ? CurrentTargets.none(m)
                : CurrentTargets.read(currentMaps, only, topicIndex, partitionCounts, topicBase, total);
            splits.mark("current");
            int[] answer;
            while (true) {
                answer = NativeAssignor.assign(joinedIds, in.memberHashes, in.memberRacks, rackArray, topicNames,
                    partitionCounts, subOffsets, subTopics, cur.offsets, cur.topics, cur.partitions, partitionRackOffsets,
                    partitionRacks, assignable, counting ? in.memberCounts : null, counting ? scan.free : null,
                    deadline == null ? -1 : Math.max(0, deadline - System.nanoTime()));
                // Without the ids the answer may ask for them (the order of members whose hashes tie).
                if (joinedIds != null || !NativeAssignor.needsIds(answer)) break;
                joinedIds = NativeAssignor.Joined.of("memberIds", memberIds);
                splits.mark("native(needIds)");
            }
            splits.mark(counting ? "native(counted)" : "native");
            if (counting) {
                if (answer == null) continue;
                int half = answer.length / 2;
                at = Arrays.copyOfRange(answer, 0, half);
                owners = Arrays.copyOfRange(answer, half, answer.length);
                checkAnswer(at, owners, total, m);
                for (int i = 0; i < m; i++) counted[i] = read[i] == 0;
            } else {
                if (answer == null || answer.length != total) {
                    throw new PartitionAssignorException("kassign: the native library returned "
                        + (answer == null ? "nothing" : answer.length + " owners for " + total + " partitions"));
                }
                owners = answer;
            }
        }
        GroupAssignment out = result(memberIds, topics, topicIndex, topicBase, currentMaps, in.currents, in.out, in.inOut,
            cur, counted, at, owners, subOffsets, subTopics);
        // One entry per member id: the core's flat deal orders only the members it gives
        // partitions to, so a duplicate id elsewhere shows here (two members cannot share a key).
        if (out.members().size() != m) {
            throw new PartitionAssignorException("kassign: the group's member ids are not distinct");
        }
        splits.mark("result");
        splits.print();
        return out;
    }

    /**
     * The assignment from the owners: of every partition ({@code at} null), or of the partitions
     * {@code at[j]} (ascending; the counted members keep the others they hold, and nothing else
     * is there). Members that keep exactly their current target (or one topic's set of it) get
     * the coordinator's own map (set) back.
     */
    private static GroupAssignment result(String[] memberIds, List<Uuid> topics, Map<Uuid, Integer> topicIndex,
            int[] topicBase, Map<Uuid, Set<Integer>>[] currentMaps, MemberAssignment[] currents,
            Map<String, MemberAssignment> out, boolean[] inOut, CurrentTargets cur, boolean[] counted, int[] at, int[] owners,
            int[] subOffsets, int[] subTopics) {
        int m = memberIds.length;
        int nt = topics.size();
        int len = owners.length;
        int[] holder = cur.holder;
        int[] currentSize = cur.size;
        boolean[] currentExact = cur.exact;
        // Members that keep exactly their current target get its map back unchanged (no per-partition
        // work below): every partition they get, they held alone, and they get all they held.
        int[] count = new int[m];
        int[] kept = new int[m];
        for (int j = 0; j < len; j++) {
            int o = owners[j];
            if (o < 0) continue;
            count[o]++;
            if (holder != null && holder[at == null ? j : at[j]] == o) kept[o]++;
        }
        @SuppressWarnings("unchecked")
        Map<Uuid, Set<Integer>>[] plans = new Map[m];
        boolean[] whole = new boolean[m];
        for (int i = 0; i < m; i++) {
            if (counted[i]) {
                // A counted member keeps all it holds and gets count[i] more partitions.
                whole[i] = count[i] == 0 && currentMaps[i] != null;
                if (whole[i]) {
                    plans[i] = currentMaps[i];
                } else if (currentMaps[i] != null) {
                    // Copied through forEach: no entry objects, one table at its final size.
                    HashMap<Uuid, Set<Integer>> copy = new HashMap<>(capacity(currentMaps[i].size() + count[i]));
                    currentMaps[i].forEach(copy::put);
                    plans[i] = copy;
                }
            } else if (currentMaps[i] != null && currentExact[i] && count[i] == currentSize[i] && kept[i] == count[i]) {
                plans[i] = currentMaps[i];
                whole[i] = true;
            }
            // Otherwise null until its first topic (plan()).
        }
        onePerTopic(topics, topicIndex, topicBase, at, owners, count, plans, whole, counted);
        Arrays.fill(count, 0);
        Arrays.fill(kept, 0);
        // The others, topic by topic: each member's partitions of the topic are counted first, so
        // every set is allocated once at its final size (a single partition is a singleton set), and
        // a member that keeps exactly its current set of the topic gets that set back.
        @SuppressWarnings("unchecked")
        Set<Integer>[] sets = new Set[m];
        boolean[] reused = new boolean[m];
        int[] touched = new int[m];
        int widest = 0;
        for (int t = 0; t < nt; t++) widest = Math.max(widest, topicBase[t + 1] - topicBase[t]);
        Integer[] boxes = new Integer[Math.min(widest, 1 << 20)];
        int topicEnd = 0;
        for (int t = 0; t < nt; t++) {
            Uuid id = topics.get(t);
            int base = topicBase[t];
            int topicStart = topicEnd;
            topicEnd = runEnd(at, len, topicEnd, topicBase[t + 1]);
            int nTouched = 0;
            for (int j = topicStart; j < topicEnd; j++) {
                int o = owners[j];
                if (o < 0 || whole[o]) continue;
                if (count[o]++ == 0) touched[nTouched++] = o;
                if (holder != null && holder[at == null ? j : at[j]] == o) kept[o]++;
            }
            for (int n = 0; n < nTouched; n++) {
                int o = touched[n];
                Set<Integer> held = currentMaps[o] == null ? null : currentMaps[o].get(id);
                if (counted[o]) {
                    if (held != null) { // its current set, and the partitions it gets
                        Set<Integer> set = new HashSet<>(capacity(held.size() + count[o]));
                        set.addAll(held);
                        sets[o] = set;
                        plan(plans, o, id, set, subOffsets, subTopics);
                    }
                } else if (held != null && kept[o] == count[o] && held.size() == count[o]) {
                    plan(plans, o, id, held, subOffsets, subTopics); // the member keeps exactly its current set
                    reused[o] = true;
                }
            }
            for (int j = topicStart; j < topicEnd; j++) {
                int o = owners[j];
                if (o < 0 || whole[o] || reused[o]) continue;
                int p = (at == null ? j : at[j]) - base;
                // One Integer per partition number for the whole call (most exceed the JDK's
                // small-value cache, and each number recurs in every topic).
                Integer boxed = p < boxes.length ? boxes[p] : null;
                if (boxed == null) {
                    boxed = p;
                    if (p < boxes.length) boxes[p] = boxed;
                }
                if (count[o] == 1 && sets[o] == null) {
                    plan(plans, o, id, Collections.singleton(boxed), subOffsets, subTopics);
                    continue;
                }
                Set<Integer> set = sets[o];
                if (set == null) {
                    set = new HashSet<>(capacity(count[o]));
                    sets[o] = set;
                    plan(plans, o, id, set, subOffsets, subTopics);
                }
                set.add(boxed);
            }
            for (int n = 0; n < nTouched; n++) {
                int o = touched[n];
                sets[o] = null;
                count[o] = 0;
                kept[o] = 0;
                reused[o] = false;
            }
        }
        for (int i = 0; i < m; i++) {
            // A member that keeps exactly its current target gets the object it came in (its
            // partitions() is that map): no new object per member on a round 2 or a member leaving.
            // Members with a current target are in the map already, with that object (Members).
            boolean keeps = plans[i] != null && plans[i] == currentMaps[i];
            if (keeps && inOut[i]) continue;
            out.put(memberIds[i], keeps && currents[i] != null
                ? currents[i]
                : new KassignMemberAssignment(plans[i] == null ? Collections.emptyMap() : plans[i]));
        }
        return new GroupAssignment(out);
    }

    /**
     * The plans of the members built from nothing (not counted, not whole) that get one partition
     * of each of two or more topics: an {@link OnePerTopicPlan} each, filled in one pass over the
     * owners (a member's arrays are dropped at its second partition of a topic), and marked whole.
     * {@code count[o]}: member o's partitions.
     */
    private static void onePerTopic(List<Uuid> topics, Map<Uuid, Integer> topicIndex, int[] topicBase, int[] at,
            int[] owners, int[] count, Map<Uuid, Set<Integer>>[] plans, boolean[] whole, boolean[] counted) {
        int m = count.length;
        int nt = topics.size();
        // The candidates; one loses its arrays at its second partition of a topic.
        boolean[] single = new boolean[m];
        boolean any = false;
        for (int o = 0; o < m; o++) {
            single[o] = !whole[o] && !counted[o] && plans[o] == null && count[o] >= 2;
            any |= single[o];
        }
        if (!any) return;
        int[][] topicOf = new int[m][];
        int[][] partitionOf = new int[m][];
        int[] fill = new int[m];
        int end = 0;
        for (int t = 0; t < nt; t++) {
            int start = end;
            end = runEnd(at, owners.length, end, topicBase[t + 1]);
            for (int j = start; j < end; j++) {
                int o = owners[j];
                if (o < 0 || !single[o]) continue;
                int k = fill[o];
                if (topicOf[o] == null) {
                    topicOf[o] = new int[count[o]];
                    partitionOf[o] = new int[count[o]];
                } else if (k == count[o] || topicOf[o][k - 1] == t) {
                    single[o] = false; // a second partition of topic t
                    topicOf[o] = null;
                    partitionOf[o] = null;
                    continue;
                }
                topicOf[o][k] = t;
                partitionOf[o][k] = (at == null ? j : at[j]) - topicBase[t];
                fill[o] = k + 1;
            }
        }
        for (int o = 0; o < m; o++) {
            if (!single[o] || fill[o] != count[o]) continue;
            plans[o] = new OnePerTopicPlan(topics, topicIndex, topicOf[o], partitionOf[o]);
            whole[o] = true;
        }
    }

    /**
     * The end of a topic's run in the owners: from {@code start}, past every entry whose partition
     * (flat index: {@code j} itself when {@code at} is null, else {@code at[j]}) is below
     * {@code limit}, the next topic's first flat index.
     */
    private static int runEnd(int[] at, int len, int start, int limit) {
        int end = start;
        while (end < len && (at == null ? end : at[end]) < limit) end++;
        return end;
    }

    /**
     * Member {@code o}'s plan gets topic {@code id}'s set: a member's first topic is a singleton
     * map (most members of a large group get one topic), its second turns it into a
     * {@code HashMap} sized for its subscription.
     */
    private static void plan(Map<Uuid, Set<Integer>>[] plans, int o, Uuid id, Set<Integer> set, int[] subOffsets,
            int[] subTopics) {
        Map<Uuid, Set<Integer>> p = plans[o];
        if (p == null) {
            plans[o] = Collections.singletonMap(id, set);
        } else if (p instanceof HashMap<Uuid, Set<Integer>> h) {
            h.put(id, set);
        } else {
            HashMap<Uuid, Set<Integer>> h = new HashMap<>(capacity(Math.max(2, subWidth(subOffsets, subTopics, o))));
            h.putAll(p);
            h.put(id, set);
            plans[o] = h;
        }
    }

    /**
     * The class of Apache Kafka's group coordinator that holds a member's subscription and current
     * target assignment in one object ({@code GroupSpecImpl}'s members).
     */
    private static final String COORDINATOR_MEMBER =
        "org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl";

    /** {@link #COORDINATOR_MEMBER}, once seen (a class compares by identity; its name by characters). */
    private static volatile Class<?> coordinatorMember;

    /** Whether {@code o} is the coordinator's member object ({@link #COORDINATOR_MEMBER}). */
    private static boolean isCoordinatorMember(Object o) {
        Class<?> c = o.getClass();
        if (c == coordinatorMember) return true;
        if (!c.getName().equals(COORDINATOR_MEMBER)) return false;
        coordinatorMember = c;
        return true;
    }

    /** The input pass over the members: subscriptions, racks, and current targets (not read yet). */
    private static final class Members {
        // Topics: every subscribed topic id, in first-seen order; a topic the describer does not
        // know has no partitions to assign.
        final Map<Uuid, Integer> topicIndex = new HashMap<>();
        final List<Uuid> topics = new ArrayList<>();
        final List<Integer> counts = new ArrayList<>();
        // As FlatGroup has them; a HOMOGENEOUS group's one list crosses once (no offsets, shared
        // by every member).
        int[] subOffsets;
        int[] subTopics;
        final Map<String, Integer> rackIndex = new HashMap<>();
        final List<String> rackNames = new ArrayList<>();
        final int[] memberRacks;
        boolean anyRack;
        // A HOMOGENEOUS group: every member subscribes to the same topics, so the first member's
        // subscription is read once and stands for all.
        final boolean homogeneous;
        // Each member's current target, kept to hand back unchanged what the member keeps exactly:
        // the whole map, or one topic's set. Looked up beside the subscription (the same member's
        // entry, still in cache), read later once every subscribed topic is known.
        final Map<Uuid, Set<Integer>>[] currentMaps;
        // The objects they came from (the coordinator's member objects): a member that keeps
        // exactly its current target gets its own object back in the result.
        final MemberAssignment[] currents;
        // The result's map, sized for every member: each member with a current target goes in
        // with its own object here, while its id is in cache; the result replaces the ones whose
        // plan changes (on a round 2 or a member leaving, a few).
        final Map<String, MemberAssignment> out;
        final boolean[] inOut;
        // Each current target's size, read from its sets' sizes alone (-1: it has an empty set or
        // a null one, which only the full read handles), for the core's counts-first rule; read
        // in HOMOGENEOUS groups only.
        final int[] memberCounts;
        boolean anyCurrent;

        // The member ids in the coordinator's iteration order, taken as the members are read.
        final String[] memberIds;
        // Their hashCode()s, the core's member order (docs/broker.md, "Ties"): the coordinator's
        // member map has computed each one already, and a String keeps it.
        final int[] memberHashes;

        @SuppressWarnings("unchecked")
        Members(GroupSpec groupSpec, SubscribedTopicDescriber describer, boolean countsFirst) {
            Collection<String> ids = groupSpec.memberIds();
            int m = ids.size();
            memberIds = new String[m];
            memberHashes = new int[m];
            Iterator<String> it = ids.iterator();
            Sizer sizer = new Sizer();
            subOffsets = new int[m + 1];
            // Grown as the ids are iterated: the coordinator's subscribedTopicIds() is a view over
            // topic names whose size() counts names that resolve to no topic id, which iteration skips.
            subTopics = new int[Math.max(16, m)];
            int k = 0;
            memberRacks = new int[m];
            homogeneous = groupSpec.subscriptionType() == SubscriptionType.HOMOGENEOUS;
            currentMaps = new Map[m];
            currents = new MemberAssignment[m];
            out = new HashMap<>(capacity(m));
            inOut = new boolean[m];
            memberCounts = new int[m];
            for (int i = 0; i < m; i++) {
                if (!it.hasNext()) {
                    throw new PartitionAssignorException("kassign: memberIds has fewer than its size() of " + m);
                }
                String id = it.next();
                if (id == null) throw new PartitionAssignorException("kassign: memberIds[" + i + "] is null");
                memberIds[i] = id;
                memberHashes[i] = id.hashCode();
                MemberSubscription sub = groupSpec.memberSubscription(id);
                // The coordinator's member object is the member's subscription and its current
                // target at once (GroupSpecImpl answers both from one map): one lookup, not two.
                MemberAssignment current = sub instanceof MemberAssignment a && isCoordinatorMember(a)
                    ? a : groupSpec.memberAssignment(id);
                currents[i] = current;
                currentMaps[i] = current == null ? null : current.partitions();
                if (currentMaps[i] != null && !currentMaps[i].isEmpty()) {
                    out.put(id, current);
                    inOut[i] = true;
                }
                // Sizes only for a HOMOGENEOUS group: the core's rule needs every member on the
                // same topics, and elsewhere the full read follows anyway.
                if (countsFirst && homogeneous && currentMaps[i] != null) {
                    memberCounts[i] = sizer.size(currentMaps[i]);
                    anyCurrent |= memberCounts[i] != 0;
                }
                if (homogeneous && i > 0) {
                    // Nothing to add: the first member's list stands for everyone's.
                } else for (Uuid t : sub.subscribedTopicIds()) {
                    Integer idx = topicIndex.get(t);
                    if (idx == null) {
                        idx = topics.size();
                        topicIndex.put(t, idx);
                        topics.add(t);
                        counts.add(Math.max(describer.numPartitions(t), 0));
                    }
                    if (k == subTopics.length) subTopics = Arrays.copyOf(subTopics, k * 2);
                    subTopics[k++] = idx;
                }
                subOffsets[i + 1] = k;
                Optional<String> rack = sub.rackId();
                if (rack.isPresent() && !rack.get().isEmpty()) {
                    anyRack = true;
                    memberRacks[i] = rackIndex.computeIfAbsent(rack.get(), r -> {
                        rackNames.add(r);
                        return rackNames.size() - 1;
                    });
                } else {
                    memberRacks[i] = -1;
                }
            }
            if (it.hasNext()) {
                throw new PartitionAssignorException("kassign: memberIds has more than its size() of " + m);
            }
            subTopics = Arrays.copyOf(subTopics, k);
            if (homogeneous) subOffsets = new int[0];
        }
    }

    /**
     * The current target assignment of the members read, as (topic index, partition) pairs per
     * member, in one pass over their sets.
     */
    private static final class CurrentTargets {
        final int[] offsets;
        final int[] topics;
        final int[] partitions;
        /**
         * Which read member's current target holds each partition (-2: several), to hand back a
         * current set unchanged when the member keeps exactly it; null when nothing was read.
         */
        final int[] holder;
        /** Per member: pairs read. */
        final int[] size;
        /**
         * Per member: whether its map can come back as it is (no topic nobody subscribes to, no
         * partition out of range, no empty set).
         */
        final boolean[] exact;

        private CurrentTargets(int[] offsets, int[] topics, int[] partitions, int[] holder, int[] size, boolean[] exact) {
            this.offsets = offsets;
            this.topics = topics;
            this.partitions = partitions;
            this.holder = holder;
            this.size = size;
            this.exact = exact;
        }

        /** Nobody's current target: every member's is empty. */
        static CurrentTargets none(int m) {
            return new CurrentTargets(new int[m + 1], new int[0], new int[0], null, new int[m], new boolean[m]);
        }

        /** Read the members with {@code read[i] != 0} (every member when {@code read} is null). */
        static CurrentTargets read(Map<Uuid, Set<Integer>>[] currentMaps, byte[] read, Map<Uuid, Integer> topicIndex,
                int[] partitionCounts, int[] topicBase, int total) {
            int m = currentMaps.length;
            int[] ownedOffsets = new int[m + 1];
            int[] holder = null; // allocated at the first current partition: a fresh group has none
            int[] currentSize = new int[m];
            boolean[] currentExact = new boolean[m];
            // Grown arrays; each set is iterated once.
            int[] ownedTopics = new int[Math.max(16, Math.min(total, 4096))];
            int[] ownedPartitions = new int[ownedTopics.length];
            // One reused buffer for the sets' elements: toArray(buffer) walks the set's table once
            // (for a HashSet, keysToArray) and allocates nothing, where an iterator costs two
            // objects and a second walk per set (most sets are small).
            Object[] elements = new Integer[16];
            // The topic index of the j-th entry of the last map read that had one: maps with the
            // same topics walk them in the same order (same keys, same table), so the next
            // member's j-th key is most often the same object, and an identity check stands for
            // the hash lookup (one slot per subscribed topic; entries past that are looked up).
            Uuid[] seenTopic = new Uuid[topicIndex.size()];
            int[] seenIndex = new int[topicIndex.size()];
            int k = 0;
            for (int i = 0; i < m; i++) {
                Map<Uuid, Set<Integer>> partitions = read == null || read[i] != 0 ? currentMaps[i] : null;
                if (partitions != null) {
                    boolean exact = true;
                    int pos = 0;
                    for (Map.Entry<Uuid, Set<Integer>> e : partitions.entrySet()) {
                        Uuid topic = e.getKey();
                        int ti;
                        if (pos < seenTopic.length && seenTopic[pos] == topic) {
                            ti = seenIndex[pos];
                        } else {
                            Integer idx = topicIndex.get(topic);
                            ti = idx == null ? -1 : idx;
                            if (pos < seenTopic.length) {
                                seenTopic[pos] = topic;
                                seenIndex[pos] = ti;
                            }
                        }
                        pos++;
                        Set<Integer> set = e.getValue();
                        if (ti < 0 || set.isEmpty()) exact = false;
                        int size = set.size();
                        if (size > elements.length) elements = new Integer[Math.max(size, elements.length * 2)];
                        Object[] got = set.toArray(elements);
                        int n = got == elements ? size : got.length;
                        for (int j = 0; j < n; j++) {
                            int p = (Integer) got[j];
                            if (ti >= 0 && p >= 0 && p < partitionCounts[ti]) {
                                int f = topicBase[ti] + p;
                                if (holder == null) {
                                    holder = new int[total];
                                    Arrays.fill(holder, -1);
                                }
                                holder[f] = holder[f] == -1 ? i : -2;
                            } else {
                                exact = false;
                            }
                            if (k == ownedTopics.length) {
                                ownedTopics = Arrays.copyOf(ownedTopics, k * 2);
                                ownedPartitions = Arrays.copyOf(ownedPartitions, k * 2);
                            }
                            ownedTopics[k] = ti;
                            ownedPartitions[k] = p;
                            k++;
                        }
                    }
                    currentExact[i] = exact;
                }
                ownedOffsets[i + 1] = k;
                currentSize[i] = k - ownedOffsets[i];
            }
            return new CurrentTargets(ownedOffsets, Arrays.copyOf(ownedTopics, k), Arrays.copyOf(ownedPartitions, k), holder,
                currentSize, currentExact);
        }
    }
}
