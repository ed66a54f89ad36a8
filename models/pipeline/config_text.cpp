// Reading a config's text: files, JSON parsed with a nesting limit and errors
// that name line and column, and --set overrides (section.key=value).
#include "models/pipeline/config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "models/pipeline/clickhouse_settings.h"
#include "models/pipeline/config_detail.h"
#include "sim/config/duration.h"

namespace pipesim::pipeline {

using nlohmann::json;
using sim::ConfigError;
using sim::Time;

std::string read_config_text(const std::string& path) {
  // "-": the config comes on standard input (as `decide --cases -` takes its cases).
  if (path == "-") {
    std::stringstream buffer;
    buffer << std::cin.rdbuf();
    return buffer.str();
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError("config error: cannot read " + path + ": Is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError("config error: cannot read " + path + ": " + std::strerror(errno));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

json read_config_file(const std::string& path) {
  return connect_rest_document(parse_config_text_not_null(read_config_text(path), path));
}

json parse_config_text_not_null(const std::string& text, const std::string& path) {
  json raw = parse_config_text(text, path);
  // A file holding `null` is not an empty config (the production baseline is
  // the absence of a file): it is a file that is not an object.
  if (raw.is_null())
    sim::throw_config_error("(top level)", "expected an object with sections, found null");
  return raw;
}

namespace {

// A config is a few levels deep; a document nested deeper is refused while
// parsing, before anything walks it recursively (printing a 200,000-deep
// array in a message overflowed the stack: a fuzzing finding).
constexpr int kMaxNesting = 64;

json parse_limited(const std::string& text, const std::string& where) {
  // A key given twice in one object: nlohmann keeps the last silently, a
  // typo-like mistake the user should hear of. The path is kept as the
  // parser goes (a frame per open object or array).
  struct Frame {
    bool array = false;
    std::size_t index = 0;       // an array's next element
    std::set<std::string> keys;  // an object's keys so far (a set: objects may be huge)
    std::string key;             // the object's current key
  };
  std::vector<Frame> frames;
  const auto path = [&frames] {
    std::string p;
    for (const auto& f : frames) {
      if (f.array) {
        p += "[" + std::to_string(f.index) + "]";
      } else if (!f.key.empty()) {
        p += (p.empty() ? "" : ".") + f.key;
      }
    }
    return p;
  };
  const json::parser_callback_t limit = [&](int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth >= kMaxNesting) {
      throw ConfigError(where + "JSON nested deeper than " + std::to_string(kMaxNesting) +
                        " levels");
    }
    if (event == E::object_start || event == E::array_start) {
      frames.push_back(Frame{event == E::array_start, 0, {}, {}});
    } else if (event == E::key && !frames.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      Frame& f = frames.back();
      f.key = key;
      if (!f.keys.insert(key).second) {
        throw ConfigError(where + "duplicate key \"" + key + "\" at " + path() +
                          " (JSON keeps only the last: give it once)");
      }
    } else if (event == E::object_end || event == E::array_end || event == E::value) {
      if (event != E::value && !frames.empty()) frames.pop_back();
      if (!frames.empty() && frames.back().array) ++frames.back().index;
    }
    return true;
  };
  // nlohmann's lexer takes a NUL byte for the end of the input and would
  // ignore everything after it: a JSON text has none.
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    throw ConfigError(where + "malformed JSON at line " + std::to_string(line) +
                      ": a NUL byte (a JSON text has none)");
  }
  return json::parse(text, limit);
}

// nlohmann's message without its "[json.exception.out_of_range.406] " prefix.
std::string without_prefix(const std::string& what) {
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

}  // namespace

json parse_config_text(const std::string& text, const std::string& path) {
  try {
    return parse_limited(text, "config error: " + path + ": ");
  } catch (const json::out_of_range& e) {
    // A number beyond double's range (1e400): nlohmann throws out_of_range,
    // not parse_error, and it escaped as an abort (a fuzzing finding).
    throw ConfigError("config error: " + path + ": " + without_prefix(e.what()));
  } catch (const json::parse_error& e) {
    // Turn the byte offset into line and column, which editors show.
    std::size_t line = 1;
    std::size_t column = 1;
    const std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    const auto colon = what.find("syntax error");
    if (colon != std::string::npos) what = what.substr(colon);
    throw ConfigError("config error: " + path + ": malformed JSON at line " + std::to_string(line) +
                      ", column " + std::to_string(column) + ": " + what);
  }
}

void apply_override(json& raw, const std::string& assignment) {
  const auto eq = assignment.find('=');
  const auto dot = assignment.find('.');
  const std::string bad = "bad --set \"" + assignment + "\": ";
  if (eq == std::string::npos) throw ConfigError(bad + "expected section.key=value");
  if (dot == std::string::npos || dot > eq) {
    const std::string section = assignment.substr(0, eq);
    if (section != "faults") throw ConfigError(bad + "expected section.key=value");
  }
  // Raw bytes from the command line: a value that is not UTF-8 could not be
  // printed back as JSON (an abort in the first message naming it: a fuzzing finding).
  try {
    (void)json(assignment).dump();
  } catch (const json::type_error&) {
    throw ConfigError("bad --set: not valid UTF-8");
  }
  // The file's top level must be an object for any override to apply; the
  // error is the one load_config gives. (faults=... on a file holding a plain
  // number aborted with nlohmann's type_error, and section.key=... silently
  // replaced a non-object file with {}: a fuzzing finding.)
  if (raw.is_null()) raw = json::object();
  if (!raw.is_object()) {
    sim::throw_config_error(
        "(top level)", "expected an object with sections, found " + sim::describe_json_value(raw));
  }
  const std::string value_text = assignment.substr(eq + 1);
  json value;
  try {
    value = parse_limited(value_text, bad);
  } catch (const json::exception&) {
    // Not JSON (or a number beyond double's range, out_of_range): a string.
    value = value_text;
  }
  if (dot == std::string::npos || dot > eq) {  // faults=[...]
    raw["faults"] = value;
    return;
  }
  const std::string section = assignment.substr(0, dot);
  const std::string key = assignment.substr(dot + 1, eq - dot - 1);
  if (section == "faults") {
    throw ConfigError(bad +
                      "\"faults\" is a list: set it whole, e.g. --set 'faults=[{\"kind\": "
                      "\"worker_crash\", \"at\": \"1h\"}]'");
  }
  if (std::find(config_detail::section_names().begin(), config_detail::section_names().end(),
                section) == config_detail::section_names().end()) {
    const std::string hint = sim::closest_key(section, config_detail::section_names());
    throw ConfigError(bad + "unknown section \"" + section + "\"" +
                      (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
  }
  if (key.empty()) throw ConfigError(bad + "expected section.key=value");
  // A connector's tasks.max or consumer.override.<key> wins over connect.<key>
  // (load_config); a --set or a sweep grid's connect.<key> applies last, so
  // it sets the connector's too where the connector gives one.
  if (section == "connect" && raw.contains("connector") && raw["connector"].is_object()) {
    const auto& consumer = modelled_consumer_keys();
    const bool consumer_key = std::find(consumer.begin(), consumer.end(), key) != consumer.end();
    if (key == "tasks.max" || consumer_key) {
      const std::string connector_key = key == "tasks.max" ? key : "consumer.override." + key;
      json& connector = raw["connector"];
      json& props = connector.contains("config") && connector["config"].is_object()
                        ? connector["config"]
                        : connector;
      if (props.contains(connector_key)) {
        props[connector_key] =
            &props == &connector ? value : json(value.is_string() ? value : json(value.dump()));
      }
    }
  }
  // The connector's clickhouseSettings override the clickhouse section's
  // insert settings (load_config); a --set of one applies last, there too.
  if (section == "clickhouse" && raw.contains("connector") && raw["connector"].is_object()) {
    const auto& settings = insert_settings();
    if (std::find(settings.begin(), settings.end(), key) != settings.end()) {
      json& connector = raw["connector"];
      json& props = connector.contains("config") && connector["config"].is_object()
                        ? connector["config"]
                        : connector;
      if (props.contains("clickhouseSettings") && props["clickhouseSettings"].is_string()) {
        std::string text = props["clickhouseSettings"].get<std::string>();
        std::string setting = value.is_string() ? value.get<std::string>() : value.dump();
        if (value.is_boolean()) setting = value.get<bool>() ? "1" : "0";
        if (set_clickhouse_setting(text, key, setting)) props["clickhouseSettings"] = text;
      }
    }
  }
  json& target = raw[section];
  if (!target.is_object()) target = json::object();
  // A connector pasted in Connect REST form keeps its properties under "config".
  if (section == "connector" && target.contains("config") && target["config"].is_object()) {
    const json text = value.is_string() ? value : json(value.dump());
    if (key == "name") {
      target["name"] = text;
      if (target["config"].contains("name")) target["config"]["name"] = text;
    } else {
      target["config"][key] = text;
    }
  } else {
    target[key] = value;
  }
}

}  // namespace pipesim::pipeline
