package kassign.broker;

import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;

/** One member's target assignment: topic id to partitions. */
record KassignMemberAssignment(Map<Uuid, Set<Integer>> partitions) implements MemberAssignment {}
