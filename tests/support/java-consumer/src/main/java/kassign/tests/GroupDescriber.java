package kassign.tests;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.MemberAssignment;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * Describes consumer groups with Apache Kafka's own Admin client, for the broker soak test
 * (tests/broker/test_broker_soak.py).
 *
 * <pre>java -cp CLASSPATH kassign.tests.GroupDescriber BOOTSTRAP TIMEOUT_MS</pre>
 *
 * <p>Reads requests from stdin, one a line: group ids separated by commas. Answers each with one
 * JSON line per group, in the order asked, then a line holding a single {@code .}:
 *
 * <pre>
 * {"group": G, "state": "STABLE", "assignor": "kassign", "coordinator": BROKER_ID, "members": [
 *     {"client": C, "member": M, "assignment": [[TOPIC, P], ...], "target": [[TOPIC, P], ...] or null}, ...]}
 * {"group": G, "error": "the exception describing G raised"}
 * </pre>
 *
 * <p>Every describe is bounded by TIMEOUT_MS. The process ends when stdin closes.
 */
public final class GroupDescriber {
    private GroupDescriber() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: GroupDescriber BOOTSTRAP TIMEOUT_MS");
            System.exit(2);
        }
        int timeoutMs = Integer.parseInt(args[1]);
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Admin admin = Admin.create(props)) {
            String line;
            while ((line = in.readLine()) != null) {
                List<String> groups = new ArrayList<>();
                for (String g : line.split(",")) {
                    if (!g.isBlank()) {
                        groups.add(g.strip());
                    }
                }
                Map<String, KafkaFuture<ConsumerGroupDescription>> futures = admin
                        .describeConsumerGroups(groups, new DescribeConsumerGroupsOptions().timeoutMs(timeoutMs))
                        .describedGroups();
                StringBuilder answer = new StringBuilder();
                for (String group : groups) {
                    try {
                        describe(answer, futures.get(group).get(timeoutMs + 5000L, TimeUnit.MILLISECONDS));
                    } catch (ExecutionException | TimeoutException e) {
                        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                        answer.append("{\"group\":").append(quote(group)).append(",\"error\":")
                                .append(quote(cause.getClass().getSimpleName() + ": " + cause.getMessage())).append('}');
                    }
                    answer.append('\n');
                }
                answer.append(".\n");
                out.print(answer);
                out.flush();
            }
        }
    }

    private static void describe(StringBuilder b, ConsumerGroupDescription d) {
        b.append("{\"group\":").append(quote(d.groupId()))
                .append(",\"state\":").append(quote(d.groupState().name()))
                .append(",\"assignor\":").append(quote(d.partitionAssignor()))
                .append(",\"coordinator\":").append(d.coordinator() == null ? -1 : d.coordinator().id())
                .append(",\"members\":[");
        boolean first = true;
        for (MemberDescription m : d.members()) {
            b.append(first ? "" : ",").append("{\"client\":").append(quote(m.clientId()))
                    .append(",\"member\":").append(quote(m.consumerId()))
                    .append(",\"assignment\":");
            partitions(b, m.assignment());
            b.append(",\"target\":");
            Optional<MemberAssignment> target = m.targetAssignment();
            if (target.isPresent()) {
                partitions(b, target.get());
            } else {
                b.append("null");
            }
            b.append('}');
            first = false;
        }
        b.append("]}");
    }

    private static void partitions(StringBuilder b, MemberAssignment a) {
        List<TopicPartition> tps = new ArrayList<>(a.topicPartitions());
        tps.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        b.append('[');
        for (int i = 0; i < tps.size(); i++) {
            b.append(i == 0 ? "" : ",").append('[').append(quote(tps.get(i).topic())).append(',')
                    .append(tps.get(i).partition()).append(']');
        }
        b.append(']');
    }

    private static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder q = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                q.append('\\').append(c);
            } else if (c < 0x20) {
                q.append(String.format("\\u%04x", (int) c));
            } else {
                q.append(c);
            }
        }
        return q.append('"').toString();
    }
}
