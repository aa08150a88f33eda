package kassign.peers;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.ModernGroup;
import org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl;
import org.apache.kafka.coordinator.group.modern.SubscriptionCount;

/**
 * {@code server-uniform} / {@code server-range} in {@link Harness}'s {@code assign} and {@code time}
 * modes: the broker's {@code UniformAssignor} / {@code RangeAssignor} (kafka-group-coordinator) on a
 * kassign scenario document, whose {@code owned} partitions are each member's current target
 * assignment.
 *
 * <p>The input is built once, as the group coordinator's {@code TargetAssignmentBuilder} builds it:
 * a {@code GroupSpecImpl} over a {@code HashMap} of {@code MemberSubscriptionAndAssignmentImpl}
 * (subscribed topic ids, instance id, the target {@code Assignment}), the subscription type from
 * {@code ModernGroup.subscriptionType}, the inverted target assignment, and a
 * {@code SubscribedTopicDescriberImpl} over a metadata image with random (seeded) topic ids. Only
 * {@code assignor.assign(groupSpec, describer)} is timed, on a fresh assignor each call (the
 * assignors do not modify their input).
 */
final class ServerBench {

    private ServerBench() {}

    static ConsumerGroupPartitionAssignor assignor(String strategy) {
        if (strategy.equals("server-uniform")) return ServerDiff.assignor("uniform");
        if (strategy.equals("server-range")) return ServerDiff.assignor("range");
        // kassign's broker plugin (dist/kassign-broker-<version>.jar on the class path): the JNI call
        // and every conversion are inside the timed assign().
        if (strategy.equals("server-kassign")) return ServerDiff.assignor("kassign");
        throw new IllegalArgumentException("unknown strategy " + strategy);
    }

    static final class Input {
        GroupSpecImpl spec;
        SubscribedTopicDescriberImpl describer;
        Map<Uuid, String> names = new HashMap<>();
    }

    static Input build(Harness.Scenario sc) {
        Input in = new Input();
        Random rnd = new Random(9987);
        ServerDiff.Image image = new ServerDiff.Image();
        Map<String, Uuid> ids = new HashMap<>();
        for (Map.Entry<String, Integer> t : new TreeMap<>(sc.topics).entrySet()) {
            Uuid id = new Uuid(rnd.nextLong(), rnd.nextLong());
            ids.put(t.getKey(), id);
            in.names.put(id, t.getKey());
            image.add(t.getKey(), id, t.getValue());
        }
        Map<String, SubscriptionCount> counts = new HashMap<>();
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        for (Harness.MemberSpec m : sc.members) {
            Set<Uuid> subscribed = new HashSet<>();
            for (String t : new TreeSet<>(m.topics)) {
                counts.merge(t, new SubscriptionCount(1, 0), (a, b) -> new SubscriptionCount(a.byNameCount() + 1, 0));
                Uuid id = ids.get(t);
                if (id != null) subscribed.add(id);
            }
            Map<Uuid, Set<Integer>> target = new HashMap<>();
            for (TopicPartition tp : m.owned) {
                Uuid id = ids.get(tp.topic());
                if (id == null || tp.partition() < 0 || tp.partition() >= sc.topics.get(tp.topic())) continue;
                target.computeIfAbsent(id, k -> new HashSet<>()).add(tp.partition());
                inverted.computeIfAbsent(id, k -> new HashMap<>()).put(tp.partition(), m.id);
            }
            for (Map.Entry<Uuid, Set<Integer>> e : target.entrySet()) e.setValue(Collections.unmodifiableSet(e.getValue()));
            members.put(m.id, new MemberSubscriptionAndAssignmentImpl(Optional.empty(),
                Optional.ofNullable(m.groupInstanceId), subscribed, new Assignment(target)));
        }
        in.spec = new GroupSpecImpl(Collections.unmodifiableMap(members),
            ModernGroup.subscriptionType(counts, members.size()), inverted);
        in.describer = new SubscribedTopicDescriberImpl(image);
        return in;
    }

    static String json(Harness.Scenario sc, GroupAssignment result, Map<Uuid, String> names) {
        StringBuilder b = new StringBuilder();
        b.append('{');
        boolean first = true;
        for (Harness.MemberSpec m : sc.members) {
            if (!first) b.append(", ");
            first = false;
            Json.quote(b, m.id);
            b.append(": [");
            MemberAssignment a = result.members().get(m.id);
            TreeMap<String, TreeSet<Integer>> sorted = new TreeMap<>();
            if (a != null) {
                for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet()) {
                    sorted.computeIfAbsent(names.get(e.getKey()), k -> new TreeSet<>()).addAll(e.getValue());
                }
            }
            boolean f2 = true;
            for (Map.Entry<String, TreeSet<Integer>> e : sorted.entrySet()) {
                for (int p : e.getValue()) {
                    if (!f2) b.append(", ");
                    f2 = false;
                    b.append('[');
                    Json.quote(b, e.getKey());
                    b.append(", ").append(p).append(']');
                }
            }
            b.append(']');
        }
        return b.append('}').toString();
    }

    /** The assign and time modes (same protocol as Harness's). */
    static void run(PrintStream out, String mode, String strategy, Harness.Scenario sc, long t0, int repeat,
                    double budget, double warmup, double minTime, String outFile) throws Exception {
        Input in = build(sc);
        if (mode.equals("assign")) {
            out.println(json(sc, assignor(strategy).assign(in.spec, in.describer), in.names));
            return;
        }
        out.println("{\"event\": \"ready\", \"setup_s\": " + (System.nanoTime() - t0) / 1e9 + "}");
        GroupAssignment last = null;
        double warmSpent = 0;
        int warmCount = 0;
        while (warmCount < 1 || (warmSpent < warmup && warmCount < 200)) {
            ConsumerGroupPartitionAssignor a = assignor(strategy);
            long s = System.nanoTime();
            last = a.assign(in.spec, in.describer);
            double sec = (System.nanoTime() - s) / 1e9;
            warmSpent += sec;
            warmCount++;
            out.println("{\"event\": \"warmup\", \"seconds\": " + sec + "}");
        }
        List<Double> samples = new ArrayList<>();
        double spent = 0;
        while (samples.isEmpty() || (samples.size() < repeat && spent < budget) || (spent < minTime && samples.size() < 200)) {
            ConsumerGroupPartitionAssignor a = assignor(strategy);
            long c = Harness.processCpuNanos();
            long s = System.nanoTime();
            last = a.assign(in.spec, in.describer);
            double sec = (System.nanoTime() - s) / 1e9;
            double cpu = (Harness.processCpuNanos() - c) / 1e9;
            spent += sec;
            samples.add(sec);
            out.println("{\"event\": \"sample\", \"seconds\": " + sec + ", \"cpu\": " + cpu + "}");
        }
        if (outFile != null) Files.writeString(Path.of(outFile), json(sc, last, in.names));
        double[] sorted = samples.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        double median = sorted.length % 2 == 1 ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        out.println("{\"event\": \"done\", \"median\": " + median + ", \"samples\": " + Arrays.toString(sorted) + "}");
    }

    /**
     * The race mode: the assignors of {@code strategies} on the same input in this JVM, each one
     * instance reused across calls (as a broker holds its assignors), calls interleaved (the order
     * rotating each round) so that the load of a shared machine falls on every side alike. Warm-up
     * rounds until {@code warmup} seconds have passed and at least {@link #WARM_ROUNDS} rounds are
     * done (on the largest groups a few seconds are a few calls, too few for the JIT compiler to
     * finish with either side's loops), then rounds until
     * {@code repeat} rounds are done or {@code budget} seconds are spent (at least 3, at most
     * 500). One line per strategy: wall time, process CPU time (every JVM thread, GC included, on
     * the process clock's resolution) and the calling thread's CPU time of each timed call.
     */
    /** The fewest warm-up rounds of {@link #race}: each assignor called this many times first. */
    static final int WARM_ROUNDS = 50;

    static void race(PrintStream out, String[] strategies, Harness.Scenario sc, int repeat, double budget,
                     double warmup) {
        Input in = build(sc);
        int n = strategies.length;
        ConsumerGroupPartitionAssignor[] assignors = new ConsumerGroupPartitionAssignor[n];
        for (int i = 0; i < n; i++) assignors[i] = assignor(strategies[i]);
        List<List<double[]>> samples = new ArrayList<>();
        for (int i = 0; i < n; i++) samples.add(new ArrayList<>());
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long start = System.nanoTime();
        int rounds = 0;
        boolean warm = true;
        while (true) {
            double spent = (System.nanoTime() - start) / 1e9;
            if (warm && rounds >= WARM_ROUNDS && spent >= warmup) {
                warm = false;
                rounds = 0;
                start = System.nanoTime();
                continue;
            }
            if (!warm && rounds >= 3 && (rounds >= repeat || spent >= budget || rounds >= 500)) break;
            for (int k = 0; k < n; k++) {
                int i = (k + rounds) % n;
                long c = Harness.processCpuNanos();
                long t = threads.getCurrentThreadCpuTime();
                long s = System.nanoTime();
                GroupAssignment r = assignors[i].assign(in.spec, in.describer);
                long wall = System.nanoTime() - s;
                long thread = threads.getCurrentThreadCpuTime() - t;
                long cpu = Harness.processCpuNanos() - c;
                if (r.members().size() != sc.members.size()) throw new IllegalStateException(strategies[i]);
                if (!warm) samples.get(i).add(new double[] {wall / 1e9, cpu / 1e9, thread / 1e9});
            }
            rounds++;
        }
        for (int i = 0; i < n; i++) {
            StringBuilder b = new StringBuilder("{\"event\": \"race\", \"strategy\": \"" + strategies[i] + "\", \"wall\": [");
            List<double[]> l = samples.get(i);
            for (int j = 0; j < l.size(); j++) b.append(j == 0 ? "" : ", ").append(l.get(j)[0]);
            b.append("], \"cpu\": [");
            for (int j = 0; j < l.size(); j++) b.append(j == 0 ? "" : ", ").append(l.get(j)[1]);
            b.append("], \"thread\": [");
            for (int j = 0; j < l.size(); j++) b.append(j == 0 ? "" : ", ").append(l.get(j)[2]);
            out.println(b.append("]}"));
        }
    }
}
