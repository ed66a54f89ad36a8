#include "models/pipeline/clickhouse_settings.h"

#include <algorithm>

namespace pipesim::pipeline {

namespace {

std::string setting_trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// As Java's String.split(regex): trailing empty pieces dropped.
std::vector<std::string> java_split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

bool boolean_setting(const std::string& key) {
  return key == "insert_deduplicate" || key == "async_insert" ||
         key == "async_insert_deduplicate" || key == "wait_for_async_insert";
}

// ClickHouse reads a setting's value from text: a Bool from 0/1 (or
// true/false), a number from its digits; anything else stays text, and the
// clickhouse section's reader says what it expected.
nlohmann::json typed(const std::string& key, const std::string& value) {
  if (boolean_setting(key)) {
    if (value == "1" || value == "true") return true;
    if (value == "0" || value == "false") return false;
    return value;
  }
  const bool digits =
      !value.empty() && value.size() <= 18 &&
      std::all_of(value.begin(), value.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  return digits ? nlohmann::json(std::stoll(value)) : nlohmann::json(value);
}

}  // namespace

const std::vector<std::string>& insert_settings() {
  static const std::vector<std::string> keys = {
      "insert_quorum", "insert_quorum_timeout",    "insert_deduplicate",
      "async_insert",  "async_insert_deduplicate", "wait_for_async_insert"};
  return keys;
}

ClickHouseSettingsInput parse_clickhouse_settings(const std::string& text,
                                                  const std::string& path) {
  ClickHouseSettingsInput out;
  const std::string all = setting_trimmed(text);
  if (all.empty()) return out;
  for (const std::string& piece : java_split(all, ',')) {
    if (setting_trimmed(piece).empty()) continue;
    const std::vector<std::string> pair = java_split(setting_trimmed(piece), '=');
    if (pair.size() != 2) {
      out.ignored.push_back(path + " \"" + setting_trimmed(piece) +
                            "\" (not key=value: the connector drops it)");
      continue;
    }
    const std::string key = setting_trimmed(pair[0]);
    const std::string value = setting_trimmed(pair[1]);
    const auto& modelled = insert_settings();
    if (std::find(modelled.begin(), modelled.end(), key) != modelled.end()) {
      out.modelled[key] = typed(key, value);
    } else {
      out.ignored.push_back(path + "." + key);
    }
  }
  return out;
}

bool set_clickhouse_setting(std::string& text, const std::string& key, const std::string& value) {
  std::vector<std::string> pieces = java_split(text, ',');
  bool found = false;
  for (std::string& piece : pieces) {
    const std::vector<std::string> pair = java_split(setting_trimmed(piece), '=');
    if (pair.size() == 2 && setting_trimmed(pair[0]) == key) {
      piece = key + "=" + value;
      found = true;
    }
  }
  if (!found) return false;
  std::string joined;
  for (const auto& piece : pieces) joined += (joined.empty() ? "" : ",") + piece;
  text = joined;
  return true;
}

}  // namespace pipesim::pipeline
