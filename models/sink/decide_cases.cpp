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

#include "sim/config/options.h"

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

std::string unknown_key_message(const std::string& key) {
  for (const std::string_view known : kKeys) {
    if (lowercase(key) == lowercase(known) || sim::edit_distance(key, known) <= 2) {
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

bool is_blank(const std::string_view s) {
  return s.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

ParsedDecideCase parse_decide_case(const std::string_view line) {
  // A NUL byte is no part of a JSON text; the parser would stop at it and
  // take what came before for the whole line.
  if (const auto nul = line.find('\0'); nul != std::string_view::npos) {
    return "a NUL byte (0x00) at column " + std::to_string(nul + 1) + ": not a line of JSON text";
  }
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

int run_decide_stream(std::istream& in, std::ostream& out, std::ostream& err) {
  return run_decide_lines(
      [&in](std::string& line) { return static_cast<bool>(std::getline(in, line)); },
      [&in] { return in.rdbuf()->in_avail() > 0; }, out, err);
}

int run_decide_lines(const std::function<bool(std::string&)>& next_line,
                     const std::function<bool()>& pending, std::ostream& out, std::ostream& err) {
  std::string line;
  std::int64_t line_number = 0;
  while (next_line(line)) {
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
    if (!pending()) out.flush();
  }
  out.flush();
  return 0;
}

}  // namespace pipesim::sink
