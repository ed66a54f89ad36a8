#include "models/sink/clickhouse_sink_task.h"

#include <algorithm>

#include "models/sink/decide_cases.h"
#include "models/sink/partition_order.h"
#include "sim/engine/invariant.h"

namespace pipesim::sink {

ClickHouseSinkTask::ClickHouseSinkTask(SinkTaskHost& host, const SinkDependencies& deps,
                                       SinkStateStore* state)
    : host_(host),
      deps_(deps),
      state_(state),
      tolerate_state_mismatch_(deps.options->tolerate_state_mismatch) {}

bool ClickHouseSinkTask::start() {
  // ProxySinkTask creates an InMemoryState per task instance; KeeperMap
  // state lives in ClickHouse and survives.
  if (!state_->keeper_map()) state_->clear();
  batch_.clear();
  failed_.clear();
  buffer_.reset(host_.now());
  flushing_ = false;
  inserted_.clear();
  replays_told_.clear();
  phase_ = Phase::IDLE;
  // With every server up each start query answers in a round trip: the
  // task polls at once (their milliseconds are not modelled: issue 34's note).
  if (!deps_.table->any_replica_down()) return true;
  // exactlyOnce: the KeeperStateProvider constructor pings (its result only
  // logged) and sends CREATE TABLE IF NOT EXISTS ... ENGINE=KeeperMap; then
  // ClickHouseWriter.start pings, reads version() and the table mapping.
  start_query_ = state_->keeper_map() ? StartQuery::STATE_PING : StartQuery::PING;
  start_attempts_ = 0;
  phase_ = Phase::STARTING;
  send_start_query();
  return false;
}

void ClickHouseSinkTask::send_start_query() {
  // A ping waits timeoutSeconds (ClickHouseHelperClient.pingV1), a query the
  // client's socket_timeout.
  const bool ping = start_query_ == StartQuery::STATE_PING || start_query_ == StartQuery::PING;
  const sim::Time timeout =
      ping ? sim::Time::seconds(deps_.options->timeout_seconds) : deps_.options->socket_timeout;
  ++start_attempts_;
  const clickhouse::QueryAnswer answer =
      deps_.table->server_query(timeout, client_path(Query::HELPER));
  keeper_map_status_ = answer.status;
  host_.schedule_step(answer.latency);
}

void ClickHouseSinkTask::start_step() {
  const bool ok = keeper_map_status_ == clickhouse::QueryStatus::OK;
  // pingV1 tries retryCount times; queryV1 sends a failed query again at
  // once, retryCount attempts in all. version() and the mapping are asked
  // once: ClickHouseWriter.start returns false on their failure.
  const bool retried = start_query_ == StartQuery::STATE_PING || start_query_ == StartQuery::PING ||
                       start_query_ == StartQuery::CREATE_STATE_TABLE;
  if (!ok && retried && start_attempts_ < deps_.options->retry_count) {
    send_start_query();
    return;
  }
  start_attempts_ = 0;
  switch (start_query_) {
    case StartQuery::STATE_PING:  // "Unable to ping Clickhouse server." and on
      start_query_ = StartQuery::CREATE_STATE_TABLE;
      send_start_query();
      return;
    case StartQuery::CREATE_STATE_TABLE:
      if (!ok) {
        phase_ = Phase::IDLE;
        host_.start_finished(false,
                             "the KeeperMap state table's CREATE TABLE IF NOT EXISTS failed");
        return;
      }
      start_query_ = StartQuery::PING;
      send_start_query();
      return;
    case StartQuery::PING:
    case StartQuery::VERSION:
    case StartQuery::TABLES:
      if (!ok) {
        // ProxySinkTask.start: dbWriter.start returned false.
        phase_ = Phase::IDLE;
        host_.start_finished(false, "Connection to ClickHouse is not active.");
        return;
      }
      if (start_query_ != StartQuery::TABLES) {
        start_query_ = start_query_ == StartQuery::PING ? StartQuery::VERSION : StartQuery::TABLES;
        send_start_query();
        return;
      }
      phase_ = Phase::IDLE;
      host_.start_finished(true, nullptr);
      return;
  }
}

bool ClickHouseSinkTask::plain_puts() const {
  return !buffering() && !topic_wide() && !deps_.options->report_inserted_offsets;
}

bool ClickHouseSinkTask::time_flush_due(sim::Time now) const {
  return buffering() && !buffer_.empty() &&
         buffer_.flush_due(deps_.options->buffer_count, deps_.options->buffer_flush_time, now);
}

void ClickHouseSinkTask::put(const std::vector<PartitionBatch>& batch) {
  PIPESIM_INVARIANT(phase_ == Phase::IDLE, "put() while a put is in progress");
  const std::vector<PartitionBatch>* records = &batch;
  flushing_ = false;
  if (buffering()) {
    // ClickHouseSinkTask.put: buffer.addAll, then flushBuffer -> putDirect
    // of the whole buffer when a threshold is reached.
    buffer_.add(batch);
    if (!buffer_.flush_due(deps_.options->buffer_count, deps_.options->buffer_flush_time,
                           host_.now())) {
      host_.put_finished(PutOutcome::RETURNED, {});
      return;
    }
    flushing_ = true;
    records = &buffer_.contents();
  }
  failed_.clear();
  tell_replays(*records);
  if (records->empty()) {  // ProxySinkTask.put: "No records sent to SinkTask"
    host_.put_finished(PutOutcome::RETURNED, {});
    return;
  }
  if (topic_wide()) {
    // ProxySinkTask groups by topic: one group, in the records' order.
    batch_ = *records;
    insert_topic_wide();
    return;
  }
  keys_.clear();
  for (const auto& pb : *records)
    keys_.push_back(deps_.options->topics + "-" + std::to_string(pb.partition));
  batch_.clear();
  for (const std::size_t i : java_hashmap_order(keys_)) batch_.push_back((*records)[i]);
  index_ = 0;
  start_partition();
}

void ClickHouseSinkTask::pre_commit(const std::vector<int>& partitions,
                                    std::vector<std::int64_t>& offsets) {
  if (buffering()) {
    // Only what a flush wrote; the flushed offsets are cleared once returned.
    for (std::size_t i = 0; i < partitions.size(); ++i)
      offsets[i] = buffer_.flushed_offset(partitions[i]);
    buffer_.clear_flushed();
    return;
  }
  // currentOffsets back: with a topic-wide insert ("there is another way to
  // reconcile data"), or reportInsertedOffsets=false (the default).
  if (topic_wide() || !deps_.options->report_inserted_offsets) return;
  // getInsertedOffsetsSnapshot, limited to the partitions asked for.
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    offsets[i] = -1;
    for (const auto& [p, next] : inserted_) {
      if (p == partitions[i]) offsets[i] = next;
    }
  }
}

void ClickHouseSinkTask::close() {
  // ClickHouseSinkTask.close: onPartitionRemoved drops the reported offsets,
  // and the buffer drops the closed partitions' records.
  buffer_.close();
  inserted_.clear();
  replays_told_.clear();
}

void ClickHouseSinkTask::tell_replays(const std::vector<PartitionBatch>& records) {
  auto* t = host_.trace();
  if (t == nullptr || deps_.options->exactly_once) return;
  for (const auto& pb : records) {
    if (pb.tag != ledger::InsertTag::REPLAY || std::find(replays_told_.begin(), replays_told_.end(),
                                                         pb.partition) != replays_told_.end()) {
      continue;
    }
    replays_told_.push_back(pb.partition);
    t->story(
        host_.now(), host_.name(), "replay",
        host_.name() + " inserts partition " + std::to_string(pb.partition) + " from offset " +
            std::to_string(pb.offsets.min) +
            " again: records read again from the last commit (at-least-once, exactlyOnce=false "
            "keeps no state that could skip them); rows ClickHouse already has are written a "
            "second time unless a block with the same " +
            (topic_wide() ? std::string("data") : std::string("token")) +
            " is still in the dedup window");
  }
}

void ClickHouseSinkTask::note_inserted(int partition, std::int64_t next_offset) {
  for (auto& [p, next] : inserted_) {
    if (p == partition) {
      next = next_offset;
      return;
    }
  }
  inserted_.emplace_back(partition, next_offset);
}

namespace {

// ClickHouse deduplicates an insert without a token by the hash of its
// block's data: here a fingerprint of the ranges the block holds, in order
// (two 64-bit FNV-1a hashes; equal content gives an equal id).
clickhouse::BlockId content_block_id(const std::vector<PartitionBatch>& batch) {
  std::uint64_t a = 0xcbf29ce484222325ULL;
  std::uint64_t b = 0x84222325cbf29ce4ULL;
  const auto mix = [&](std::int64_t v) {
    for (int i = 0; i < 8; ++i) {
      const auto byte =
          static_cast<std::uint64_t>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xFFu);
      a = (a ^ byte) * 0x100000001b3ULL;
      b = (b ^ (byte + 0x5bu)) * 0x100000001b3ULL;
    }
  };
  for (const auto& pb : batch) {
    mix(pb.partition);
    mix(pb.offsets.min);
    mix(pb.offsets.max);
    for (const auto& r : pb.again) {
      mix(r.min);
      mix(r.max);
    }
  }
  return clickhouse::BlockId{clickhouse::BlockId::kDataHash, static_cast<std::int64_t>(a),
                             static_cast<std::int64_t>(b), 0};
}

}  // namespace

void ClickHouseSinkTask::insert_topic_wide() {
  // Processing.doLogic with ignorePartitionsWhenBatching and exactlyOnce off:
  // doInsert(records) at once, no state read or written, and a QueryIdentifier
  // of partition -1, whose getDeduplicationToken is null.
  const PartitionBatch& first = batch_.front();
  insert_token_ = (insert_token_ + 1) & clickhouse::kReplyTokenMask;
  clickhouse::InsertRequest request{first.partition,
                                    first.offsets.min,
                                    first.offsets.max,
                                    content_block_id(batch_),
                                    first.tag,
                                    deps_.options->socket_timeout,
                                    host_.insert_reply_address(),
                                    insert_token_,
                                    {},
                                    &host_.name(),
                                    client_path(Query::INSERT)};
  for (std::size_t i = 0; i < batch_.size(); ++i) {
    const PartitionBatch& pb = batch_[i];
    if (i > 0) request.also.push_back({pb.partition, pb.offsets.min, pb.offsets.max, pb.tag});
    for (const auto& r : pb.again) {
      request.also.push_back({pb.partition, r.min, r.max, ledger::InsertTag::REDELIVERY});
    }
  }
  // When the insert returns, run_ops() finds nothing more to do and put() returns.
  index_ = batch_.size() - 1;
  decision_ = Decision{};
  op_index_ = 0;
  tag_ = first.tag;
  phase_ = Phase::INSERT;
  deps_.table->begin_insert(request);
}

bool ClickHouseSinkTask::has_reporter() const {
  return !deps_.options->errors_deadletterqueue_topic_name.empty() ||
         deps_.options->errors_log_enable;
}

void ClickHouseSinkTask::start_partition() {
  if (index_ == batch_.size()) {
    // ProxySinkTask.put: partitions that failed under errors.tolerance=all
    // are handed to the reporter only now, after the loop.
    for (const auto& pb : failed_) {
      report(pb.partition, pb.offsets);
      for (const auto& r : pb.again) report(pb.partition, r);
    }
    failed_.clear();
    phase_ = Phase::IDLE;
    if (flushing_) buffer_.flushed(host_.now());  // flushBuffer: putDirect returned
    flushing_ = false;
    host_.put_finished(PutOutcome::RETURNED, {});
    return;
  }
  if (state_->keeper_map()) {
    // getStateRecord: one read by key (a multi-get in Keeper).
    query_keeper_map(Phase::STATE_READ, nullptr);
    return;
  }
  decide_partition();
}

void ClickHouseSinkTask::decide_partition() {
  const PartitionBatch& pb = batch_[index_];
  const StateRecord stored = state_->get(pb.partition);
  stored_ = stored;
  decision_ = decide(stored, pb.offsets, tolerate_state_mismatch_);
  if (decision_.classified) {
    const std::size_t row = stored.state == ProcessingState::BEFORE_PROCESSING ? 0 : 1;
    ++deps_.counters->classifications[row][static_cast<std::size_t>(decision_.range_state)];
  }
  // Copies made because the stored state was lost (a wiped or deleted state
  // row, or the ZERO branch) are state_reset copies.
  tag_ = pb.tag;
  if (pb.tag == ledger::InsertTag::NORMAL) state_->clear_reset(pb.partition);
  const bool replay_after_reset =
      pb.tag == ledger::InsertTag::REPLAY && state_->was_reset(pb.partition);
  if ((decision_.classified && decision_.range_state == RangeState::ZERO) || replay_after_reset) {
    tag_ = ledger::InsertTag::STATE_RESET;
  }
  if (decision_.error != DecisionError::NONE) {
    throw_non_retriable(decision_.error);
    return;
  }
  op_index_ = 0;
  run_ops();
}

void ClickHouseSinkTask::run_ops() {
  const PartitionBatch& pb = batch_[index_];
  while (op_index_ < decision_.op_count) {
    const SinkOp& op = decision_.ops[op_index_++];
    switch (op.kind) {
      case SinkOpKind::SET_STATE:
        if (state_->keeper_map()) {
          // The write takes effect when its multi is applied in Keeper, at
          // the server, whatever becomes of this task meanwhile.
          --op_index_;
          write_attempts_ = 1;
          write_record_ = StateRecord{op.state, op.records};
          query_keeper_map(Phase::STATE_WRITE, &write_record_);
          return;
        }
        state_->set(pb.partition, StateRecord{op.state, op.records});
        if (op.state == ProcessingState::AFTER_PROCESSING)
          note_inserted(pb.partition, op.records.max + 1);
        break;
      case SinkOpKind::INSERT: {
        // The answer, or the client's socket timeout, comes as on_insert_answer();
        // a client timeout does not cancel the server's insert (docs/model.md §4.4).
        insert_token_ = (insert_token_ + 1) & clickhouse::kReplyTokenMask;
        clickhouse::InsertRequest request{
            pb.partition,
            op.records.min,
            op.records.max,
            clickhouse::BlockId{pb.partition, op.token.min, op.token.max, 0},
            tag_,
            deps_.options->socket_timeout,
            host_.insert_reply_address(),
            insert_token_,
            {},
            &host_.name(),
            client_path(Query::INSERT)};
        // Records a buffer holds twice are in the list doInsert writes.
        for (const auto& r : pb.again) {
          const std::int64_t lo = std::max(r.min, op.records.min);
          const std::int64_t hi = std::min(r.max, op.records.max);
          if (lo <= hi)
            request.also.push_back({pb.partition, lo, hi, ledger::InsertTag::REDELIVERY});
        }
        phase_ = Phase::INSERT;
        deps_.table->begin_insert(request);
        return;
      }
      case SinkOpKind::DLQ:
        // Records of an overlap that cannot be re-inserted as SAME, sent one
        // by one as DuplicateException (DECISION_NOTES.md row 10).
        if (!has_reporter()) {
          report(pb.partition, op.records);  // a no-op reporter: nothing kept
        } else if (deps_.options->errors_tolerance == "all") {
          report(pb.partition, op.records);
        } else {
          // errors.tolerance=none: the framework's executeFailed reports the
          // first record, then throws "Tolerance exceeded in error handler".
          report(pb.partition, OffsetRange{op.records.min, op.records.min});
          fail(PutFailure{pb.partition, DecisionError::NONE});
          return;
        }
        break;
      case SinkOpKind::KEEP_STATE:
        // onStateUpdate(stored): the stored range counts as inserted.
        if (stored_.state == ProcessingState::AFTER_PROCESSING)
          note_inserted(pb.partition, stored_.range.max + 1);
        break;
    }
  }
  ++index_;
  start_partition();
}

void ClickHouseSinkTask::step() {
  switch (phase_) {
    case Phase::STATE_READ:
      // A failed KeeperMap query: KEEPER_EXCEPTION (999), NETWORK_ERROR (210)
      // or a socket timeout, all retriable (Utils.handleException).
      if (keeper_map_status_ != clickhouse::QueryStatus::OK) {
        retriable();
        return;
      }
      decide_partition();
      return;
    case Phase::STATE_WRITE: {
      const SinkOp& op = decision_.ops[op_index_];
      // The server applied the write at its commit (KeeperMapTable).
      // KeeperStateProvider.setStateRecord reaches onStateUpdate only once
      // its query returned.
      if (keeper_map_status_ == clickhouse::QueryStatus::OK &&
          op.state == ProcessingState::AFTER_PROCESSING)
        note_inserted(batch_[index_].partition, op.records.max + 1);
      if (keeper_map_status_ != clickhouse::QueryStatus::OK) {
        // setStateRecord goes through ClickHouseHelperClient.queryV1, which
        // sends a query that threw a ClickHouseException (a server error, or
        // a socket timeout: code 159) again at once, retryCount attempts in
        // all, before it throws; getStateRecord's read has no such loop.
        if (write_attempts_ < deps_.options->retry_count) {
          ++write_attempts_;
          query_keeper_map(Phase::STATE_WRITE, &write_record_);
          return;
        }
        retriable();
        return;
      }
      ++op_index_;
      run_ops();
      return;
    }
    case Phase::STARTING:
      start_step();
      return;
    case Phase::INSERT:
    case Phase::IDLE:
      break;
  }
  PIPESIM_INVARIANT(false, "connector step without a pending operation");
}

void ClickHouseSinkTask::on_insert_answer(std::uint32_t reply) {
  // An answer for an earlier query (one the client gave up on, or of an
  // earlier task instance) finds another token: nobody listens any more.
  if (clickhouse::reply_token(reply) != insert_token_) return;
  const clickhouse::QueryStatus status = clickhouse::reply_status(reply);
  if (phase_ == Phase::STATE_READ || phase_ == Phase::STATE_WRITE) {
    keeper_map_status_ = status;
    step();
    return;
  }
  if (phase_ != Phase::INSERT) return;
  if (clickhouse::succeeded(status)) {
    run_ops();
    return;
  }
  // A socket timeout (clickhouse-java: code 159) or a retriable server code
  // (159, 210, 242, 285, 319, 999): Utils.handleException makes it a
  // RetriableException.
  if (status == clickhouse::QueryStatus::CLIENT_TIMEOUT) ++deps_.counters->insert_timeouts;
  retriable();
}

}  // namespace pipesim::sink
