// The sink's `jdbcConnectionProperties`: a URL query string ("?a=1&b=2", the
// leading "?" optional: ClickHouseHelperClient adds it) appended to the
// ClickHouse endpoint, whose options clickhouse-java reads from the URL.
// pipesim models two of them: socket_timeout (ms), the time after which the
// client gives up waiting for any answer, an insert's or a KeeperMap query's
// (clickhouse-java v1 ClickHouseClientOption.SOCKET_TIMEOUT, default 30000;
// the sink's default client_version is V1), and connect_timeout (ms,
// ClickHouseClientOption.CONNECTION_TIMEOUT, default 5000), how long opening
// a connection to a host that does not answer waits. The other options are
// listed as ignored; a key a typo away from one of clickhouse-java's options
// is refused with it (the client would not read it).
#pragma once

#include <string>
#include <vector>

#include "sim/engine/time.h"

namespace pipesim::sink {

struct JdbcProperties {
  sim::Time socket_timeout = sim::Time::millis(30000);
  sim::Time connect_timeout = sim::Time::millis(5000);
  std::vector<std::string> ignored;  // keys read but not modelled
};

// Parses `text`; a bad timeout, a malformed pair or a typo of an option is
// a config error at `path`.
JdbcProperties parse_jdbc_properties(const std::string& text, const std::string& path);

}  // namespace pipesim::sink
