#!/usr/bin/python3
"""The lab table of VALIDATION.md: runs every configs/lab/*.json (one seed)
and prints, for each, the real-world behaviour it reproduces, the command and
the metrics pipesim reports (non-zero ones of interest).

usage: tools/validation_table.py PIPESIM
"""
import glob
import json
import os
import subprocess
import sys

# What each lab shows, in words (docs/model.md §4). Labs not listed are shown by name.
BEHAVIOUR = {
    "keeper_backlog_insert_timeout": "a Keeper backlog (5% capacity, 1,000 waiting threads) holds the threads' "
                                     "requests past operation_timeout_ms: the session is finalized, the replica "
                                     "read-only, its threads' queued requests drain, the session is back and ends "
                                     "again; the insert's commit retries outlive the client's timeout and commit "
                                     "after the redelivery (window 0: written twice)",
    "keeper_backlog_insert_timeout_deduplicated": "the same with the default window: the late first delivery is a "
                                                  "dedup hit nobody hears",
    "clickhouse_quorum_timeout": "insert_quorum 2 with the other replica down: the insert commits, its quorum wait "
                                 "times out (319, the part stays), and the redelivery that reaches a live replica is "
                                 "a dedup hit",
    "clickhouse_too_many_parts": "merges held up (one slot, taken for an hour): from parts_to_delay_insert (20 here) "
                                 "every insert sleeps, at parts_to_throw_insert (40) it fails with 252 TOO_MANY_PARTS, "
                                 "retriable: the batch is put again, nothing lost or written twice",
    "crash_replay_at_least_once": "exactlyOnce off: a kill -9 re-inserts everything put since the last commit "
                                  "(3050 = 9050 inserted - 6000 committed)",
    "crash_exactly_once_mismatch": "exactlyOnce on: the replay starts before the stored AFTER_PROCESSING range: "
                                   "State MISMATCH at every restart (restart_only runbook)",
    "crash_exactly_once_tolerate": "tolerateStateMismatch=true: the PREVIOUS batches are skipped, the overlap is cut, "
                                   "no duplicate",
    "crash_exactly_once_dlq": "errors.tolerance=all + DLQ: the mismatching batches go to the DLQ although they are "
                              "already in ClickHouse",
    "crash_after_insert_exactly_once": "a crash right after an insert, replay as one larger batch: OVER_LAPPING cuts "
                                       "the overlap",
    "crash_after_insert_at_least_once": "the same crash with exactlyOnce off: the replay is written twice",
    "crash_during_insert_error_state": "a crash during an insert leaves BEFORE_PROCESSING; the replay starting before "
                                       "it is ERROR State, which tolerateStateMismatch does not cover",
    "unknown_insert_then_smaller_polls_with_dlq": "an insert of unknown outcome, then a restart with a smaller "
                                                  "max.poll.records: State CONTAINS, the range ends only in the DLQ",
    "unknown_insert_then_smaller_polls_without_dlq": "the same without a DLQ: the range is lost, offsets committed",
    "clickhouse_socket_timeout_outlasts_the_hang": "jdbcConnectionProperties socket_timeout=60000 (not "
                                                   "timeoutSeconds, the ping's): the client waits out a 35 s "
                                                   "hang, no redelivery",
    "keeper_election_state_write_retried": "a KeeperMap state write during a 2 s election: the server retries "
                                           "its Keeper requests (insert_keeper_*) and gets through; no failure",
    "keeper_election_state_query_fails": "a KeeperMap state read during a 2 s election: the server retries it "
                                         "(keeper_max_retries) and answers within the socket timeout",
    "keeper_stall_sessions_expire_inserts_wait": "a 15 s keeper_stall: past operation_timeout_ms every server's "
                                                 "session ends; each restarting thread's handshake waits for "
                                                 "the stall's end; the insert commits within its socket timeout",
    "keeper_stall_commit_multi_applies_late": "Keeper stalls while an insert's commit multi is queued: the "
                                              "sessions end, the multi is applied at the stall's end, and the "
                                              "insert's retry finds its part (one request, not three)",
    "keeper_cleanup_burst_in_flight": "one replica's cleanup thread at ~310 inserts/s: every 30 s one MultiRead "
                                      "of its ~12,400 outdated parts' znodes, then a remove each, all at once, "
                                      "in flight beside the threads the read held (~12,500); then its ~9,500 "
                                      "new block ids' alike",
    "keeper_stall_inserts_outlive_the_socket_timeout": "a 40 s keeper_stall: handshakes time out three times, "
                                                       "the insert commits 42.6 s after its put, the client "
                                                       "timed out and the redelivery is a dedup hit",
    "producer_retransmit_head_of_line": "response_loss \"retransmit\": one answer retransmitted after the RTO "
                                        "(202 ms) holds up the four behind it on the connection: 5 late "
                                        "answers, nothing retried",
    "producer_retransmit_gives_up_after_tcp_retries2": "response_loss \"retransmit\" with tcp_retries2 2: the "
                                                       "kernel gives up, the connection is reset and every request "
                                                       "on it retried; the written one is in Kafka twice "
                                                       "(idempotence off)",
    "producer_retransmit_arrives_after_the_deadline": "a retry's answer, retransmitted past its batch's "
                                                      "delivery timeout: TimeoutException (yet in Kafka), "
                                                      "then the late success resolves the sequence; no bump",
    "producer_retransmit_gives_up_after_the_deadline": "the same answer's retransmissions give up "
                                                       "(tcp_retries2 6) after the deadline: the reset is a late "
                                                       "failure, the epoch bump re-numbers a written batch, "
                                                       "appended again (KAFKA-14034)",
    "query_costs_insert_rate": "a saturated task, client_version V1: a TCP + TLS connection per insert sets "
                               "its rate (V2: 1.86 times as many inserts; the lab test)",
    "query_costs_crash_while_state_write_in_flight": "a worker crash while the AFTER_PROCESSING write is on "
                                                     "its way: the server applies it, the replay is SAME and "
                                                     "skipped",
    "query_costs_slow_keeper_outlives_socket_timeout": "a 40 s election during a state write: the client "
                                                       "times out at 30 s, resends, and both executions "
                                                       "commit when Keeper is back; no redelivery",
    "state_contains_fails_the_task": "State CONTAINS with errors.tolerance=none: the task FAILS at every "
                                     "restart; nothing lost, the records wait in Kafka",
    "state_contains_tolerate_does_not_help": "tolerateStateMismatch=true does not cover State CONTAINS: the "
                                             "same failures",
    "state_contains_delete_state_row_rewrites": "delete_state_row after State CONTAINS: the segment is "
                                                "rewritten, nothing lost or duplicated",
    "broker_min_insync_refuses_writes": "min.insync.replicas=2 with the only follower dead: the waiting append "
                                        "is written yet answered NOT_ENOUGH_REPLICAS_AFTER_APPEND, later ones "
                                        "refused; the expired ones are lost (on_send_failure=drop), but for the "
                                        "one already in the log",
    "broker_min_insync_written_then_refused": "the follower back within the delivery timeout: the written-but-refused "
                                              "append's retry is a DUPLICATE_SEQUENCE with idempotence (nothing "
                                              "twice); without it, appended again",
    "broker_leader_flapping_not_idempotent": "controlled leader moves catch an acks=all append waiting for its "
                                             "followers: NOT_LEADER_OR_FOLLOWER although written; without "
                                             "idempotence each retry is appended again (path not_idempotent)",
    "producer_response_loss_idempotent": "answers lost in a stall: the broker goes on appending the connection's "
                                         "requests, none answered until request.timeout.ms; the five retries "
                                         "are DUPLICATE_SEQUENCE",
    "producer_response_loss_not_idempotent": "the same stall without idempotence: all five written batches are "
                                             "appended again (path not_idempotent)",
    "producer_response_loss_reset_not_idempotent": "a lost answer with a connection reset: the client sees it "
                                                   "within 1 ms and retries only the answered request",
    "producer_epoch_bump_after_a_late_disconnect": "KAFKA-14034: a batch that expired in flight is failed again "
                                                   "by a late disconnect, the epoch bump re-numbers four written "
                                                   "but unacknowledged batches, appended again (path "
                                                   "epoch_bump_resend)",
    "producer_id_expired_before_retry": "the broker forgot the producer id (producer.id.expiration.ms) before the "
                                        "retries: five batches appended again with idempotence on",
    "producer_restart_with_in_flight_batches": "a restarted producer (new id): the application re-sends what was "
                                               "not acknowledged, five batches of it already written",
    "keeper_session_loss_read_only": "a replica's Keeper session lost for 50 s: the insert is taken and its "
                                      "commit retries (ZooKeeperRetriesControl); the client times out, the "
                                      "redelivery commits, the late commit is a dedup hit",
    "keeper_session_loss_longer_than_the_commit_retries": "the session lost for 200 s, longer than the commit "
                                                          "retries (~143 s): two orphans fail with 242 unheard, "
                                                          "the third commits late, the fourth is a dedup hit",
    "runbook_delete_state_row": "runbook delete_state_row: the replay is inserted again (state_reset duplicates)",
    "task_failure_commits_returned_puts": "a FAILED task commits the puts that returned before its consumer "
                                          "closes (WorkerSinkTask closeAllPartitions): delete_state_row recovers "
                                          "two partitions, each re-inserted once",
    "report_inserted_offsets_failing_task_commits_nothing": "reportInsertedOffsets=true: the failing put "
                                                            "inserted p0 beyond the returned puts, so its closing "
                                                            "commit moves nothing and every restart replays the "
                                                            "same batches",
    "buffer_count_failed_flush_holds_a_batch_twice": "bufferCount: a flush that times out keeps the buffer, and the "
                                                     "batch put again is appended again: 2 redeliveries, record "
                                                     "3999 inserted 3 times",
    "buffer_count_topic_wide_insert_has_no_token": "bufferCount with ignorePartitionsWhenBatching: no dedup token, "
                                                   "three attempts with different data, all written",
    "task_fails_at_start_while_clickhouse_is_down": "SinkTask.start pings a ClickHouse server that is down: the "
                                                    "restarted task is FAILED at start until the operator restarts it",
    "runbook_tolerate_then_revert": "runbook tolerate_then_revert: the replay is skipped, then the setting reverted",
    "runbook_tolerate_switch_restarts_every_task": "switching tolerateStateMismatch is a connector config change: "
                                                   "every task restarts with it, the other FAILED task too "
                                                   "(265 s less downtime than waiting for its own restart)",
    "task_restart_cancelled_put_runs_to_its_end": "a stop that outlives task.shutdown.graceful.timeout.ms is "
                                                  "cancelled: the orphan finishes its put (all three partitions' "
                                                  "inserts), stays in the group until then, commits nothing",
    "commit_fails_while_the_coordinator_is_down": "periodic commits are asynchronous: they fail while the group "
                                                  "coordinator's broker is dead and not yet fenced, so a kill then "
                                                  "replays from the last commit that succeeded",
    "worker_restart_restarts_a_failed_task": "a restarted worker starts its FAILED task again, with no eviction "
                                             "to wait for (its consumer had left): State MISMATCH again at once",
    "state_wipe_then_replay": "the KeeperMap table recreated empty while the task is down: the replay is inserted "
                              "again (state_reset)",
    "two_workers_takeover_at_least_once": "two workers: the survivor takes the dead worker's partition after "
                                          "session.timeout.ms and replays it",
    "two_workers_follower_back_early_waits_for_the_delay": "a follower worker back after 1 min: its task "
                                                           "still waits for the delayed rebalance (310 s down)",
    "two_workers_leader_dies_tasks_move_at_once": "the worker group's leader dies: the new leader does not "
                                                  "know the previous assignment, its task moves at once (10 s)",
    "two_workers_takeover_exactly_once": "the same with exactlyOnce: State MISMATCH cascades to the surviving task",
    "put_outlives_max_poll_interval": "a put() longer than max.poll.interval.ms: the consumer leaves the group, "
                                      "re-reads from the last commit, and its in-memory state skips what it inserted",
    "put_outlives_max_poll_interval_takeover": "the same with two tasks and no dedup window: they take the "
                                               "partitions from each other and replay them (a rebalance storm)",
}

# Not shown: volumes every lab has, and the capacity figures (their own section of docs/guide.md).
SKIP = ("events_processed", "aggregate_task_s", "kafka_records", "records_produced", "max_lag_records", "keeper_ops",
        "keeper_peak_in_flight", "inserts", "faults_fired", "classifications.AFTER_PROCESSING.NEW",
        "parts_per_s", "keeper_mean_in_flight", "keeper_in_flight_sampled_", "zookeeper_request_", "keeper_utilisation_peak", "keeper_latency_",
        "insert_latency_", "replication_lag_", "insert_answers.ok", "block_ids_removed", "merges",
        "active_parts_peak")


def flatten(prefix, node, out):
    for k, v in node.items():
        name = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict) and "mean" not in v:
            flatten(name, v, out)
        else:
            out[name] = v["mean"] if isinstance(v, dict) else v


def main():
    pipesim = sys.argv[1]
    print("| lab (configs/lab/) | real-world behaviour | what pipesim prints (seed 1) |")
    print("|---|---|---|")
    for path in sorted(glob.glob("configs/lab/*.json")):
        name = os.path.basename(path)[:-5]
        out = subprocess.run([pipesim, "run", path, "--seed", "1", "--format", "json"],
                             check=True, capture_output=True, text=True).stdout
        metrics = {}
        flatten("", json.loads(out)["metrics"], metrics)
        shown = [f"{k}={v:g}" for k, v in metrics.items()
                 if v and not k.startswith(SKIP) and not k.endswith(("_episodes",))]
        print(f"| `{name}` | {BEHAVIOUR.get(name, name.replace('_', ' '))} | {', '.join(shown)} |")


if __name__ == "__main__":
    main()
