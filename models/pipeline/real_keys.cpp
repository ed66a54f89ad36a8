#include "models/pipeline/real_keys.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace pipesim::pipeline {
namespace {

std::vector<std::string> parse_keys(std::string_view tsv) {
  std::vector<std::string> keys;
  bool header = true;
  while (!tsv.empty()) {
    const auto nl = tsv.find('\n');
    const std::string_view line = tsv.substr(0, nl);
    tsv = nl == std::string_view::npos ? std::string_view{} : tsv.substr(nl + 1);
    if (header) {
      header = false;
      continue;
    }
    const auto tab = line.find('\t');
    if (!line.empty()) keys.emplace_back(line.substr(0, tab));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Families whose names carry an alias or a nested config (Kafka's
// originalsWithPrefix): anything after the prefix is the nested system's.
bool in_family(std::string_view key, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return starts_with(key, p) && key.size() > p.size(); });
}

}  // namespace

const std::vector<std::string>& configdef_keys(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::string>, std::less<>> lists;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = lists.find(name);
  if (it == lists.end()) it = lists.emplace(std::string(name), parse_keys(configdef_tsv(name))).first;
  return it->second;
}

bool configdef_has(std::string_view name, std::string_view key) {
  const auto& keys = configdef_keys(name);
  return std::binary_search(keys.begin(), keys.end(), key, std::less<>());
}

bool real_key(std::string_view section, std::string_view key) {
  if (section == "producer") return configdef_has("producer", key);
  if (section == "connect") {
    if (configdef_has("worker", key) || configdef_has("consumer", key)) return true;
    if (starts_with(key, "consumer.")) return configdef_has("consumer", key.substr(9));
    return in_family(key, {"producer.", "admin.", "key.converter.", "value.converter.", "header.converter.",
                           "config.providers.", "listeners.https.", "admin.listeners.https."});
  }
  if (section == "connector") {
    if (configdef_has("connector", key) || configdef_has("clickhouse_sink", key)) return true;
    if (starts_with(key, "consumer.override.")) return configdef_has("consumer", key.substr(18));
    if (starts_with(key, "producer.override.")) return configdef_has("producer", key.substr(18));
    return in_family(key, {"admin.override.", "transforms.", "predicates.", "key.converter.",
                           "value.converter.", "header.converter."});
  }
  return false;
}

std::vector<std::string> real_key_candidates(std::string_view section) {
  std::vector<std::string> out;
  const auto add = [&](std::string_view list, std::string_view prefix = {}) {
    for (const auto& k : configdef_keys(list)) out.push_back(std::string(prefix) + k);
  };
  if (section == "producer") add("producer");
  if (section == "connect") {
    add("worker");
    add("consumer");
  }
  if (section == "connector") {
    add("connector");
    add("clickhouse_sink");
    add("consumer", "consumer.override.");
  }
  return out;
}

}  // namespace pipesim::pipeline
