// The metric names of docs/model.md §9 (other tools rely on them: keep them exactly)
// and which of them the current models do not produce yet, so reports say
// "not modelled yet" instead of presenting a 0 as an answer.
#pragma once

#include <string>
#include <vector>

namespace pipesim::pipeline {

// Every per-run metric, in report order: the docs/model.md §9 names, then the
// capacity figures:
//   inserts_per_s, parts_per_s, keeper_ops_per_s  per second of simulated time
//       (run.duration + run.drain); keeper ops are this pipeline's requests
//       that reached a Keeper leader (background load excluded),
//   keeper_ops_by_source.{inserts,replication,keeper_map,cleanup}  requests,
//   keeper_mean_in_flight      time-weighted mean of requests in Keeper (all load;
//       the closed loop's threads, never more than their number, and this
//       pipeline's own requests, each for its time in Keeper),
//   keeper_in_flight_sampled_{mean,p99,max}  the same count read every
//       keeper.sample_interval (15 s), as a dashboard scraping ZooKeeperRequest
//       shows it: the mean, p99 and largest of its readings,
//   keeper_utilisation_peak    peak of the load the clients would offer if
//       answered at once, over capacity (above 1: the queue holds most threads),
//   keeper_latency_p50_ms, keeper_latency_p99_ms  time in Keeper of every
//       request it served (this pipeline's and the background threads'),
//   insert_latency_p50_ms, insert_latency_p99_ms  server answer time of
//       inserts (the request's arrival at the replica to its answer: the
//       per-query overhead, the part writing and the Keeper requests; the
//       connection and the round trip are the client's, query_path.h),
//   replication_lag_p99_ms     a part's commit until another replica has it,
//   insert_answers.<outcome>   what the sink saw: ok, deduplicated,
//       client_timeout, or a ClickHouse error code,
//   keeper_map_queries, keeper_map_failures  the sink's KeeperMap queries
//       (failures: an error answer or the client's socket timeout),
//   producer_late_answers      produce answers heard late (response_loss "retransmit": a
//       retransmitted answer, or one held behind it on its connection),
//   producer_duplicates_also_failed.<path>  producer_retry duplicates whose send also
//       failed to the application (the callback's exception: a retry table holds the
//       record although Kafka has it twice), by the path of the extra copy,
//   crash_states, crash_states_after_processing  exactlyOnce: partitions with
//       a KeeperMap state at each worker crash (the stored row, or the one a
//       write already sent will store), and how many of them AFTER_PROCESSING,
//   {crash,rebalance}_episodes_stopped  disruption episodes in which any task
//       failed, whatever the message (beside the per-message counts, which overlap),
//   redeliveries               put() of a batch again after a RetriableException,
//   insert_keeper_retries      Keeper requests of inserts retried (insert_keeper_max_retries),
//   block_ids_removed          block ids removed by the cleanup threads,
//   active_parts_peak          most active parts of the table's current partition
//       (what parts_to_delay_insert and parts_to_throw_insert look at),
//   inserts_delayed            inserts that slept for too many parts,
//   too_many_parts_errors      inserts refused with 252 TOO_MANY_PARTS,
//   merges                     background merges assigned.
const std::vector<std::string>& metric_names();
// Metrics that stay 0 because their mechanism is not modelled yet.
const std::vector<std::string>& metrics_not_modelled();
// Fault kinds that are counted when they fire but have no effect yet.
const std::vector<std::string>& faults_not_modelled();

}  // namespace pipesim::pipeline
