package kassign.peers;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataDelta;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.ModernGroup;
import org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl;
import org.apache.kafka.coordinator.group.modern.SubscriptionCount;
import org.apache.kafka.coordinator.group.modern.TargetAssignmentBuilder;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;

/**
 * Differential driver for the broker-side (KIP-848) assignors of kafka-group-coordinator
 * (peers/server_diff.py): {@code UniformAssignor} ("uniform") and {@code RangeAssignor} ("range"),
 * and kassign's own broker plugin ("kassign", peers/server_kassign_diff.py; needs the plugin jar on
 * the class path, and reports only the {@code "broker"} run).
 *
 * <pre>
 *   java -cp kassign-java-harness.jar kassign.peers.ServerDiff &lt; chains.jsonl
 * </pre>
 *
 * Each stdin line is a <em>chain</em>: {@code {"id": ID, "assignor": "uniform"|"range", "seed": S,
 * "initial": {member: [[topic, p], ...]}, "steps": [STEP, ...]}}, where a step is
 * {@code {"topics": {name: count}, "members": {id: {"topics": [...], "instance": id-or-null}},
 * "renamed": {old member id: new member id}}}. The chain's target assignment starts as
 * {@code initial} and after every step becomes the step's result, exactly as the group
 * coordinator keeps it: the new target comes from {@code TargetAssignmentBuilder} (the
 * coordinator's own class, given the members, the subscription type {@code ModernGroup} derives from
 * the per-name subscriber counts, the current target assignment and its inverted index, and a
 * metadata image), and is stored by replaying the target-assignment records it emits
 * ({@code Assignment.fromRecord}). A member that left loses its target assignment (the coordinator
 * writes a tombstone); a static member that rejoins under a new member id ({@code renamed}) takes
 * over its predecessor's target assignment.
 *
 * <p>Topic ids are random (seeded by {@code seed}), as on a broker. Each step reports:
 * <ul>
 *   <li>{@code "broker"}: the result computed as above;</li>
 *   <li>{@code "sorted"}: the same assignor on the same input with every hash-ordered collection in
 *       canonical order (members by id, topics by name, partitions ascending; topic ids chosen so that
 *       hash order and {@code Uuid} order are both name order);</li>
 *   <li>{@code "shuffled"}: the same with members, topics and partitions in a seeded random order
 *       (a further witness of whether the plan depends on iteration order).</li>
 * </ul>
 * Results are {@code {member: [[topic, p], ...]}} sorted, or {@code {"error": "..."}}.
 */
public final class ServerDiff {

    private ServerDiff() {}

    /** A topic-name metadata image with fixed ids; no racks. */
    static final class Image implements CoordinatorMetadataImage {
        final Map<String, TopicMetadata> byName = new HashMap<>();
        final Map<Uuid, TopicMetadata> byId = new HashMap<>();

        void add(String name, Uuid id, int partitions) {
            TopicMetadata m = new TopicMetadata() {
                public String name() { return name; }
                public Uuid id() { return id; }
                public int partitionCount() { return partitions; }
                public List<String> partitionRacks(int partition) { return List.of(); }
            };
            byName.put(name, m);
            byId.put(id, m);
        }

        public Set<Uuid> topicIds() { return Collections.unmodifiableSet(byId.keySet()); }
        public Set<String> topicNames() { return Collections.unmodifiableSet(byName.keySet()); }
        public Optional<TopicMetadata> topicMetadata(String name) { return Optional.ofNullable(byName.get(name)); }
        public Optional<TopicMetadata> topicMetadata(Uuid id) { return Optional.ofNullable(byId.get(id)); }
        public CoordinatorMetadataDelta emptyDelta() { throw new UnsupportedOperationException(); }
        public long version() { return 1L; }
        public boolean isEmpty() { return byId.isEmpty(); }
    }

    static ConsumerGroupPartitionAssignor assignor(String name) {
        if (name.equals("uniform")) return new UniformAssignor();
        if (name.equals("range")) return new RangeAssignor();
        if (name.equals("kassign")) return Plugin.KASSIGN;
        throw new IllegalArgumentException("unknown assignor " + name);
    }

    /**
     * kassign's broker plugin (java/broker/, {@code make broker-plugin}), found the way a broker finds
     * it: by class name, from the plugin jar on the class path. One instance serves every step, as on
     * a broker.
     */
    static final class Plugin {
        static final ConsumerGroupPartitionAssignor KASSIGN = load();

        private static ConsumerGroupPartitionAssignor load() {
            try {
                return (ConsumerGroupPartitionAssignor) Class.forName("kassign.broker.KassignAssignor")
                    .getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("kassign's broker plugin is not on the class path: " + e, e);
            }
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> arr(Object o) {
        return (List<Object>) o;
    }

    /** Per-name subscriber counts, as ModernGroup keeps them (names of missing topics included). */
    static SubscriptionType subscriptionType(Map<String, Object> members) {
        Map<String, SubscriptionCount> counts = new HashMap<>();
        for (Object spec : members.values()) {
            for (Object t : new TreeSet<>(arr(obj(spec).get("topics")))) {
                counts.merge((String) t, new SubscriptionCount(1, 0),
                    (a, b) -> new SubscriptionCount(a.byNameCount() + 1, 0));
            }
        }
        return ModernGroup.subscriptionType(counts, members.size());
    }

    static String instance(Map<String, Object> spec) {
        Object v = spec.get("instance");
        return v == null ? null : (String) v;
    }

    /** Target assignment as the coordinator stores it: one Assignment per member, from a record. */
    static Assignment fromPairs(List<Object> pairs, Map<String, Uuid> ids) {
        Map<Uuid, List<Integer>> byTopic = new LinkedHashMap<>();
        for (Object o : pairs) {
            List<Object> tp = arr(o);
            Uuid id = ids.get((String) tp.get(0));
            if (id == null) continue;
            byTopic.computeIfAbsent(id, k -> new ArrayList<>()).add(((Number) tp.get(1)).intValue());
        }
        ConsumerGroupTargetAssignmentMemberValue v = new ConsumerGroupTargetAssignmentMemberValue();
        List<ConsumerGroupTargetAssignmentMemberValue.TopicPartition> tps = new ArrayList<>();
        for (Map.Entry<Uuid, List<Integer>> e : byTopic.entrySet()) {
            tps.add(new ConsumerGroupTargetAssignmentMemberValue.TopicPartition()
                .setTopicId(e.getKey()).setPartitions(e.getValue()));
        }
        v.setTopicPartitions(tps);
        return Assignment.fromRecord(v);
    }

    static Map<Uuid, Map<Integer, String>> invert(Map<String, Assignment> target) {
        Map<Uuid, Map<Integer, String>> inv = new HashMap<>();
        for (Map.Entry<String, Assignment> e : target.entrySet()) {
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().partitions().entrySet()) {
                Map<Integer, String> m = inv.computeIfAbsent(tp.getKey(), k -> new HashMap<>());
                for (int p : tp.getValue()) m.put(p, e.getKey());
            }
        }
        return inv;
    }

    /** One step the way the coordinator runs it; updates {@code target} by replaying records. */
    static Map<String, Map<Uuid, Set<Integer>>> brokerStep(String name, Map<String, Object> step, Image image,
                                                           Map<String, Assignment> target) {
        Map<String, Object> members = obj(step.get("members"));
        Map<String, ConsumerGroupMember> groupMembers = new HashMap<>();
        for (Map.Entry<String, Object> e : members.entrySet()) {
            Map<String, Object> spec = obj(e.getValue());
            List<String> topics = new ArrayList<>();
            for (Object t : arr(spec.get("topics"))) topics.add((String) t);
            ConsumerGroupMember.Builder b = new ConsumerGroupMember.Builder(e.getKey())
                .setSubscribedTopicNames(topics)
                .setServerAssignorName(name)
                .setClientId("kassign")
                .setClientHost("localhost")
                .setRackId(null);
            if (instance(spec) != null) b.setInstanceId(instance(spec));
            groupMembers.put(e.getKey(), b.build());
        }
        TargetAssignmentBuilder.TargetAssignmentResult result =
            new TargetAssignmentBuilder.ConsumerTargetAssignmentBuilder("kassign-diff", 1, assignor(name))
                .withTime(Time.SYSTEM)
                .withMembers(groupMembers)
                .withSubscriptionType(subscriptionType(members))
                .withTargetAssignment(target)
                .withInvertedTargetAssignment(invert(target))
                .withMetadataImage(image)
                .withResolvedRegularExpressions(Map.of())
                .build();
        for (CoordinatorRecord r : result.records()) {
            if (r.key() instanceof ConsumerGroupTargetAssignmentMemberKey key && r.value() != null
                    && r.value().message() instanceof ConsumerGroupTargetAssignmentMemberValue value) {
                target.put(key.memberId(), Assignment.fromRecord(value));
            }
        }
        Map<String, Map<Uuid, Set<Integer>>> out = new TreeMap<>();
        for (String m : members.keySet()) {
            MemberAssignment a = result.targetAssignment().get(m);
            out.put(m, a == null ? Map.of() : a.partitions());
        }
        return out;
    }

    /**
     * The assignor on a hand-built GroupSpecImpl whose hash-ordered parts iterate in a chosen order:
     * members in {@code memberOrder}, topics by {@code topicIds} (ids whose hash and natural order
     * follow the wanted topic order), each member's partitions in {@code shuffle}d or ascending order.
     */
    static Map<String, Map<Uuid, Set<Integer>>> orderedStep(String name, Map<String, Object> step,
                                                            List<String> memberOrder, Map<String, Uuid> topicIds,
                                                            Map<String, List<Object>> current, Random shuffle) {
        Map<String, Object> topics = obj(step.get("topics"));
        Map<String, Object> members = obj(step.get("members"));
        Image image = new Image();
        List<String> names = new ArrayList<>(topicIds.keySet());
        for (String t : names) {
            if (topics.containsKey(t)) image.add(t, topicIds.get(t), ((Number) topics.get(t)).intValue());
        }
        Map<String, MemberSubscriptionAndAssignmentImpl> specs = new LinkedHashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        for (String m : memberOrder) {
            Map<String, Object> spec = obj(members.get(m));
            Set<Uuid> subscribed = new LinkedHashSet<>();
            Set<Object> subNames = new TreeSet<>(arr(spec.get("topics")));
            for (String t : names) {
                if (subNames.contains(t) && image.byName.containsKey(t)) subscribed.add(topicIds.get(t));
            }
            Map<Uuid, List<Integer>> parts = new LinkedHashMap<>();
            for (Object o : current.getOrDefault(m, List.of())) {
                List<Object> tp = arr(o);
                String t = (String) tp.get(0);
                if (!image.byName.containsKey(t)) continue;
                parts.computeIfAbsent(topicIds.get(t), k -> new ArrayList<>()).add(((Number) tp.get(1)).intValue());
            }
            Map<Uuid, Set<Integer>> assignment = new LinkedHashMap<>();
            for (String t : names) {
                List<Integer> ps = parts.get(topicIds.get(t));
                if (ps == null) continue;
                Collections.sort(ps);
                if (shuffle != null) Collections.shuffle(ps, shuffle);
                assignment.put(topicIds.get(t), Collections.unmodifiableSet(new LinkedHashSet<>(ps)));
                for (int p : ps) inverted.computeIfAbsent(topicIds.get(t), k -> new HashMap<>()).put(p, m);
            }
            specs.put(m, new MemberSubscriptionAndAssignmentImpl(Optional.empty(), Optional.ofNullable(instance(spec)),
                Collections.unmodifiableSet(subscribed), new Assignment(assignment)));
        }
        GroupSpecImpl groupSpec = new GroupSpecImpl(Collections.unmodifiableMap(specs), subscriptionType(members), inverted);
        GroupAssignment result = assignor(name).assign(groupSpec, new SubscribedTopicDescriberImpl(image));
        Map<String, Map<Uuid, Set<Integer>>> out = new TreeMap<>();
        for (String m : members.keySet()) {
            MemberAssignment a = result.members().get(m);
            out.put(m, a == null ? Map.of() : a.partitions());
        }
        return out;
    }

    /** Ids whose HashMap order and Uuid order both follow {@code order} (hash code = position). */
    static Map<String, Uuid> orderedIds(List<String> order) {
        Map<String, Uuid> ids = new LinkedHashMap<>();
        for (int k = 0; k < order.size(); k++) {
            // hilo = msb ^ lsb = 0x00000001_00000001 ^ k; hashCode = (int)(hilo >> 32) ^ (int) hilo = k.
            ids.put(order.get(k), new Uuid(0x0000000100000001L, k));
        }
        return ids;
    }

    static void json(StringBuilder b, Map<String, Map<Uuid, Set<Integer>>> result, Map<Uuid, String> names) {
        b.append('{');
        boolean first = true;
        for (Map.Entry<String, Map<Uuid, Set<Integer>>> e : result.entrySet()) {
            if (!first) b.append(", ");
            first = false;
            Json.quote(b, e.getKey());
            b.append(": [");
            TreeMap<String, TreeSet<Integer>> sorted = new TreeMap<>();
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().entrySet()) {
                sorted.computeIfAbsent(names.get(tp.getKey()), k -> new TreeSet<>()).addAll(tp.getValue());
            }
            boolean f2 = true;
            for (Map.Entry<String, TreeSet<Integer>> tp : sorted.entrySet()) {
                for (int p : tp.getValue()) {
                    if (!f2) b.append(", ");
                    f2 = false;
                    b.append('[');
                    Json.quote(b, tp.getKey());
                    b.append(", ").append(p).append(']');
                }
            }
            b.append(']');
        }
        b.append('}');
    }

    static void error(StringBuilder b, Throwable t) {
        b.append("{\"error\": ");
        StackTraceElement[] st = t.getStackTrace();
        String where = st.length == 0 ? "" : " at " + st[0].getClassName() + "." + st[0].getMethodName();
        Json.quote(b, t.getClass().getName() + ": " + t.getMessage() + where);
        b.append('}');
    }

    static Map<String, List<Object>> pairsOf(Map<String, Map<Uuid, Set<Integer>>> result, Map<Uuid, String> names) {
        Map<String, List<Object>> out = new HashMap<>();
        for (Map.Entry<String, Map<Uuid, Set<Integer>>> e : result.entrySet()) {
            List<Object> pairs = new ArrayList<>();
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().entrySet()) {
                for (int p : tp.getValue()) pairs.add(List.of(names.get(tp.getKey()), p));
            }
            out.put(e.getKey(), pairs);
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Map<String, Object> chain = obj(Json.parse(line));
            String name = (String) chain.get("assignor");
            long seed = ((Number) chain.get("seed")).longValue();
            Random rnd = new Random(seed);
            // Topic ids as a broker would have them: random, stable for the chain.
            Map<String, Uuid> brokerIds = new HashMap<>();
            Map<Uuid, String> idNames = new HashMap<>();
            // The chain's state: the target assignment (coordinator form) and, in name form, the
            // previous result handed to the ordered runs.
            Map<String, Assignment> target = new HashMap<>();
            Map<String, List<Object>> currentPairs = new HashMap<>();
            Map<String, Object> initial = chain.get("initial") == null ? Map.of() : obj(chain.get("initial"));
            StringBuilder b = new StringBuilder(8192);
            b.append("{\"id\": ").append(chain.get("id")).append(", \"steps\": [");
            List<Object> steps = arr(chain.get("steps"));
            for (int k = 0; k < steps.size(); k++) {
                Map<String, Object> step = obj(steps.get(k));
                Map<String, Object> topics = obj(step.get("topics"));
                Map<String, Object> members = obj(step.get("members"));
                Image image = new Image();
                for (Map.Entry<String, Object> t : new TreeMap<>(topics).entrySet()) {
                    Uuid id = brokerIds.computeIfAbsent(t.getKey(), n -> new Uuid(rnd.nextLong(), rnd.nextLong()));
                    idNames.put(id, t.getKey());
                    image.add(t.getKey(), id, ((Number) t.getValue()).intValue());
                }
                if (k == 0) {
                    for (Map.Entry<String, Object> e : initial.entrySet()) {
                        target.put(e.getKey(), fromPairs(arr(e.getValue()), brokerIds));
                        currentPairs.put(e.getKey(), arr(e.getValue()));
                    }
                }
                Map<String, Object> renamed = step.get("renamed") == null ? Map.of() : obj(step.get("renamed"));
                for (Map.Entry<String, Object> r : renamed.entrySet()) {
                    Assignment a = target.remove(r.getKey());
                    if (a != null) target.put((String) r.getValue(), a);
                    List<Object> p = currentPairs.remove(r.getKey());
                    if (p != null) currentPairs.put((String) r.getValue(), p);
                }
                target.keySet().retainAll(members.keySet());
                currentPairs.keySet().retainAll(members.keySet());
                if (k > 0) b.append(", ");
                b.append("{\"broker\": ");
                Map<String, Map<Uuid, Set<Integer>>> broker = null;
                try {
                    broker = brokerStep(name, step, image, target);
                    json(b, broker, idNames);
                } catch (Throwable t) {
                    error(b, t);
                }
                if (name.equals("kassign")) {
                    // kassign's plan does not depend on iteration order: only the broker's run.
                    b.append('}');
                    if (broker != null) currentPairs = pairsOf(broker, idNames);
                    continue;
                }
                List<String> sortedMembers = new ArrayList<>(new TreeSet<>(members.keySet()));
                List<String> sortedTopics = new ArrayList<>(new TreeSet<>(topics.keySet()));
                for (String variant : new String[] {"sorted", "shuffled"}) {
                    b.append(", \"").append(variant).append("\": ");
                    try {
                        List<String> mo = new ArrayList<>(sortedMembers);
                        List<String> to = new ArrayList<>(sortedTopics);
                        Random sh = null;
                        if (variant.equals("shuffled")) {
                            sh = new Random(seed * 31 + k);
                            Collections.shuffle(mo, sh);
                            Collections.shuffle(to, sh);
                        }
                        Map<String, Uuid> ids = orderedIds(to);
                        Map<Uuid, String> names = new HashMap<>();
                        ids.forEach((n, id) -> names.put(id, n));
                        json(b, orderedStep(name, step, mo, ids, currentPairs, sh), names);
                    } catch (Throwable t) {
                        error(b, t);
                    }
                }
                b.append('}');
                if (broker != null) currentPairs = pairsOf(broker, idNames);
            }
            // The topic ids the broker run used (kassign breaks ties by topic id).
            b.append("], \"topic_ids\": {");
            boolean firstId = true;
            for (Map.Entry<String, Uuid> e : new TreeMap<>(brokerIds).entrySet()) {
                if (!firstId) b.append(", ");
                firstId = false;
                Json.quote(b, e.getKey());
                b.append(": ");
                Json.quote(b, e.getValue().toString());
            }
            b.append("}}");
            out.println(b);
            out.flush();
        }
    }
}
