package kassign.tests;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One member of a consumer group for kassign's mixed Java/Python tests.
 *
 * <p>Joins the group with Apache Kafka's own assignors (by default {@link CooperativeStickyAssignor};
 * {@code --assignors} takes a preference-ordered list of range, roundrobin, sticky,
 * cooperative-sticky, as {@code partition.assignment.strategy} does), each subclassed only to log
 * when this member runs the group assignment. Consumes numbered messages and writes the same
 * JSON-lines events as tests/support/consumer_worker.py: start, assigned, revoked, lost, led, tick, records,
 * released, closed. Stops on SIGTERM (graceful close) or after --max-runtime seconds.
 * {@code --group-instance-id} makes it a static member (KIP-345): its close does not leave the group.
 *
 * <p>Usage: JavaConsumer --bootstrap H:P --group G --topics a,b --name N --events FILE
 * [--assignors cooperative-sticky,range] [--group-instance-id ID]
 * [--session-timeout-ms 6000] [--max-runtime 300] [--rate 0] [--tick 0.3] [--rack R]
 */
public final class JavaConsumer {

    private static EventLog log;

    /** Java's CooperativeStickyAssignor, unchanged, plus a "led" event when it assigns. */
    public static final class LoggingCooperativeStickyAssignor extends CooperativeStickyAssignor {
        @Override
        public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
            long started = System.nanoTime();
            GroupAssignment result = super.assign(metadata, groupSubscription);
            if (log != null) {
                log.write("led", "\"members\":" + groupSubscription.groupSubscription().size()
                        + ",\"seconds\":" + ((System.nanoTime() - started) / 1e9));
            }
            return result;
        }
    }

    /** Java's RangeAssignor, unchanged, plus a "led" event when it assigns. */
    public static final class LoggingRangeAssignor extends RangeAssignor {
        @Override
        public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
            return logged(groupSubscription, () -> super.assign(metadata, groupSubscription));
        }
    }

    /** Java's RoundRobinAssignor, unchanged, plus a "led" event when it assigns. */
    public static final class LoggingRoundRobinAssignor extends RoundRobinAssignor {
        @Override
        public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
            return logged(groupSubscription, () -> super.assign(metadata, groupSubscription));
        }
    }

    /** Java's (eager) StickyAssignor, unchanged, plus a "led" event when it assigns. */
    public static final class LoggingStickyAssignor extends StickyAssignor {
        @Override
        public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
            return logged(groupSubscription, () -> super.assign(metadata, groupSubscription));
        }
    }

    static GroupAssignment logged(GroupSubscription groupSubscription,
                                  java.util.function.Supplier<GroupAssignment> run) {
        long started = System.nanoTime();
        GroupAssignment result = run.get();
        if (log != null) {
            log.write("led", "\"members\":" + groupSubscription.groupSubscription().size()
                    + ",\"seconds\":" + ((System.nanoTime() - started) / 1e9));
        }
        return result;
    }

    /** The logging class of each assignor name (the protocol names Kafka's assignors report). */
    static String assignorClass(String name) {
        switch (name) {
            case "range":
                return LoggingRangeAssignor.class.getName();
            case "roundrobin":
                return LoggingRoundRobinAssignor.class.getName();
            case "sticky":
                return LoggingStickyAssignor.class.getName();
            case "cooperative-sticky":
                return LoggingCooperativeStickyAssignor.class.getName();
            default:
                throw new IllegalArgumentException("unknown assignor " + name
                        + " (expected range, roundrobin, sticky or cooperative-sticky)");
        }
    }

    static final class EventLog {
        private final Writer out;
        private final String name;

        EventLog(String path, String name) throws IOException {
            this.out = new OutputStreamWriter(new FileOutputStream(path, true), StandardCharsets.UTF_8);
            this.name = name;
        }

        synchronized void write(String ev, String fields) {
            StringBuilder sb = new StringBuilder(128);
            sb.append("{\"ev\":\"").append(ev).append("\",\"w\":").append(quote(name))
                    .append(",\"t\":").append(System.currentTimeMillis() / 1000.0);
            if (fields != null && !fields.isEmpty()) {
                sb.append(',').append(fields);
            }
            sb.append("}\n");
            try {
                out.write(sb.toString());
                out.flush();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }

    static String parts(Collection<TopicPartition> tps) {
        List<TopicPartition> sorted = new ArrayList<>(tps);
        sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        StringBuilder sb = new StringBuilder("\"parts\":[");
        for (int i = 0; i < sorted.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append('[').append(quote(sorted.get(i).topic())).append(',').append(sorted.get(i).partition()).append(']');
        }
        return sb.append(']').toString();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value pairs, got " + argv[i]);
            }
            args.put(argv[i].substring(2), argv[i + 1]);
        }
        String name = require(args, "name");
        log = new EventLog(require(args, "events"), name);
        int sessionTimeoutMs = Integer.parseInt(args.getOrDefault("session-timeout-ms", "6000"));
        double maxRuntime = Double.parseDouble(args.getOrDefault("max-runtime", "300"));
        double rate = Double.parseDouble(args.getOrDefault("rate", "0"));
        double tick = Double.parseDouble(args.getOrDefault("tick", "0.3"));

        Properties props = new Properties();
        props.put("bootstrap.servers", require(args, "bootstrap"));
        props.put("group.id", require(args, "group"));
        props.put("client.id", name);
        props.put("group.protocol", "classic");
        String assignors = args.getOrDefault("assignors", "cooperative-sticky");
        List<String> classes = new ArrayList<>();
        for (String a : assignors.split(",")) {
            classes.add(assignorClass(a.trim()));
        }
        props.put("partition.assignment.strategy", String.join(",", classes));
        if (args.containsKey("group-instance-id")) {
            props.put("group.instance.id", args.get("group-instance-id"));
        }
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.put("session.timeout.ms", Integer.toString(sessionTimeoutMs));
        props.put("heartbeat.interval.ms", Integer.toString(Math.max(sessionTimeoutMs / 6, 200)));
        props.put("max.poll.interval.ms", "60000");
        props.put("max.poll.records", args.getOrDefault("max-poll-records", "200"));
        props.put("metadata.max.age.ms", "5000");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        // --protocol consumer: the KIP-848 group protocol; the broker assigns (--remote-assignor
        // uniform|range). That protocol rejects the classic session/heartbeat/assignor settings.
        if (args.getOrDefault("protocol", "classic").equals("consumer")) {
            props.put("group.protocol", "consumer");
            props.remove("partition.assignment.strategy");
            props.remove("session.timeout.ms");
            props.remove("heartbeat.interval.ms");
            if (args.containsKey("remote-assignor")) {
                props.put("group.remote.assignor", args.get("remote-assignor"));
            }
        }
        if (args.containsKey("instance-id")) {
            props.put("group.instance.id", args.get("instance-id"));
        }
        if (args.containsKey("rack")) {
            props.put("client.rack", args.get("rack"));
        }

        AtomicBoolean stop = new AtomicBoolean(false);
        CountDownLatch done = new CountDownLatch(1);
        log.write("start", "\"pid\":" + ProcessHandle.current().pid() + ",\"client\":\"java\",\"strategy\":" + quote(assignors));
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.set(true);
            consumer.wakeup();
            try {
                done.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }));

        consumer.subscribe(Arrays.asList(require(args, "topics").split(",")), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                log.write("revoked", parts(partitions));
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                log.write("assigned", parts(partitions));
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                log.write("lost", parts(partitions));
            }
        });

        long started = System.nanoTime();
        long deadline = started + (long) (maxRuntime * 1e9);
        long nextTick = 0;
        long consumed = 0;
        boolean graceful = false;
        boolean uncommitted = false;
        boolean commitNeeded = false;
        try {
            while (!stop.get() && System.nanoTime() < deadline) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(Duration.ofMillis(100));
                } catch (WakeupException e) {
                    break;
                }
                if (!records.isEmpty() || uncommitted) {
                    commitNeeded = true;
                }
                if (!records.isEmpty()) {
                    StringBuilder values = new StringBuilder("\"values\":[");
                    boolean first = true;
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        if (!first) {
                            values.append(',');
                        }
                        first = false;
                        values.append(new String(r.value(), StandardCharsets.US_ASCII));
                    }
                    log.write("records", values.append(']').toString());
                    consumed += records.count();
                }
                if (commitNeeded) {
                    // A commit that failed (a rebalance in progress) is retried on the next pass, so a
                    // member that keeps its partitions still commits up to the log end.
                    commitNeeded = false;
                    try {
                        consumer.commitSync(Duration.ofSeconds(10));
                        uncommitted = false;
                    } catch (WakeupException e) {
                        break;
                    } catch (KafkaException e) {
                        log.write("commit-failed", "\"error\":" + quote(e.getClass().getSimpleName()));
                        uncommitted = true;
                    }
                }
                long now = System.nanoTime();
                if (now >= nextTick) {
                    ConsumerGroupMetadata gm = consumer.groupMetadata();
                    log.write("tick", "\"gen\":" + gm.generationId() + ",\"member\":" + quote(gm.memberId()) + ","
                            + parts(consumer.assignment()));
                    nextTick = now + (long) (tick * 1e9);
                }
                if (rate > 0) {
                    double ahead = consumed / rate - (System.nanoTime() - started) / 1e9;
                    if (ahead > 0) {
                        Thread.sleep((long) (Math.min(ahead, 0.2) * 1000));
                    }
                }
            }
            graceful = stop.get();
        } finally {
            if (graceful) {
                log.write("released", parts(consumer.assignment()));
            }
            consumer.close(Duration.ofSeconds(10));
            if (graceful) {
                log.write("closed", "");
            }
            done.countDown();
        }
    }

    private static String require(Map<String, String> args, String key) {
        String v = args.get(key);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + key);
        }
        return v;
    }
}
