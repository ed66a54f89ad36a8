// Option visitors: each component declares its options once, as a function
// template `visit(V&, Options&)` that names every real property, its field,
// its range and its one-line doc. The same declaration then
//   - reads and validates JSON   (OptionReader),
//   - writes the effective config (OptionWriter),
//   - lists the reference table  (OptionLister).
// A bad value raises ConfigError naming the JSON path, what was expected and
// what was found; an unknown key gets a did-you-mean hint (docs/model.md §7).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/time.h"

namespace pipesim::sim {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "config error at connect.max.poll.records: expected ..., found ..."
[[noreturn]] void throw_config_error(const std::string& path, const std::string& what);
std::string describe_json_value(const nlohmann::json& value);
// Levenshtein distance (insertions, deletions, substitutions).
std::size_t edit_distance(std::string_view a, std::string_view b);
// The closest candidate by edit distance, or "" if none is close.
std::string closest_key(std::string_view key, const std::vector<std::string>& candidates);

// Checks a free-form value; returns "" when fine, else what was expected.
using JsonCheck = std::function<std::string(const nlohmann::json&)>;

class OptionReader {
 public:
  // `strings_allowed`: values may be strings ("500", "true"), as in a
  // connector config POSTed to the Connect REST API.
  OptionReader(const nlohmann::json& object, std::string path, bool strings_allowed = false);

  void integer(std::string_view key, std::int64_t& field, std::int64_t min, std::int64_t max,
               std::string_view doc);
  void real(std::string_view key, double& field, double min, double max, std::string_view doc);
  void boolean(std::string_view key, bool& field, std::string_view doc);
  void text(std::string_view key, std::string& field, std::string_view doc);
  void choice(std::string_view key, std::string& field,
              std::initializer_list<std::string_view> choices, std::string_view doc);
  // A real property in milliseconds (an integer), stored as Time.
  void millis(std::string_view key, Time& field, std::int64_t min_ms, std::int64_t max_ms,
              std::string_view doc);
  // pipesim's own duration string ("30s").
  void duration(std::string_view key, Time& field, Time min, Time max, std::string_view doc);
  void any(std::string_view key, nlohmann::json& field, const JsonCheck& check,
           std::string_view doc);
  // Real properties that pipesim accepts but does not model: listed as ignored.
  void ignored(std::initializer_list<std::string_view> keys);
  // The real system's own list of its keys (its ConfigDef): a key the visit
  // does not read but `known` accepts is ignored (listed), not an error;
  // `candidates` join the did-you-mean hints. Set before visit().
  void real_keys(std::function<bool(std::string_view)> known, std::vector<std::string> candidates);
  // Another name for `key` that maps onto the same field (e.g. the consumer.
  // prefixed form); checked before finish().
  void alias(std::string_view alias_key, std::string_view key);
  // A key that no longer means anything: present, it is refused with a
  // message that says what replaced it.
  void removed(std::string_view key, std::string_view replacement);
  // Why the next key's range stops where it does, when pipesim's bound is tighter
  // than the real system's: said in the message of a value out of range. Call it
  // before the key's own declaration.
  void limit(std::string_view key, std::string_view why);

  // Raises ConfigError for the first unknown key (in the object's key order).
  void finish();
  [[nodiscard]] const std::vector<std::string>& ignored_found() const { return ignored_found_; }
  // The key (as the object spells it) of the last ConfigError raised: the
  // caller may drop it and read again to find further errors.
  [[nodiscard]] const std::string& failed_key() const { return used_key_; }

 private:
  const nlohmann::json* find(std::string_view key);
  [[nodiscard]] std::string path_of(std::string_view key) const;
  [[noreturn]] void fail(std::string_view key, const nlohmann::json& value,
                         const std::string& expected) const;

  const nlohmann::json& object_;
  std::string path_;
  bool strings_allowed_;
  std::vector<std::string> known_;
  std::vector<std::string> ignored_;
  std::vector<std::pair<std::string, std::string>> aliases_;
  std::vector<std::pair<std::string, std::string>> limits_;
  std::vector<std::string> ignored_found_;
  std::function<bool(std::string_view)> real_known_;
  std::vector<std::string> real_candidates_;
  std::string used_key_;
};

class OptionWriter {
 public:
  explicit OptionWriter(nlohmann::ordered_json& out) : out_(out) {}
  void integer(std::string_view k, const std::int64_t& f, std::int64_t, std::int64_t,
               std::string_view) {
    out_[std::string(k)] = f;
  }
  void real(std::string_view k, const double& f, double, double, std::string_view) {
    out_[std::string(k)] = f;
  }
  void boolean(std::string_view k, const bool& f, std::string_view) { out_[std::string(k)] = f; }
  void text(std::string_view k, const std::string& f, std::string_view) {
    out_[std::string(k)] = f;
  }
  void choice(std::string_view k, const std::string& f, std::initializer_list<std::string_view>,
              std::string_view) {
    out_[std::string(k)] = f;
  }
  void millis(std::string_view k, const Time& f, std::int64_t, std::int64_t, std::string_view) {
    out_[std::string(k)] = f.us / 1000;
  }
  void duration(std::string_view k, const Time& f, Time, Time, std::string_view);
  void any(std::string_view k, const nlohmann::json& f, const JsonCheck&, std::string_view) {
    out_[std::string(k)] = f;
  }
  void ignored(std::initializer_list<std::string_view>) {}
  void alias(std::string_view, std::string_view) {}
  void removed(std::string_view, std::string_view) {}
  void limit(std::string_view, std::string_view) {}
  void finish() {}

 private:
  nlohmann::ordered_json& out_;
};

// Collects one row per key: its default, its range and its doc. The same rows
// print the config reference (`pipesim validate --reference`) and tell the
// swarm test what to draw (tests/swarm_test.cpp), so a new key joins both.
class OptionLister {
 public:
  enum class Kind { INTEGER, REAL, BOOLEAN, TEXT, CHOICE, MILLIS, DURATION, ANY };
  struct Row {
    std::string key;
    std::string default_value;  // as the reference prints it
    std::string doc;
    Kind kind = Kind::ANY;
    // INTEGER, MILLIS (milliseconds): whole numbers; REAL: reals; DURATION:
    // microseconds. Unused for the other kinds.
    double min = 0;
    double max = 0;
    std::vector<std::string> choices;  // CHOICE
    [[nodiscard]] std::string range() const;  // "1 .. 4096", "one of: a b", "" (free-form)
  };
  void integer(std::string_view k, const std::int64_t& f, std::int64_t lo, std::int64_t hi,
               std::string_view d) {
    add(k, std::to_string(f), d, Kind::INTEGER, static_cast<double>(lo), static_cast<double>(hi));
  }
  void real(std::string_view k, const double& f, double lo, double hi, std::string_view d);
  void boolean(std::string_view k, const bool& f, std::string_view d) {
    add(k, f ? "true" : "false", d, Kind::BOOLEAN);
  }
  void text(std::string_view k, const std::string& f, std::string_view d) {
    add(k, "\"" + f + "\"", d, Kind::TEXT);
  }
  void choice(std::string_view k, const std::string& f, std::initializer_list<std::string_view> c,
              std::string_view d);
  void millis(std::string_view k, const Time& f, std::int64_t lo, std::int64_t hi,
              std::string_view d) {
    add(k, std::to_string(f.us / 1000), d, Kind::MILLIS, static_cast<double>(lo),
        static_cast<double>(hi));
  }
  void duration(std::string_view k, const Time& f, Time lo, Time hi, std::string_view d);
  void any(std::string_view k, const nlohmann::json& f, const JsonCheck&, std::string_view d) {
    add(k, f.dump(), d, Kind::ANY);
  }
  void ignored(std::initializer_list<std::string_view>) {}
  void alias(std::string_view, std::string_view) {}
  void removed(std::string_view, std::string_view) {}
  void limit(std::string_view, std::string_view why) { limit_ = why; }
  void finish() {}
  [[nodiscard]] const std::vector<Row>& rows() const { return rows_; }

 private:
  void add(std::string_view k, std::string v, std::string_view d, Kind kind, double lo = 0,
           double hi = 0) {
    std::string doc(d);
    if (!limit_.empty()) doc += " (pipesim's bound: " + std::string(limit_) + ")";
    limit_ = {};
    rows_.push_back({std::string(k), std::move(v), std::move(doc), kind, lo, hi, {}});
  }
  std::vector<Row> rows_;
  std::string_view limit_;
};

}  // namespace pipesim::sim
