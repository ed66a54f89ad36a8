#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "sim/config/duration.h"
#include "sim/config/options.h"

namespace pipesim::sim {

void throw_config_error(const std::string& path, const std::string& what) {
  throw ConfigError("config error at " + path + ": " + what);
}

std::string describe_json_value(const nlohmann::json& value) {
  // replace: a string that is not UTF-8 is shown with U+FFFD rather than
  // throwing from inside an error message.
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

namespace {

std::string range_text(std::int64_t min, std::int64_t max) {
  return "from " + std::to_string(min) + " to " + std::to_string(max);
}

std::string real_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

std::string closest_key(std::string_view key, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, key.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

OptionReader::OptionReader(const nlohmann::json& object, std::string path, bool strings_allowed)
    : object_(object), path_(std::move(path)), strings_allowed_(strings_allowed) {}

std::string OptionReader::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const nlohmann::json* OptionReader::find(std::string_view key) {
  known_.emplace_back(key);
  used_key_ = std::string(key);
  const auto it = object_.find(std::string(key));
  for (const auto& [alias_key, target] : aliases_) {
    if (target != key) continue;
    const auto a = object_.find(alias_key);
    if (a == object_.end()) continue;
    if (it != object_.end()) {
      throw_config_error(path_of(alias_key), "give either \"" + std::string(key) + "\" or \"" +
                                                 alias_key + "\", not both");
    }
    used_key_ = alias_key;
    return &*a;
  }
  return it != object_.end() ? &*it : nullptr;
}

void OptionReader::fail(std::string_view key, const nlohmann::json& value,
                        const std::string& expected) const {
  // used_key_: the key as the config spelled it (an alias, if that was given).
  std::string message = "expected " + expected + ", found " + describe_json_value(value);
  for (const auto& [k, why] : limits_) {
    if (k == key) message += " (pipesim's bound: " + why + ")";
  }
  throw_config_error(path_of(used_key_), message);
}

void OptionReader::integer(std::string_view key, std::int64_t& field, std::int64_t min,
                           std::int64_t max, std::string_view) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  const std::string expected = "an integer " + range_text(min, max);
  std::int64_t value = 0;
  if (v->is_number_integer()) {
    value = v->get<std::int64_t>();
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
      fail(key, *v, expected);
    }
  } else if (v->is_number_float() && std::isfinite(v->get<double>()) &&
             v->get<double>() == std::floor(v->get<double>()) &&
             std::fabs(v->get<double>()) < 9.0e18) {
    value = static_cast<std::int64_t>(v->get<double>());
  } else if (strings_allowed_ && v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size()) fail(key, *v, expected);
  } else {
    fail(key, *v, expected);
  }
  if (value < min || value > max) fail(key, *v, expected);
  field = value;
}

void OptionReader::real(std::string_view key, double& field, double min, double max,
                        std::string_view) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  const std::string expected = "a number from " + real_text(min) + " to " + real_text(max);
  double value = 0;
  if (v->is_number()) {
    value = v->get<double>();
  } else if (strings_allowed_ && v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size()) fail(key, *v, expected);
  } else {
    fail(key, *v, expected);
  }
  if (!std::isfinite(value) || value < min || value > max) fail(key, *v, expected);
  field = value;
}

void OptionReader::boolean(std::string_view key, bool& field, std::string_view) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  std::string text;
  if (strings_allowed_ && v->is_string()) {
    // Kafka's ConfigDef parses booleans case-insensitively after trimming.
    for (const char c : v->get_ref<const std::string&>()) {
      if (c != ' ' && c != '\t') text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (v->is_boolean()) {
    field = v->get<bool>();
  } else if (text == "true" || text == "false") {
    field = text == "true";
  } else {
    fail(key, *v, "true or false");
  }
}

void OptionReader::text(std::string_view key, std::string& field, std::string_view) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  if (v->is_number_integer()) {
    field = v->dump();
    return;
  }
  if (!v->is_string()) fail(key, *v, "a string");
  field = v->get<std::string>();
}

void OptionReader::choice(std::string_view key, std::string& field,
                          std::initializer_list<std::string_view> choices, std::string_view) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  std::string expected = "one of";
  for (const auto c : choices) expected += " \"" + std::string(c) + "\"";
  // An integer stands for its text: acks=1 in a properties file is the string "1".
  const std::string s = v->is_number_integer() ? v->dump() : (v->is_string() ? v->get<std::string>() : "");
  if (!v->is_string() && !v->is_number_integer()) fail(key, *v, expected);
  if (std::find(choices.begin(), choices.end(), s) == choices.end()) fail(key, *v, expected);
  field = s;
}

void OptionReader::millis(std::string_view key, Time& field, std::int64_t min_ms,
                          std::int64_t max_ms, std::string_view doc) {
  std::int64_t ms = field.us / 1000;
  integer(key, ms, min_ms, max_ms, doc);
  field = Time::millis(ms);
}

void OptionReader::duration(std::string_view key, Time& field, Time min, Time max,
                            std::string_view) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  const std::string expected = "a duration such as \"30s\" or \"1h30m\" (units d, h, m, s, ms, us) from " +
                               format_duration(min) + " to " + format_duration(max);
  if (!v->is_string()) fail(key, *v, expected);
  const auto parsed = parse_duration(v->get_ref<const std::string&>());
  if (!parsed || *parsed < min || *parsed > max) fail(key, *v, expected);
  field = *parsed;
}

void OptionReader::any(std::string_view key, nlohmann::json& field, const JsonCheck& check,
                       std::string_view) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  const std::string expected = check(*v);
  if (!expected.empty()) fail(key, *v, expected);
  field = *v;
}

void OptionReader::ignored(std::initializer_list<std::string_view> keys) {
  for (const auto k : keys) ignored_.emplace_back(k);
}

void OptionReader::real_keys(std::function<bool(std::string_view)> known, std::vector<std::string> candidates) {
  real_known_ = std::move(known);
  real_candidates_ = std::move(candidates);
}

void OptionReader::alias(std::string_view alias_key, std::string_view key) {
  aliases_.emplace_back(std::string(alias_key), std::string(key));
}

void OptionReader::removed(std::string_view key, std::string_view replacement) {
  known_.emplace_back(key);
  if (object_.contains(std::string(key))) {
    used_key_ = std::string(key);
    throw_config_error(path_of(key), "no longer exists: " + std::string(replacement));
  }
}

void OptionReader::limit(std::string_view key, std::string_view why) {
  limits_.emplace_back(key, why);
}

void OptionReader::finish() {
  for (const auto& item : object_.items()) {
    // Not a structured binding: clang 14 cannot capture one in the lambda below.
    const std::string& key = item.key();
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const bool aliased = std::any_of(aliases_.begin(), aliases_.end(),
                                     [&](const auto& a) { return a.first == key; });
    if (aliased) continue;
    if (std::find(ignored_.begin(), ignored_.end(), key) != ignored_.end() || (real_known_ && real_known_(key))) {
      ignored_found_.push_back(path_of(key));
      continue;
    }
    std::vector<std::string> candidates = known_;
    candidates.insert(candidates.end(), real_candidates_.begin(), real_candidates_.end());
    const std::string hint = closest_key(key, candidates);
    used_key_ = key;
    throw_config_error(path_of(key), hint.empty() ? "unknown key"
                                                  : "unknown key; did you mean \"" + hint + "\"?");
  }
}

void OptionWriter::duration(std::string_view k, const Time& f, Time, Time, std::string_view) {
  out_[std::string(k)] = format_duration(f);
}

void OptionLister::real(std::string_view k, const double& f, double lo, double hi,
                        std::string_view d) {
  add(k, real_text(f), d, Kind::REAL, lo, hi);
}

void OptionLister::choice(std::string_view k, const std::string& f,
                          std::initializer_list<std::string_view> c, std::string_view d) {
  add(k, "\"" + f + "\"", d, Kind::CHOICE);
  for (const auto x : c) rows_.back().choices.emplace_back(x);
}

void OptionLister::duration(std::string_view k, const Time& f, Time lo, Time hi,
                            std::string_view d) {
  add(k, "\"" + format_duration(f) + "\"", d, Kind::DURATION, static_cast<double>(lo.us),
      static_cast<double>(hi.us));
}

std::string OptionLister::Row::range() const {
  const auto whole = [](double x) { return std::to_string(static_cast<std::int64_t>(x)); };
  switch (kind) {
    case Kind::INTEGER:
    case Kind::MILLIS:
      return whole(min) + " .. " + whole(max);
    case Kind::REAL:
      return real_text(min) + " .. " + real_text(max);
    case Kind::DURATION:
      return format_duration(Time{static_cast<std::int64_t>(min)}) + " .. " +
             format_duration(Time{static_cast<std::int64_t>(max)});
    case Kind::BOOLEAN:
      return "true, false";
    case Kind::CHOICE: {
      std::string out = "one of:";
      for (const auto& c : choices) out += " " + c;
      return out;
    }
    case Kind::TEXT:
    case Kind::ANY:
      return "";
  }
  return "";
}

}  // namespace pipesim::sim
