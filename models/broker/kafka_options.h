// Apache Kafka 3.7 broker and topic properties (docs/model.md §4.2).
#pragma once

#include <cstdint>

#include "sim/config/options.h"
#include "sim/engine/time.h"

namespace pipesim::broker {

struct KafkaOptions {
  std::int64_t brokers = 3;  // model default
  std::int64_t num_partitions = 8;
  std::int64_t replication_factor = 3;  // model default
  std::int64_t min_insync_replicas = 1;
  bool unclean_leader_election_enable = false;
  sim::Time replica_lag_time_max = sim::Time::millis(30000);
  sim::Time retention = sim::Time::millis(604800000);
  sim::Time broker_session_timeout = sim::Time::millis(9000);
  sim::Time producer_id_expiration = sim::Time::millis(86400000);
  sim::Time producer_id_expiration_check_interval = sim::Time::millis(600000);
  std::int64_t log_segment_bytes = 1073741824;
  sim::Time log_retention_check_interval = sim::Time::millis(300000);
  bool auto_leader_rebalance_enable = true;
  std::int64_t leader_imbalance_check_interval_seconds = 300;
  // The consumer groups' offsets topic: a group's coordinator is the leader
  // of partition abs(groupId.hashCode()) % offsets.topic.num.partitions.
  std::int64_t offsets_topic_num_partitions = 50;
  std::int64_t offsets_topic_replication_factor = 3;
  // Model: producer -> leader -> answer round trip when healthy.
  sim::Time produce_latency = sim::Time::millis(2);
  // Model: time for the followers of the ISR to fetch a leader append and to
  // report it back (the high watermark moves, acks=all is answered); the
  // followers have the records halfway through.
  sim::Time replication_latency = sim::Time::millis(2);
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, KafkaOptions> {
  v.integer("brokers", o.brokers, 1, 1000, "model: number of brokers");
  v.integer("num.partitions", o.num_partitions, 1, 4096, "partitions of the topic");
  v.integer("replication.factor", o.replication_factor, 1, 1000, "replicas per partition");
  v.integer("min.insync.replicas", o.min_insync_replicas, 1, 1000,
            "in-sync replicas an acks=all write needs (one waiting when the ISR shrinks below it is "
            "written, yet answered NOT_ENOUGH_REPLICAS_AFTER_APPEND)");
  v.boolean("unclean.leader.election.enable", o.unclean_leader_election_enable,
            "may an out-of-sync replica become leader");
  v.millis("replica.lag.time.max.ms", o.replica_lag_time_max, 1, 2147483647,
           "a follower this far behind leaves the ISR");
  v.millis("retention.ms", o.retention, 1, 9223372036854LL, "log retention");
  v.millis("broker.session.timeout.ms", o.broker_session_timeout, 1, 2147483647,
           "KRaft: the controller fences a silent broker after this");
  v.millis("producer.id.expiration.ms", o.producer_id_expiration, 1, 2147483647,
           "the broker forgets an idle producer id's sequence state after this");
  v.millis("producer.id.expiration.check.interval.ms", o.producer_id_expiration_check_interval, 1,
           2147483647, "how often the broker looks for expired producer ids");
  v.integer("log.segment.bytes", o.log_segment_bytes, 14, 2147483647,
            "size of a log segment file; retention deletes whole closed files");
  v.millis("log.retention.check.interval.ms", o.log_retention_check_interval, 1, 9223372036854LL,
           "how often retention deletes old segment files");
  v.boolean("auto.leader.rebalance.enable", o.auto_leader_rebalance_enable,
            "move leaderships back to the preferred replicas");
  v.integer("leader.imbalance.check.interval.seconds", o.leader_imbalance_check_interval_seconds, 1,
            2147483647, "KRaft: a leadership off its preferred replica moves back this long after");
  v.duration("produce_latency", o.produce_latency, sim::Time::micros(2), sim::Time::minutes(1),
             "model: healthy produce round trip");
  v.duration("replication_latency", o.replication_latency, sim::Time{0}, sim::Time::minutes(1),
             "model: ISR followers fetch an append and report it back (high watermark, acks=all answer)");
  v.integer("offsets.topic.num.partitions", o.offsets_topic_num_partitions, 1, 2147483647,
            "__consumer_offsets partitions: the group's partition, abs(hash(group.id)) % this, "
            "has the group coordinator as its leader");
  v.integer("offsets.topic.replication.factor", o.offsets_topic_replication_factor, 1, 32767,
            "__consumer_offsets replicas (at most `brokers`): the coordinator moves to another "
            "once its broker is fenced");
  // leader.imbalance.per.broker.percentage is read by the ZooKeeper-mode
  // controller only; the KRaft controller balances every imbalanced partition.
  v.ignored({"leader.imbalance.per.broker.percentage", "replica.fetch.wait.max.ms", "num.network.threads",
             "num.io.threads", "default.replication.factor",
             "log.dirs", "compression.type", "message.max.bytes", "cleanup.policy"});
  v.finish();
}

}  // namespace pipesim::broker
