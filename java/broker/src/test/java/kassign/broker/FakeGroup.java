package kassign.broker;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** A group as the coordinator hands it to an assignor, built by hand (test-only GroupSpec and describer). */
final class FakeGroup implements GroupSpec, SubscribedTopicDescriber {

    record Sub(Optional<String> rackId, Optional<String> instanceId, Set<Uuid> subscribedTopicIds)
        implements MemberSubscription {}

    final Map<Uuid, Integer> partitions = new HashMap<>();
    final Map<Uuid, Map<Integer, Set<String>>> replicaRacks = new HashMap<>();
    final Map<String, Sub> members = new LinkedHashMap<>();
    final Map<String, Map<Uuid, Set<Integer>>> current = new HashMap<>();
    final Set<String> notAssignable = new HashSet<>();

    Uuid topic(int n) {
        Uuid id = Uuid.randomUuid();
        partitions.put(id, n);
        return id;
    }

    FakeGroup member(String id, String rack, Uuid... topics) {
        members.put(id, new Sub(Optional.ofNullable(rack), Optional.empty(), Set.of(topics)));
        return this;
    }

    FakeGroup owns(String member, Uuid topic, int... ps) {
        Set<Integer> s = current.computeIfAbsent(member, m -> new HashMap<>()).computeIfAbsent(topic, t -> new HashSet<>());
        for (int p : ps) s.add(p);
        return this;
    }

    public Collection<String> memberIds() { return members.keySet(); }
    public SubscriptionType subscriptionType() {
        return new HashSet<>(members.values().stream().map(Sub::subscribedTopicIds).toList()).size() <= 1
            ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
    }
    public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
        return current.values().stream().anyMatch(a -> a.getOrDefault(topicId, Set.of()).contains(partitionId));
    }
    public boolean isPartitionAssignable(Uuid topicId, int partitionId) {
        return !notAssignable.contains(topicId + ":" + partitionId);
    }
    public MemberSubscription memberSubscription(String memberId) { return members.get(memberId); }
    /** One object per member, as the coordinator keeps one (its partitions() read at each call). */
    private final Map<String, MemberAssignment> assignments = new HashMap<>();

    public MemberAssignment memberAssignment(String memberId) {
        return assignments.computeIfAbsent(memberId, id -> () -> current.getOrDefault(id, Map.of()));
    }
    public int numPartitions(Uuid topicId) { return partitions.getOrDefault(topicId, -1); }
    public Set<String> racksForPartition(Uuid topicId, int partition) {
        return replicaRacks.getOrDefault(topicId, Map.of()).getOrDefault(partition, Set.of());
    }

    /** Valid and complete: every assignable partition of every subscribed, existing topic exactly once, to a subscriber. */
    void assertValid(GroupAssignment result) {
        assertEquals(members.keySet(), result.members().keySet(), "every member gets an entry");
        Map<String, String> seen = new HashMap<>();
        for (Map.Entry<String, MemberAssignment> e : result.members().entrySet()) {
            Set<Uuid> subs = members.get(e.getKey()).subscribedTopicIds();
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().partitions().entrySet()) {
                assertTrue(subs.contains(tp.getKey()), e.getKey() + " got a topic it does not subscribe to");
                for (int p : tp.getValue()) {
                    assertTrue(p >= 0 && p < numPartitions(tp.getKey()), "partition out of range");
                    assertTrue(isPartitionAssignable(tp.getKey(), p), "a partition that is not assignable was assigned");
                    String prev = seen.put(tp.getKey() + ":" + p, e.getKey());
                    if (prev != null) fail(tp.getKey() + ":" + p + " given to " + prev + " and " + e.getKey());
                }
            }
        }
        Set<Uuid> subscribed = new HashSet<>();
        members.values().forEach(s -> subscribed.addAll(s.subscribedTopicIds()));
        int want = 0;
        for (Uuid t : subscribed) {
            for (int p = 0; p < Math.max(0, numPartitions(t)); p++) {
                if (isPartitionAssignable(t, p)) want++;
            }
        }
        assertEquals(want, seen.size(), "every assignable subscribed partition assigned");
    }

    static int load(GroupAssignment result, String member) {
        return result.members().get(member).partitions().values().stream().mapToInt(Set::size).sum();
    }
}
