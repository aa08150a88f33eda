package kassign.broker;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OnePerTopicPlanTest {

    /**
     * The plan behaves as a HashMap of the same entries (a one-element HashSet per topic) on
     * random content: equals both ways, hashCode, get and containsKey on every topic (present,
     * absent, wrong type), size, iteration, forEach; and refuses every change.
     */
    @Test
    void behavesAsTheSameHashMap() {
        Random rnd = new Random(38);
        for (int round = 0; round < 500; round++) {
            int nt = 1 + rnd.nextInt(30);
            List<Uuid> topics = new ArrayList<>();
            Map<Uuid, Integer> index = new HashMap<>();
            for (int t = 0; t < nt; t++) {
                Uuid id = new Uuid(rnd.nextLong(), rnd.nextLong());
                topics.add(id);
                index.put(id, t);
            }
            List<Integer> ts = new ArrayList<>();
            for (int t = 0; t < nt; t++) if (rnd.nextInt(3) != 0) ts.add(t);
            int[] topicOf = ts.stream().mapToInt(Integer::intValue).toArray();
            int[] partitionOf = new int[topicOf.length];
            Map<Uuid, Set<Integer>> want = new HashMap<>();
            for (int k = 0; k < topicOf.length; k++) {
                partitionOf[k] = rnd.nextInt(5000);
                want.put(topics.get(topicOf[k]), new HashSet<>(Set.of(partitionOf[k])));
            }
            OnePerTopicPlan plan = new OnePerTopicPlan(topics, index, topicOf, partitionOf);
            assertEquals(want, plan);
            assertEquals(plan, want);
            assertEquals(want.hashCode(), plan.hashCode());
            assertEquals(want.size(), plan.size());
            assertEquals(want.isEmpty(), plan.isEmpty());
            for (Uuid t : topics) {
                assertEquals(want.get(t), plan.get(t));
                assertEquals(want.containsKey(t), plan.containsKey(t));
            }
            assertNull(plan.get(Uuid.randomUuid()));
            assertNull(plan.get("not a topic"));
            assertFalse(plan.containsKey(null));
            assertEquals(want.entrySet(), plan.entrySet());
            assertEquals(want.keySet(), plan.keySet());
            Map<Uuid, Set<Integer>> walked = new HashMap<>();
            plan.forEach(walked::put);
            assertEquals(want, walked);
            if (!want.isEmpty()) {
                // One partition different: not equal either way.
                Map<Uuid, Set<Integer>> other = new HashMap<>(want);
                Uuid first = topics.get(topicOf[0]);
                other.put(first, Set.of(partitionOf[0] + 1));
                assertNotEquals(other, plan);
                assertNotEquals(plan, other);
                assertThrows(UnsupportedOperationException.class, () -> plan.remove(first));
                assertThrows(UnsupportedOperationException.class, plan::clear);
                assertThrows(UnsupportedOperationException.class, () -> plan.get(first).add(7));
            }
            assertThrows(UnsupportedOperationException.class, () -> plan.put(topics.get(0), Set.of(1)));
            assertTrue(plan.toString().startsWith("{"));
        }
        assertThrows(IllegalArgumentException.class,
            () -> new OnePerTopicPlan(List.of(), Map.of(), new int[] {1, 0}, new int[] {0, 0}));
        assertThrows(IllegalArgumentException.class,
            () -> new OnePerTopicPlan(List.of(), Map.of(), new int[] {0}, new int[0]));
    }
}
