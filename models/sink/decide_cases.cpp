#include "models/sink/decide_cases.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <istream>
#include <limits>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipesim::sink {
namespace {

// ordered_json keeps the input order, so the first unknown key reported is the first written.
using Json = nlohmann::ordered_json;

constexpr std::string_view kState = "state";
constexpr std::string_view kStored = "stored";
constexpr std::string_view kBatch = "batch";
constexpr std::string_view kTolerate = "tolerateStateMismatch";
constexpr std::array<std::string_view, 4> kKeys = {kState, kStored, kBatch, kTolerate};

// ---------------------------------------------------------------------------------------------
// Parsing

std::string json_quoted(const std::string& s) {
  return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string quoted(const std::string_view s) { return json_quoted(std::string(s)); }

// How a value that has the wrong type is shown: its type, plus the value when short.
std::string found(const Json& v) {
  if (v.is_string()) return "string " + json_quoted(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "boolean true" : "boolean false";
  if (v.is_number()) return "number " + v.dump();
  return v.type_name();
}

std::string lowercase(const std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](const unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}

std::size_t edit_distance(const std::string_view a, const std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknown_key_message(const std::string& key) {
  for (const std::string_view known : kKeys) {
    if (lowercase(key) == lowercase(known) || edit_distance(key, known) <= 2) {
      return "unknown key " + json_quoted(key) + " (did you mean " + quoted(known) + "?)";
    }
  }
  return "unknown key " + json_quoted(key) +
         " (expected state, stored, batch, tolerateStateMismatch)";
}

// "malformed JSON at column 5: syntax error while parsing ...", from nlohmann's message
// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ...".
std::string malformed_message(const Json::parse_error& e) {
  const std::string what = e.what();
  const std::size_t column = what.find("column ");
  const std::size_t detail = what.find(": ", column == std::string::npos ? 0 : column);
  if (column == std::string::npos || detail == std::string::npos) return "malformed JSON";
  return "malformed JSON at " + what.substr(column, detail - column) + what.substr(detail);
}

// One offset of a range; returns what is wrong, or "" when fine.
std::string parse_offset(const Json& v, const std::string_view key, const std::string_view which,
                         std::int64_t& out) {
  const std::string where = quoted(key) + ": " + std::string(which);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(kMax)) {
      return where + " " + v.dump() + " is out of range (at most " + std::to_string(kMax) + ")";
    }
    out = static_cast<std::int64_t>(u);
    return {};
  }
  if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
    if (out < 0) return where + " " + std::to_string(out) + " is negative (offsets start at 0)";
    return {};
  }
  return where + " must be an integer offset, found " + found(v);
}

// An inclusive range [min,max]; returns what is wrong, or "" when fine.
std::string parse_range(const Json& v, const std::string_view key, OffsetRange& out) {
  if (!v.is_array()) return quoted(key) + ": expected an array [min,max], found " + found(v);
  if (v.size() != 2) {
    return quoted(key) + ": expected an array [min,max], found an array of " +
           std::to_string(v.size()) + (v.size() == 1 ? " element" : " elements");
  }
  OffsetRange r;
  if (std::string e = parse_offset(v[0], key, "min", r.min); !e.empty()) return e;
  if (std::string e = parse_offset(v[1], key, "max", r.max); !e.empty()) return e;
  if (r.min > r.max) {
    return quoted(key) + ": min " + std::to_string(r.min) + " > max " + std::to_string(r.max);
  }
  out = r;
  return {};
}

std::string parse_state(const Json& v, ProcessingState& out) {
  if (!v.is_string()) return quoted(kState) + ": expected a string, found " + found(v);
  const auto& name = v.get_ref<const std::string&>();
  for (const ProcessingState s : {ProcessingState::NONE, ProcessingState::BEFORE_PROCESSING,
                                  ProcessingState::AFTER_PROCESSING}) {
    if (name == to_string(s)) {
      out = s;
      return {};
    }
  }
  return "unknown state " + json_quoted(name) +
         " (expected NONE, BEFORE_PROCESSING or AFTER_PROCESSING)";
}

const Json* member(const Json& object, const std::string_view key) {
  const auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

// The checks once the line is a JSON object without duplicate or unknown keys.
ParsedDecideCase parse_members(const Json& object) {
  DecideCase c;

  const Json* state = member(object, kState);
  if (state == nullptr) return "missing key " + quoted(kState);
  if (std::string e = parse_state(*state, c.stored.state); !e.empty()) return e;

  const Json* stored = member(object, kStored);
  if (c.stored.state != ProcessingState::NONE) {
    if (stored == nullptr) {
      return "missing key " + quoted(kStored) + " (required when state is " +
             std::string(to_string(c.stored.state)) + ")";
    }
    if (std::string e = parse_range(*stored, kStored, c.stored.range); !e.empty()) return e;
    c.stored_given = true;
  } else if (stored != nullptr && !stored->is_null()) {
    if (std::string e = parse_range(*stored, kStored, c.stored.range); !e.empty()) return e;
    c.stored_given = true;
  }

  const Json* batch = member(object, kBatch);
  if (batch == nullptr) return "missing key " + quoted(kBatch);
  if (std::string e = parse_range(*batch, kBatch, c.batch); !e.empty()) return e;

  if (const Json* tolerate = member(object, kTolerate); tolerate != nullptr) {
    if (!tolerate->is_boolean()) {
      return quoted(kTolerate) + ": expected true or false, found " + found(*tolerate);
    }
    c.tolerate_state_mismatch = tolerate->get<bool>();
  }
  return c;
}

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
      std::string text = replay + "so the connector " +
                         thrown_text("AFTER_PROCESSING: State MISMATCH", handling);
      if (handling == nullptr || !handling->tolerance_all) {
        text += " A restart from the same committed offset fails again; "
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

bool is_blank(const std::string_view s) {
  return s.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

ParsedDecideCase parse_decide_case(const std::string_view line) {
  // Duplicate keys of the top-level object (depth 1); nlohmann would keep the last silently.
  std::vector<std::string> keys;
  std::string duplicate;
  const Json::parser_callback_t on_event = [&](const int depth, const Json::parse_event_t event,
                                               Json& parsed) {
    if (event == Json::parse_event_t::key && depth == 1) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (duplicate.empty() && std::find(keys.begin(), keys.end(), key) != keys.end()) {
        duplicate = key;
      }
      keys.push_back(key);
    }
    return true;
  };

  Json object;
  try {
    object = Json::parse(line.begin(), line.end(), on_event);
  } catch (const Json::parse_error& e) {
    return malformed_message(e);
  } catch (const Json::out_of_range& e) {
    // A number beyond double's range (1e400) is not a parse_error: it escaped
    // as an abort (a fuzzing finding). "number overflow parsing '1e400'".
    const std::string what = e.what();
    const auto bracket = what.find("] ");
    return bracket == std::string::npos ? what : what.substr(bracket + 2);
  }
  if (!object.is_object()) return "expected a JSON object, found " + found(object);
  if (!duplicate.empty()) return "duplicate key " + json_quoted(duplicate);
  for (const auto& [key, value] : object.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      return unknown_key_message(key);
    }
  }
  return parse_members(object);
}

Decision decide(const DecideCase& c) {
  return decide(c.stored, c.batch, c.tolerate_state_mismatch);
}

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

std::string explain_decision(const DecideCase& c, const Decision& d, const ErrorHandling* handling) {
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

int run_decide_stream(std::istream& in, std::ostream& out, std::ostream& err) {
  std::string line;
  std::int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (is_blank(line)) continue;
    std::string_view text = line;
    if (text.back() == '\r') text.remove_suffix(1);
    const ParsedDecideCase parsed = parse_decide_case(text);
    if (const auto* problem = std::get_if<std::string>(&parsed)) {
      out.flush();
      err << "pipesim decide: line " << line_number << ": " << *problem << '\n';
      return 2;
    }
    const auto& c = std::get<DecideCase>(parsed);
    out << format_decision(c, decide(c)) << '\n';
    if (in.rdbuf()->in_avail() <= 0) out.flush();
  }
  out.flush();
  return 0;
}

}  // namespace pipesim::sink
