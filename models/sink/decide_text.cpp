// The sink's decisions written out: `pipesim decide`'s JSON line for a case
// (format_decision) and its explanation in words (explain_decision), the
// connector's v1.3.9 behaviour told per state (NONE, BEFORE_PROCESSING,
// AFTER_PROCESSING).
#include "models/sink/decide_cases.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <string>

namespace pipesim::sink {
namespace {

// ---------------------------------------------------------------------------------------------
// Formatting

void append_int(std::string& s, const std::int64_t v) {
  std::array<char, 24> buf{};
  const auto result = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  s.append(buf.data(), result.ptr);
}

void append_range(std::string& s, const OffsetRange r) {
  s += '[';
  append_int(s, r.min);
  s += ',';
  append_int(s, r.max);
  s += ']';
}

void append_op(std::string& s, const SinkOp& op) {
  switch (op.kind) {
    case SinkOpKind::SET_STATE:
      s += R"({"op":"set_state","state":")";
      s += to_string(op.state);
      s += R"(","range":)";
      append_range(s, op.records);
      s += '}';
      return;
    case SinkOpKind::INSERT:
      s += R"({"op":"insert","records":)";
      append_range(s, op.records);
      s += R"(,"count":)";
      append_int(s, op.records.count());
      s += R"(,"token":)";
      append_range(s, op.token);
      s += '}';
      return;
    case SinkOpKind::DLQ:
      s += R"({"op":"dlq","records":)";
      append_range(s, op.records);
      s += R"(,"count":)";
      append_int(s, op.records.count());
      s += R"(,"reason":"DuplicateException"})";
      return;
    case SinkOpKind::KEEP_STATE:
      s += R"({"op":"keep_state"})";
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Explanation

std::string range_text(const OffsetRange r) {
  std::string s;
  append_range(s, r);
  return s;
}

std::string records_text(const OffsetRange r) {
  if (r.count() == 1) return "record " + std::to_string(r.min);
  return "the " + std::to_string(r.count()) + " records " + range_text(r);
}

std::string op_text(const SinkOp& op) {
  switch (op.kind) {
    case SinkOpKind::SET_STATE:
      return "writes " + std::string(to_string(op.state)) + " " + range_text(op.records);
    case SinkOpKind::INSERT:
      return "inserts " + records_text(op.records) + " with token " + range_text(op.token);
    case SinkOpKind::DLQ:
      return "sends " + records_text(op.records) + " to the DLQ as DuplicateException";
    case SinkOpKind::KEEP_STATE:
      return "reports the stored range as inserted without writing anything";
  }
  return {};
}

// "writes A, inserts B, then writes C".
std::string ops_text(const Decision& d) {
  const auto ops = d.side_effects();
  std::string s;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (i > 0) s += (i + 1 == ops.size()) ? ", then " : ", ";
    s += op_text(ops[i]);
  }
  return s;
}

// Where the batch lies relative to the stored range.
std::string position_text(const OffsetRange s, const OffsetRange b) {
  const std::string batch = "batch " + range_text(b);
  const std::string stored = "the stored range " + range_text(s);
  if (b.min > s.max) {
    if (b.min == s.max + 1) return batch + " directly follows " + stored;
    return batch + " lies after " + stored + " (offsets " + range_text({s.max + 1, b.min - 1}) +
           " in between were never seen)";
  }
  if (b.max < s.min) return batch + " lies entirely before " + stored;
  const char* start = b.min < s.min    ? " starts before "
                      : b.min == s.min ? " starts at the start of "
                                       : " starts inside ";
  const char* end = b.max < s.max    ? "ends inside it"
                    : b.max == s.max ? "ends at its end"
                                     : "ends after it";
  return batch + start + stored + " and " + end;
}

std::string dropped_below_text(const OffsetRange s, const OffsetRange b) {
  if (b.min >= s.min) return {};
  return " Records " + range_text({b.min, std::min(b.max, s.min - 1)}) +
         ", below the stored min, are dropped.";
}

// Completes "the connector ..." or "it ...": what the framework does with
// the exception, the configured errors.tolerance's outcome when known.
std::string thrown_text(const std::string_view message, const ErrorHandling* handling) {
  const std::string thrown = "throws \"" + std::string(message) + "\" before any write: ";
  if (handling == nullptr) {
    return thrown +
           "with errors.tolerance=none the task fails, with errors.tolerance=all this "
           "partition's records go to the DLQ (if one is configured) and their offsets are "
           "committed.";
  }
  if (!handling->tolerance_all) return thrown + "errors.tolerance=none, so the task fails.";
  if (handling->has_dlq) {
    return thrown +
           "errors.tolerance=all, so this partition's records go to the DLQ and their offsets "
           "are committed.";
  }
  return thrown +
         "errors.tolerance=all without a DLQ, so this partition's records are kept nowhere and "
         "their offsets are committed.";
}

std::string explain_none(const DecideCase& c, const Decision& d) {
  return "No state is stored for this partition (NONE: first batch seen, a task restarted "
         "with exactlyOnce=false, or a deleted or wiped state row), so the connector does not "
         "compare batch " +
         range_text(c.batch) + " with anything: it " + ops_text(d) + ".";
}

std::string explain_zero(const Decision& d) {
  return "; the batch starts at offset 0, below the stored range, and ends before the stored "
         "max, which the connector takes for a deleted and recreated topic. It resets the "
         "state and inserts the whole batch, records below the stored min included: it " +
         ops_text(d) +
         ". If the topic was not in fact recreated (e.g. the consumer offsets were reset), "
         "these records were inserted before and are inserted again.";
}

std::string explain_before(const DecideCase& c, const Decision& d, const ErrorHandling* handling) {
  const OffsetRange s = c.stored.range;
  const OffsetRange b = c.batch;
  const std::string head = position_text(s, b) + " (" + std::string(to_string(d.range_state)) +
                           "); the stored state is BEFORE_PROCESSING, so the insert of " +
                           range_text(s) + " may or may not have happened";
  switch (d.range_state) {
    case RangeState::ZERO:
      return head + explain_zero(d);
    case RangeState::SAME:
      return head + ". The batch is taken for a retry of that insert: the connector " +
             ops_text(d) +
             ", without writing BEFORE_PROCESSING first. The token is the whole batch range, "
             "so ClickHouse block dedup absorbs the re-insert only if the earlier attempt "
             "used the same token " +
             range_text(b) + " and its block id is still in the dedup window." +
             dropped_below_text(s, b);
    case RangeState::NEW:
      return head + ". The connector does not look at that range again: it " + ops_text(d) +
             ", without writing BEFORE_PROCESSING first (BEFORE_PROCESSING " + range_text(s) +
             " stays stored until the insert succeeds).";
    case RangeState::CONTAINS:
      return head + "; the connector cannot tell which of these records were inserted, so it " +
             thrown_text("BEFORE_PROCESSING: State CONTAINS", handling) +
             " tolerateStateMismatch does not apply to this case.";
    case RangeState::OVER_LAPPING: {
      const auto ops = d.side_effects();
      if (!ops.empty() && ops[0].kind == SinkOpKind::DLQ) {
        return head + ". Its part up to the stored max, " + range_text(ops[0].records) +
               ", does not reach down to the stored min, so the connector takes those records "
               "for duplicates of that uncertain insert (they are in ClickHouse only if it "
               "happened) and handles the records above the stored max as new: it " +
               ops_text(d) + ".";
      }
      return head +
             ". Its part up to the stored max covers the stored range exactly, so the "
             "connector retries that insert with the stored range as token (ClickHouse "
             "dedup absorbs it if the earlier attempt used that token) and handles the "
             "records above the stored max as new: it " +
             ops_text(d) + "." + dropped_below_text(s, b);
    }
    case RangeState::PREVIOUS:
    case RangeState::ERROR:
      break;
  }
  return head +
         "; the batch starts below the stored min (not at offset 0) and ends before the "
         "stored max, a case no rule covers for BEFORE_PROCESSING, so the connector " +
         thrown_text("BEFORE_PROCESSING: ERROR State", handling) +
         " tolerateStateMismatch does not apply to this case.";
}

std::string explain_after(const DecideCase& c, const Decision& d, const ErrorHandling* handling) {
  const OffsetRange s = c.stored.range;
  const OffsetRange b = c.batch;
  const std::string head = position_text(s, b) + " (" + std::string(to_string(d.range_state)) +
                           "); the stored state is AFTER_PROCESSING, so " + range_text(s) +
                           " is known to be inserted";
  switch (d.range_state) {
    case RangeState::SAME:
    case RangeState::CONTAINS: {
      std::string text = head +
                         ". The connector skips the batch: no insert, no state write; it "
                         "reports the stored range " +
                         range_text(s) + " as inserted.";
      if (b.min < s.min) {
        text += " Records " + range_text({b.min, s.min - 1}) +
                ", below the stored min, are skipped as well.";
      }
      return text;
    }
    case RangeState::ZERO:
      return head + explain_zero(d);
    case RangeState::NEW:
      return head + ". All the batch's records are new: the connector " + ops_text(d) + ".";
    case RangeState::OVER_LAPPING:
      return head + ". Records " + range_text({std::max(b.min, s.min), s.max}) +
             " were already inserted and are skipped silently (no DLQ); the connector " +
             ops_text(d) + "." + dropped_below_text(s, b);
    case RangeState::PREVIOUS: {
      const std::string replay =
          head +
          "; the batch starts below the stored min (not at offset 0) and ends before "
          "the stored max: a replay of records older than the last inserted range "
          "(State MISMATCH), ";
      if (c.tolerate_state_mismatch) {
        return replay +
               "and tolerateStateMismatch=true, so the connector logs a warning and "
               "skips the " +
               std::to_string(b.count()) +
               " records: no insert, no state write, no offset reported as inserted.";
      }
      std::string text =
          replay + "so the connector " + thrown_text("AFTER_PROCESSING: State MISMATCH", handling);
      if (handling == nullptr || !handling->tolerance_all) {
        text +=
            " A restart from the same committed offset fails again; "
            "tolerateStateMismatch=true would skip the batch.";
      }
      return text;
    }
    case RangeState::ERROR:
      break;
  }
  return head + "; the connector " + thrown_text("AFTER_PROCESSING: ERROR State", handling) +
         " (v1.3.9 never gets here: PREVIOUS is returned first).";
}

}  // namespace

std::string format_decision(const DecideCase& c, const Decision& d) {
  std::string s;
  s.reserve(160 + 80 * d.op_count);
  s += R"({"state":")";
  s += to_string(c.stored.state);
  s += R"(","stored":)";
  if (c.stored.state != ProcessingState::NONE || c.stored_given) {
    append_range(s, c.stored.range);
  } else {
    s += "null";
  }
  s += R"(,"batch":)";
  append_range(s, c.batch);
  s += R"(,"tolerateStateMismatch":)";
  s += c.tolerate_state_mismatch ? "true" : "false";
  s += R"(,"ops":[)";
  for (const SinkOp& op : d.side_effects()) {
    if (s.back() != '[') s += ',';
    append_op(s, op);
  }
  s += R"(],"error":)";
  if (d.error == DecisionError::NONE) {
    s += "null";
  } else {
    s += '"';
    s += to_string(d.error);
    s += '"';
  }
  s += '}';
  return s;
}

std::string explain_decision(const DecideCase& c, const Decision& d,
                             const ErrorHandling* handling) {
  switch (c.stored.state) {
    case ProcessingState::NONE:
      return explain_none(c, d);
    case ProcessingState::BEFORE_PROCESSING:
      return explain_before(c, d, handling);
    case ProcessingState::AFTER_PROCESSING:
      return explain_after(c, d, handling);
  }
  return {};
}

}  // namespace pipesim::sink
