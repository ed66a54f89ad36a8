#include "models/sink/jdbc_properties.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

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

// clickhouse-java 0.6's client options (ClickHouseClientOption,
// ClickHouseHttpOption, the JDBC driver's user and password): a key among
// them is valid and, but for the two modelled, ignored. An unknown key within
// a typo of one of them is refused with it (sockettimeout, socketTimeout:
// the client would not read it as the timeout); another unknown key is
// listed as ignored (a server setting, a future option).
const std::vector<std::string>& client_options() {
  static const std::vector<std::string> keys = {
      "async", "buffer_size", "client_name", "compress", "compress_algorithm", "compress_level",
      "compression", "connect_timeout", "custom_http_headers", "custom_http_params",
      "custom_settings", "database", "decompress", "decompress_algorithm", "decompress_level",
      "failover", "format", "health_check_interval", "http_connection_provider", "keep_alive",
      "key_store_password", "key_store_type", "load_balancing_policy", "max_buffer_size",
      "max_execution_time", "max_open_connections", "max_queued_buffers", "max_queued_requests",
      "max_result_rows", "max_threads_per_client", "node_check_interval", "password", "product_name",
      "read_buffer_size", "receive_query_progress", "request_buffering", "response_buffering", "retry",
      "reuse_value_wrapper", "server_time_zone", "session_check", "session_id", "session_timeout",
      "socket_ip_tos", "socket_keepalive", "socket_linger", "socket_rcvbuf", "socket_reuseaddr",
      "socket_sndbuf", "socket_tcp_nodelay", "socket_timeout", "ssl", "sslcert", "sslkey", "sslmode",
      "sslrootcert", "transaction_timeout", "trust_store", "use_binary_string", "use_objects_in_arrays",
      "use_server_time_zone", "use_server_time_zone_for_dates", "use_time_zone", "user",
      "wait_end_of_query", "write_buffer_size"};
  return keys;
}

// Lower case without '_' and '-': socketTimeout, socket-timeout, sockettimeout.
std::string folded(const std::string& key) {
  std::string out;
  for (const char ch : key) {
    if (ch == '_' || ch == '-') continue;
    out.push_back(ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch);
  }
  return out;
}

// The option an unknown key is a typo of, or "".
std::string typo_of(const std::string& key) {
  const auto& known = client_options();
  if (std::find(known.begin(), known.end(), key) != known.end()) return "";
  // A typo: the same letters (case, '_' and '-' aside), or two edits away.
  for (const auto& k : known) {
    if (folded(k) == folded(key) || sim::edit_distance(key, k) <= 2) return k;
  }
  return "";
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
    } else if (const std::string hint = typo_of(key); !hint.empty()) {
      sim::throw_config_error(path + "." + key, "unknown clickhouse-java option; did you mean \"" + hint + "\"?");
    } else {
      out.ignored.push_back(path + "." + key);
    }
  }
  return out;
}

}  // namespace pipesim::sink
