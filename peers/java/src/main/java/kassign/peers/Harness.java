package kassign.peers;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Runs Apache Kafka's Java consumer assignors (kafka-clients, public API only) on a kassign JSON
 * scenario (the format of python/kassign/scenario.py).
 *
 * <pre>
 *   java -jar kassign-java-harness.jar version
 *   java -jar kassign-java-harness.jar assign --strategy S FILE|-        # prints {"member": [["t", p], ...]}
 *   java -jar kassign-java-harness.jar time --strategy S [--repeat N] [--budget SEC] [--warmup SEC]
 *                                          [--out FILE] FILE
 * </pre>
 *
 * Inputs are built as Java members would send them: eager strategies (range, roundrobin, sticky)
 * send no owned partitions (they revoked everything before joining); sticky carries its history in
 * the StickyAssignor user data produced by a StickyAssignor instance after onAssignment();
 * cooperative-sticky sends its owned partitions and generation, with the user data produced by a
 * CooperativeStickyAssignor instance. A member's explicit user_data_hex overrides the generated user
 * data. Partition racks, when given, become broker nodes with those racks (replicas), so KIP-881
 * rack logic runs.
 *
 * The time mode prints one JSON line per call ({"event": "warmup"|"sample", "seconds": x}) so a
 * caller can enforce a per-call cap, and a final {"event": "done", ...} line. Only
 * assignor.assign(cluster, groupSubscription) is timed, on a fresh assignor instance and freshly
 * built subscriptions each call (user data buffers are consumed by reading).
 */
public final class Harness {

    static final class MemberSpec {
        String id;
        List<String> topics;
        List<TopicPartition> owned = new ArrayList<>();
        int generation = -1;
        String rack;
        String groupInstanceId;
        byte[] userData;
    }

    static final class Scenario {
        Map<String, Integer> topics = new LinkedHashMap<>();
        List<MemberSpec> members = new ArrayList<>();
        Map<TopicPartition, List<String>> partitionRacks;
    }

    @SuppressWarnings("unchecked")
    static Scenario readScenario(String text) {
        Map<String, Object> doc = (Map<String, Object>) Json.parse(text);
        Scenario sc = new Scenario();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) doc.get("topics")).entrySet()) {
            sc.topics.put(e.getKey(), ((Long) e.getValue()).intValue());
        }
        for (Map.Entry<String, Object> e : ((Map<String, Object>) doc.get("members")).entrySet()) {
            Map<String, Object> m = (Map<String, Object>) e.getValue();
            MemberSpec ms = new MemberSpec();
            ms.id = e.getKey();
            ms.topics = new ArrayList<>();
            for (Object t : (List<Object>) m.get("topics")) ms.topics.add((String) t);
            Object owned = m.get("owned");
            if (owned != null) {
                for (Object pair : (List<Object>) owned) {
                    List<Object> p = (List<Object>) pair;
                    ms.owned.add(new TopicPartition((String) p.get(0), ((Long) p.get(1)).intValue()));
                }
            }
            if (m.get("generation") != null) ms.generation = ((Long) m.get("generation")).intValue();
            ms.rack = (String) m.get("rack");
            ms.groupInstanceId = (String) m.get("group_instance_id");
            String hex = (String) m.get("user_data_hex");
            if (hex != null) ms.userData = hexToBytes(hex);
            sc.members.add(ms);
        }
        Object racks = doc.get("partition_racks");
        if (racks != null) {
            sc.partitionRacks = new HashMap<>();
            for (Object row : (List<Object>) racks) {
                List<Object> r = (List<Object>) row;
                List<String> names = new ArrayList<>();
                for (Object n : (List<Object>) r.get(2)) names.add((String) n);
                sc.partitionRacks.put(new TopicPartition((String) r.get(0), ((Long) r.get(1)).intValue()), names);
            }
        }
        return sc;
    }

    static byte[] hexToBytes(String hex) {
        byte[] out = new byte[hex.length() / 2];
        for (int k = 0; k < out.length; k++) {
            out[k] = (byte) Integer.parseInt(hex.substring(2 * k, 2 * k + 2), 16);
        }
        return out;
    }

    static ConsumerPartitionAssignor newAssignor(String strategy) {
        switch (strategy) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException("strategy: unknown strategy '" + strategy
                    + "'; Java has range, roundrobin, sticky, cooperative-sticky");
        }
    }

    static Cluster buildCluster(Scenario sc) {
        List<PartitionInfo> parts = new ArrayList<>();
        List<Node> nodes = new ArrayList<>();
        if (sc.partitionRacks == null) {
            Node node = new Node(0, "localhost", 9092);
            nodes.add(node);
            Node[] replicas = {node};
            for (Map.Entry<String, Integer> e : sc.topics.entrySet()) {
                for (int p = 0; p < e.getValue(); p++) {
                    parts.add(new PartitionInfo(e.getKey(), p, node, replicas, replicas));
                }
            }
        } else {
            // One broker per rack name; a partition's replicas are the brokers of its racks.
            Map<String, Node> byRack = new LinkedHashMap<>();
            for (List<String> rs : sc.partitionRacks.values()) {
                for (String r : rs) byRack.computeIfAbsent(r, k -> new Node(byRack.size(), "broker-" + k, 9092, k));
            }
            Node noRack = new Node(byRack.size(), "broker-norack", 9092);
            nodes.addAll(byRack.values());
            nodes.add(noRack);
            for (Map.Entry<String, Integer> e : sc.topics.entrySet()) {
                for (int p = 0; p < e.getValue(); p++) {
                    List<String> rs = sc.partitionRacks.get(new TopicPartition(e.getKey(), p));
                    Node[] replicas;
                    if (rs == null || rs.isEmpty()) {
                        replicas = new Node[] {noRack};
                    } else {
                        replicas = new Node[rs.size()];
                        for (int k = 0; k < rs.size(); k++) replicas[k] = byRack.get(rs.get(k));
                    }
                    parts.add(new PartitionInfo(e.getKey(), p, replicas[0], replicas, replicas));
                }
            }
        }
        return new Cluster("kassign-bench", nodes, parts, Collections.emptySet(), Collections.emptySet());
    }

    /** Per member: the user data it would send (null = none), computed once. */
    static Map<String, ByteBuffer> memberUserData(Scenario sc, String strategy) {
        Map<String, ByteBuffer> out = new HashMap<>();
        for (MemberSpec m : sc.members) {
            ByteBuffer ud = null;
            if (m.userData != null) {
                ud = ByteBuffer.wrap(m.userData);
            } else if (strategy.equals("sticky") || strategy.equals("cooperative-sticky")) {
                ConsumerPartitionAssignor a = newAssignor(strategy);
                if (!m.owned.isEmpty() || m.generation >= 0) {
                    a.onAssignment(new Assignment(new ArrayList<>(m.owned)),
                            new ConsumerGroupMetadata("kassign-bench", m.generation, m.id,
                                    Optional.ofNullable(m.groupInstanceId)));
                }
                ud = a.subscriptionUserData(new HashSet<>(m.topics));
            }
            out.put(m.id, ud);
        }
        return out;
    }

    static GroupSubscription buildGroup(Scenario sc, String strategy, Map<String, ByteBuffer> userData) {
        boolean cooperative = strategy.equals("cooperative-sticky");
        Map<String, Subscription> subs = new HashMap<>();
        for (MemberSpec m : sc.members) {
            ByteBuffer ud = userData.get(m.id);
            List<TopicPartition> owned = cooperative ? m.owned : Collections.emptyList();
            Subscription s = new Subscription(m.topics, ud == null ? null : ud.duplicate(), owned, m.generation,
                    Optional.ofNullable(m.rack));
            if (m.groupInstanceId != null) s.setGroupInstanceId(Optional.of(m.groupInstanceId));
            subs.put(m.id, s);
        }
        return new GroupSubscription(subs);
    }

    static String assignmentJson(Scenario sc, Map<String, Assignment> result) {
        StringBuilder b = new StringBuilder(1 << 16);
        b.append('{');
        boolean first = true;
        Comparator<TopicPartition> order = Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);
        for (MemberSpec m : sc.members) {
            if (!first) b.append(", ");
            first = false;
            Json.quote(b, m.id);
            b.append(": [");
            Assignment a = result.get(m.id);
            List<TopicPartition> tps = a == null ? new ArrayList<>() : new ArrayList<>(a.partitions());
            tps.sort(order);
            for (int k = 0; k < tps.size(); k++) {
                if (k > 0) b.append(", ");
                b.append('[');
                Json.quote(b, tps.get(k).topic());
                b.append(", ").append(tps.get(k).partition()).append(']');
            }
            b.append(']');
        }
        b.append('}');
        return b.toString();
    }

    static String readInput(String file) throws IOException {
        if (file.equals("-")) {
            return new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        }
        return Files.readString(Path.of(file));
    }

    static String kafkaVersion() throws IOException {
        Properties p = new Properties();
        try (InputStream in = Harness.class.getResourceAsStream("/harness.properties")) {
            if (in != null) p.load(in);
        }
        return p.getProperty("kafka.version", "unknown");
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) usage();
        String mode = args[0];
        String strategy = null;
        String file = null;
        String outFile = null;
        int repeat = 5;
        double budget = 20.0;
        double warmup = 3.0;
        double minTime = 1.0;
        for (int k = 1; k < args.length; k++) {
            switch (args[k]) {
                case "--strategy": strategy = args[++k]; break;
                case "--repeat": repeat = Integer.parseInt(args[++k]); break;
                case "--budget": budget = Double.parseDouble(args[++k]); break;
                case "--warmup": warmup = Double.parseDouble(args[++k]); break;
                case "--min-time": minTime = Double.parseDouble(args[++k]); break;
                case "--out": outFile = args[++k]; break;
                default: file = args[k];
            }
        }
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        if (mode.equals("version")) {
            out.println("{\"kafka_clients\": \"" + kafkaVersion() + "\", \"java\": \""
                    + System.getProperty("java.version") + "\"}");
            return;
        }
        if (mode.equals("race")) {
            // Several server-side assignors, interleaved in this JVM: ServerBench.race.
            if (strategy == null || file == null) usage();
            Scenario rsc = readScenario(readInput(file));
            ServerBench.race(out, strategy.split(","), rsc, repeat, budget, warmup);
            return;
        }
        if (strategy == null || file == null) usage();
        Scenario sc;
        try {
            sc = readScenario(readInput(file));
        } catch (RuntimeException e) {
            System.err.println("scenario: " + e);
            System.exit(2);
            return;
        }
        long t0 = System.nanoTime();
        if (strategy.startsWith("server-")) {
            // KIP-848 broker-side assignors (kafka-group-coordinator): ServerBench.
            if (!mode.equals("assign") && !mode.equals("time")) usage();
            ServerBench.run(out, mode, strategy, sc, t0, repeat, budget, warmup, minTime, outFile);
            return;
        }
        Cluster cluster = buildCluster(sc);
        Map<String, ByteBuffer> userData = memberUserData(sc, strategy);
        if (mode.equals("assign")) {
            Map<String, Assignment> result = newAssignor(strategy)
                    .assign(cluster, buildGroup(sc, strategy, userData)).groupAssignment();
            out.println(assignmentJson(sc, result));
            return;
        }
        if (!mode.equals("time")) usage();
        out.println("{\"event\": \"ready\", \"setup_s\": " + (System.nanoTime() - t0) / 1e9 + "}");
        Map<String, Assignment> last = null;
        double warmSpent = 0;
        int warmCount = 0;
        while (warmCount < 1 || (warmSpent < warmup && warmCount < 200)) {
            ConsumerPartitionAssignor a = newAssignor(strategy);
            GroupSubscription g = buildGroup(sc, strategy, userData);
            long s = System.nanoTime();
            last = a.assign(cluster, g).groupAssignment();
            double sec = (System.nanoTime() - s) / 1e9;
            warmSpent += sec;
            warmCount++;
            out.println("{\"event\": \"warmup\", \"seconds\": " + sec + "}");
        }
        List<Double> samples = new ArrayList<>();
        double spent = 0;
        // At least `repeat` samples unless the budget runs out; short calls get more samples (up to minTime, 200 calls).
        while (samples.isEmpty() || (samples.size() < repeat && spent < budget) || (spent < minTime && samples.size() < 200)) {
            ConsumerPartitionAssignor a = newAssignor(strategy);
            GroupSubscription g = buildGroup(sc, strategy, userData);
            long c = processCpuNanos();
            long s = System.nanoTime();
            last = a.assign(cluster, g).groupAssignment();
            double sec = (System.nanoTime() - s) / 1e9;
            double cpu = (processCpuNanos() - c) / 1e9;
            spent += sec;
            samples.add(sec);
            out.println("{\"event\": \"sample\", \"seconds\": " + sec + ", \"cpu\": " + cpu + "}");
        }
        if (outFile != null) Files.writeString(Path.of(outFile), assignmentJson(sc, last));
        double[] sorted = samples.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        double median = sorted.length % 2 == 1 ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        out.println("{\"event\": \"done\", \"median\": " + median + ", \"samples\": " + Arrays.toString(sorted) + "}");
    }

    /** CPU time of the whole JVM (all threads: the caller, GC, JIT), so a loaded machine does not bill waiting. */
    static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }

    static void usage() {
        System.err.println("usage: Harness version | assign --strategy S FILE|- | time --strategy S "
                + "[--repeat N] [--budget SEC] [--warmup SEC] [--min-time SEC] [--out FILE] FILE"
                + " | race --strategy S1,S2 [--repeat N] [--budget SEC] [--warmup SEC] FILE");
        System.exit(2);
    }
}
