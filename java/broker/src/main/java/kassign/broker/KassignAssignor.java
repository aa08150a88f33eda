package kassign.broker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.common.Uuid;
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
 * <p>The computation runs in kassign's Rust core through one JNI call per {@link #assign}: the group
 * crosses as flat arrays and the owners come back as one {@code int[]}. This class only converts.
 * It keeps no state between calls and is safe to call from several threads at once.
 *
 * <p>Install: put the jar on the broker's class path and name {@code kassign.broker.KassignAssignor}
 * in {@code group.consumer.assignors}; clients select it with {@code group.remote.assignor=kassign}.
 * The constructor loads the native library, so a broker that cannot load it fails at start-up with
 * a message saying what to do ({@link NativeLibrary}).
 */
public final class KassignAssignor implements ConsumerGroupPartitionAssignor {

    /** The assignor's name, as clients give it in {@code group.remote.assignor}. */
    public static final String NAME = "kassign";

    /** Loads the native library now (not on a group's first rebalance). */
    public KassignAssignor() {
        NativeLibrary.load();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(GroupSpec groupSpec, SubscribedTopicDescriber describer)
            throws PartitionAssignorException {
        try {
            return compute(groupSpec, describer);
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

    private static GroupAssignment compute(GroupSpec groupSpec, SubscribedTopicDescriber describer) {
        String[] memberIds = groupSpec.memberIds().toArray(new String[0]);
        int m = memberIds.length;
        // Topics: every subscribed topic id, in first-seen order; a topic the describer does not
        // know has no partitions to assign.
        Map<Uuid, Integer> topicIndex = new HashMap<>();
        List<Uuid> topics = new ArrayList<>();
        List<Integer> counts = new ArrayList<>();
        int[] subOffsets = new int[m + 1];
        // Grown as the ids are iterated: the coordinator's subscribedTopicIds() is a view over
        // topic names whose size() counts names that resolve to no topic id, which iteration skips.
        int[] subTopics = new int[Math.max(16, m)];
        Map<String, Integer> rackIndex = new HashMap<>();
        List<String> rackNames = new ArrayList<>();
        int[] memberRacks = new int[m];
        boolean anyRack = false;
        // A HOMOGENEOUS group: every member subscribes to the same topics, so the first member's
        // subscription is read once and repeated.
        boolean homogeneous = groupSpec.subscriptionType() == SubscriptionType.HOMOGENEOUS;
        // Each member's current target, kept to hand back unchanged what the member keeps exactly:
        // the whole map, or one topic's set. Looked up beside the subscription (the same member's
        // entry, still in cache), read in the next pass once every subscribed topic is known.
        @SuppressWarnings("unchecked")
        Map<Uuid, Set<Integer>>[] currentMaps = new Map[m];
        int k = 0;
        for (int i = 0; i < m; i++) {
            MemberSubscription sub = groupSpec.memberSubscription(memberIds[i]);
            MemberAssignment current = groupSpec.memberAssignment(memberIds[i]);
            currentMaps[i] = current == null ? null : current.partitions();
            if (homogeneous && i > 0) {
                int width = subOffsets[1];
                while (k + width > subTopics.length) subTopics = Arrays.copyOf(subTopics, subTopics.length * 2);
                System.arraycopy(subTopics, 0, subTopics, k, width);
                k += width;
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
        subTopics = Arrays.copyOf(subTopics, k);
        int nt = topics.size();
        String[] topicNames = new String[nt];
        int[] partitionCounts = new int[nt];
        long totalPartitions = 0;
        for (int t = 0; t < nt; t++) {
            topicNames[t] = topics.get(t).toString();
            partitionCounts[t] = counts.get(t);
            totalPartitions += partitionCounts[t];
        }
        if (totalPartitions > Integer.MAX_VALUE - 8) {
            throw new PartitionAssignorException("kassign: " + totalPartitions + " partitions exceed the supported maximum");
        }
        int total = (int) totalPartitions;
        // Current target assignment, as (topic index, partition) pairs per member.
        int[] ownedOffsets = new int[m + 1];
        int[] topicBase = new int[nt + 1];
        for (int t = 0; t < nt; t++) topicBase[t + 1] = topicBase[t] + partitionCounts[t];
        // Which member's current target holds each partition (-2: several), to hand back a current
        // set unchanged when the member keeps exactly it.
        // (Allocated at the first current partition: a fresh group has none.)
        int[] holder = null;
        // A map with an entry that cannot come back as it is (a topic nobody subscribes to, a
        // partition out of range, an empty set) is never reused whole.
        int[] currentSize = new int[m];
        boolean[] currentExact = new boolean[m];
        // One pass over the current target (grown arrays; its sets are iterated once).
        int[] ownedTopics = new int[Math.max(16, Math.min(total, 4096))];
        int[] ownedPartitions = new int[ownedTopics.length];
        // One reused buffer for the sets' elements: toArray(buffer) walks the set's table once (for
        // a HashSet, keysToArray) and allocates nothing, where an iterator costs two objects and a
        // second walk per set (most sets are small).
        Object[] elements = new Integer[16];
        k = 0;
        for (int i = 0; i < m; i++) {
            Map<Uuid, Set<Integer>> partitions = currentMaps[i];
            if (partitions != null) {
                boolean exact = true;
                for (Map.Entry<Uuid, Set<Integer>> e : partitions.entrySet()) {
                    Integer idx = topicIndex.get(e.getKey());
                    int ti = idx == null ? -1 : idx;
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
        // Replica racks (only read when some member has a rack: otherwise they cannot matter).
        int[] partitionRackOffsets = null;
        int[] partitionRacks = null;
        if (anyRack) {
            partitionRackOffsets = new int[total + 1];
            int[] buf = new int[Math.max(16, total)];
            int n = 0;
            int flat = 0;
            for (int t = 0; t < nt; t++) {
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
                    partitionRackOffsets[++flat] = n;
                }
            }
            partitionRacks = Arrays.copyOf(buf, n);
        }
        // Assignability (every partition, for consumer groups); the array only when one is not.
        byte[] assignable = null;
        int flat = 0;
        for (int t = 0; t < nt; t++) {
            Uuid id = topics.get(t);
            for (int p = 0; p < partitionCounts[t]; p++, flat++) {
                if (!groupSpec.isPartitionAssignable(id, p)) {
                    if (assignable == null) {
                        assignable = new byte[total];
                        Arrays.fill(assignable, (byte) 1);
                    }
                    assignable[flat] = 0;
                }
            }
        }
        ownedTopics = Arrays.copyOf(ownedTopics, k);
        ownedPartitions = Arrays.copyOf(ownedPartitions, k);
        int[] owners = NativeAssignor.assign(memberIds, memberRacks, rackNames.toArray(new String[0]),
            topicNames, partitionCounts, subOffsets, subTopics, ownedOffsets, ownedTopics, ownedPartitions,
            partitionRackOffsets, partitionRacks, assignable);
        if (owners == null || owners.length != total) {
            throw new PartitionAssignorException("kassign: the native library returned "
                + (owners == null ? "nothing" : owners.length + " owners for " + total + " partitions"));
        }
        // Members that keep exactly their current target get its map back unchanged (no per-partition
        // work below): every partition they get, they held alone, and they get all they held.
        int[] count = new int[m];
        int[] kept = new int[m];
        for (int f = 0; f < total; f++) {
            int o = owners[f];
            if (o < 0) continue;
            count[o]++;
            if (holder != null && holder[f] == o) kept[o]++;
        }
        @SuppressWarnings("unchecked")
        Map<Uuid, Set<Integer>>[] plans = new Map[m];
        boolean[] whole = new boolean[m];
        for (int i = 0; i < m; i++) {
            if (currentMaps[i] != null && currentExact[i] && count[i] == currentSize[i] && kept[i] == count[i]) {
                plans[i] = currentMaps[i];
                whole[i] = true;
            } else {
                plans[i] = new HashMap<>(capacity(subOffsets[i + 1] - subOffsets[i]));
            }
        }
        Arrays.fill(count, 0);
        Arrays.fill(kept, 0);
        // The others, topic by topic: each member's partitions of the topic are counted first, so
        // every set is allocated once at its final size (a single partition is a singleton set), and
        // a member that keeps exactly its current set of the topic gets that set back.
        @SuppressWarnings("unchecked")
        Set<Integer>[] sets = new Set[m];
        boolean[] reused = new boolean[m];
        int[] touched = new int[m];
        flat = 0;
        for (int t = 0; t < nt; t++) {
            Uuid id = topics.get(t);
            int n = partitionCounts[t];
            int nTouched = 0;
            for (int p = 0; p < n; p++) {
                int o = owners[flat + p];
                if (o < 0 || whole[o]) continue;
                if (count[o]++ == 0) touched[nTouched++] = o;
                if (holder != null && holder[flat + p] == o) kept[o]++;
            }
            for (int k2 = 0; k2 < nTouched; k2++) {
                int o = touched[k2];
                Set<Integer> cur = currentMaps[o] == null ? null : currentMaps[o].get(id);
                if (cur != null && kept[o] == count[o] && cur.size() == count[o]) {
                    plans[o].put(id, cur); // the member keeps exactly its current set
                    reused[o] = true;
                }
            }
            for (int p = 0; p < n; p++) {
                int o = owners[flat + p];
                if (o < 0 || whole[o] || reused[o]) continue;
                if (count[o] == 1) {
                    plans[o].put(id, Collections.singleton(p));
                    continue;
                }
                Set<Integer> set = sets[o];
                if (set == null) {
                    set = new HashSet<>(capacity(count[o]));
                    sets[o] = set;
                    plans[o].put(id, set);
                }
                set.add(p);
            }
            for (int k2 = 0; k2 < nTouched; k2++) {
                int o = touched[k2];
                sets[o] = null;
                count[o] = 0;
                kept[o] = 0;
                reused[o] = false;
            }
            flat += n;
        }
        Map<String, MemberAssignment> out = new HashMap<>(m * 2);
        for (int i = 0; i < m; i++) out.put(memberIds[i], new KassignMemberAssignment(plans[i]));
        return new GroupAssignment(out);
    }
}
