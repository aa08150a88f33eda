package kassign.peers;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.common.Cluster;

/**
 * Batch mode for differential testing (tests/support/java_diff.py): many scenarios in one JVM.
 *
 * <pre>
 *   java -cp kassign-java-harness.jar kassign.peers.Differential [--timeout SEC] &lt; scenarios.jsonl
 * </pre>
 *
 * Each stdin line is one kassign JSON scenario (python/kassign/scenario.py) with two extra keys:
 * {@code "id"} (echoed back) and {@code "strategies"} (the Java assignors to run). Each stdout line
 * is {@code {"id": ID, "results": {"range": {"assignment": {...}}, "sticky": {"error": "..."}, ...}}}.
 * Inputs are built exactly as the {@code assign} mode of {@link Harness} builds them (its
 * package-level helpers are reused, unmodified), on a fresh assignor instance per call. A call that
 * throws reports {@code "error"} (exception class and message); one that runs longer than the
 * timeout reports {@code "timeout"} and its thread is abandoned.
 */
public final class Differential {

    private Differential() {}

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        double timeout = 20.0;
        for (int k = 0; k < args.length; k++) {
            if (args[k].equals("--timeout")) timeout = Double.parseDouble(args[++k]);
            else {
                System.err.println("usage: Differential [--timeout SEC] < scenarios.jsonl");
                System.exit(2);
            }
        }
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ExecutorService pool = newPool();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Map<String, Object> doc = (Map<String, Object>) Json.parse(line);
            Object id = doc.get("id");
            List<String> strategies = new ArrayList<>();
            for (Object s : (List<Object>) doc.get("strategies")) strategies.add((String) s);
            Harness.Scenario sc = Harness.readScenario(line);
            StringBuilder b = new StringBuilder(4096);
            b.append("{\"id\": ");
            if (id instanceof String) Json.quote(b, (String) id);
            else b.append(id);
            b.append(", \"results\": {");
            boolean first = true;
            for (String strategy : strategies) {
                if (!first) b.append(", ");
                first = false;
                Json.quote(b, strategy);
                b.append(": ");
                Future<String> f = pool.submit(() -> runOne(sc, strategy));
                try {
                    String json = f.get((long) (timeout * 1000), TimeUnit.MILLISECONDS);
                    b.append("{\"assignment\": ").append(json).append('}');
                } catch (TimeoutException e) {
                    f.cancel(true);
                    pool.shutdownNow();
                    pool = newPool();
                    b.append("{\"timeout\": ").append(timeout).append('}');
                } catch (java.util.concurrent.ExecutionException e) {
                    Throwable c = e.getCause();
                    b.append("{\"error\": ");
                    Json.quote(b, c.getClass().getName() + ": " + c.getMessage());
                    b.append(", \"where\": ");
                    Json.quote(b, topFrame(c));
                    b.append('}');
                }
            }
            b.append("}}");
            out.println(b);
            out.flush();
        }
        pool.shutdownNow();
    }

    private static ExecutorService newPool() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "differential-assign");
            t.setDaemon(true);
            return t;
        });
    }

    private static String runOne(Harness.Scenario sc, String strategy) {
        Cluster cluster = Harness.buildCluster(sc);
        Map<String, ByteBuffer> userData = Harness.memberUserData(sc, strategy);
        Map<String, Assignment> result = Harness.newAssignor(strategy)
                .assign(cluster, Harness.buildGroup(sc, strategy, userData)).groupAssignment();
        return Harness.assignmentJson(sc, result);
    }

    private static String topFrame(Throwable t) {
        StackTraceElement[] st = t.getStackTrace();
        if (st.length == 0) {
            StringWriter w = new StringWriter();
            t.printStackTrace(new PrintWriter(w));
            return w.toString();
        }
        return st[0].getClassName() + "." + st[0].getMethodName() + ":" + st[0].getLineNumber();
    }
}
