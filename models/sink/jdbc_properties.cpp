#include "models/sink/jdbc_properties.h"

#include <cstdint>

#include "sim/config/options.h"

namespace pipesim::sink {

namespace {

// A timeout as clickhouse-java reads it: a whole number of milliseconds.
sim::Time read_timeout_ms(const std::string& value, const std::string& path) {
  constexpr std::int64_t kMaxMs = 86'400'000;  // a day: longer is no timeout in practice
  bool digits = !value.empty() && value.size() <= 9;
  for (const char ch : value) digits = digits && ch >= '0' && ch <= '9';
  const std::int64_t ms = digits ? std::stoll(value) : -1;
  if (ms < 1 || ms > kMaxMs) {
    sim::throw_config_error(path,
                            "expected a whole number of milliseconds from 1 to 86400000 "
                            "(0, no timeout, is not modelled), found \"" + value + "\"");
  }
  return sim::Time::millis(ms);
}

}  // namespace

JdbcProperties parse_jdbc_properties(const std::string& text, const std::string& path) {
  JdbcProperties out;
  std::string query = text;
  if (!query.empty() && query.front() == '?') query.erase(0, 1);
  std::size_t start = 0;
  while (start < query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string pair = query.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    if (eq == 0 || eq == std::string::npos) {
      sim::throw_config_error(path, "expected key=value pairs separated by '&', found \"" + pair + "\"");
    }
    const std::string key = pair.substr(0, eq);
    if (key == "socket_timeout") {
      out.socket_timeout = read_timeout_ms(pair.substr(eq + 1), path + ".socket_timeout");
    } else if (key == "connect_timeout") {
      out.connect_timeout = read_timeout_ms(pair.substr(eq + 1), path + ".connect_timeout");
    } else {
      out.ignored.push_back(path + "." + key);
    }
  }
  return out;
}

}  // namespace pipesim::sink
