// Java .properties files, as java.util.Properties.load reads them (Kafka's
// Utils.loadProps does): `key=value`, `key: value` or `key value`; `#` and
// `!` comment lines; a line ending in an odd number of backslashes goes on
// on the next line (its leading blanks dropped); escapes \t \n \r \f \uXXXX
// and \<c> for c itself (so "\=" and "\:" in a key). A key given twice keeps
// its last value, as Properties does.
#pragma once

#include <string>
#include <vector>

namespace pipesim::sim {

struct Property {
  std::string key;
  std::string value;
  int line = 0;  // where the entry starts (1-based), for messages
};

// Parses the text; `path` names the file in messages. Throws ConfigError
// ("config error: PATH: line N: ...") for a malformed \u escape.
std::vector<Property> parse_properties(const std::string& text, const std::string& path);

// Reads and parses the file; ConfigError naming the file when it cannot be read.
std::vector<Property> read_properties_file(const std::string& path);

}  // namespace pipesim::sim
