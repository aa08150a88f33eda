package kassign.broker;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiConsumer;

import org.apache.kafka.common.Uuid;

/**
 * A member's plan that holds one partition of each of its topics, as the coordinator receives it
 * ({@code Map<Uuid, Set<Integer>>}): two int arrays instead of a map entry and a set per topic.
 * A fresh group dealt topic by topic gives most members such a plan (on the 1M-partition group, 500
 * topics of one partition each per member). Each value is a one-element set made when it is asked
 * for; the map and its views are unmodifiable (every mutator throws
 * {@link UnsupportedOperationException}), and {@code equals} and {@code hashCode} are those of
 * {@link AbstractMap}, so the plan equals any map with the same entries. Immutable once built:
 * safe to read from several threads.
 */
final class OnePerTopicPlan extends AbstractMap<Uuid, Set<Integer>> {

    private final List<Uuid> topics;
    private final Map<Uuid, Integer> topicIndex;
    /** Indexes into {@code topics}, ascending. */
    private final int[] topicOf;
    /** The partition of {@code topicOf[k]}. */
    private final int[] partitionOf;

    /**
     * {@code topicOf} ascending (indexes into {@code topics}, whose index {@code topicIndex} is),
     * {@code partitionOf[k]} the partition of topic {@code topicOf[k]}; the arrays are the plan's
     * own from now on, and {@code topics} and {@code topicIndex} must not change.
     */
    OnePerTopicPlan(List<Uuid> topics, Map<Uuid, Integer> topicIndex, int[] topicOf, int[] partitionOf) {
        if (topicOf.length != partitionOf.length) throw new IllegalArgumentException("one partition per topic");
        for (int k = 1; k < topicOf.length; k++) {
            if (topicOf[k] <= topicOf[k - 1]) throw new IllegalArgumentException("topics must ascend");
        }
        this.topics = topics;
        this.topicIndex = topicIndex;
        this.topicOf = topicOf;
        this.partitionOf = partitionOf;
    }

    private int find(Object key) {
        Integer t = key instanceof Uuid ? topicIndex.get(key) : null;
        return t == null ? -1 : Arrays.binarySearch(topicOf, t);
    }

    @Override
    public int size() {
        return topicOf.length;
    }

    @Override
    public boolean isEmpty() {
        return topicOf.length == 0;
    }

    @Override
    public boolean containsKey(Object key) {
        return find(key) >= 0;
    }

    @Override
    public Set<Integer> get(Object key) {
        int k = find(key);
        return k < 0 ? null : Collections.singleton(partitionOf[k]);
    }

    @Override
    public void forEach(BiConsumer<? super Uuid, ? super Set<Integer>> action) {
        for (int k = 0; k < topicOf.length; k++) action.accept(topics.get(topicOf[k]), Collections.singleton(partitionOf[k]));
    }

    @Override
    public Set<Entry<Uuid, Set<Integer>>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public int size() {
                return topicOf.length;
            }

            @Override
            public Iterator<Entry<Uuid, Set<Integer>>> iterator() {
                return new Iterator<>() {
                    private int k;

                    @Override
                    public boolean hasNext() {
                        return k < topicOf.length;
                    }

                    @Override
                    public Entry<Uuid, Set<Integer>> next() {
                        if (k >= topicOf.length) throw new NoSuchElementException();
                        int i = k++;
                        return new SimpleImmutableEntry<>(topics.get(topicOf[i]), Collections.singleton(partitionOf[i]));
                    }
                };
            }
        };
    }
}
