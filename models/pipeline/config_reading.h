// What the config reader's files share to read a section: the errors of one
// config, gathered, and the reading of an object with its visit() declaration
// (config.cpp, config_connector.cpp).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/pipeline/real_keys.h"
#include "sim/config/options.h"

namespace pipesim::pipeline::config_detail {

// The errors of one config, gathered so that all of a file's errors come out
// at once (up to kMaxErrors shown), each as its own line.
class ErrorList {
 public:
  static constexpr std::size_t kMaxErrors = 20;
  void add(const std::string& message) {
    if (messages_.size() < kMaxErrors) {
      messages_.push_back(message);
    } else {
      truncated_ = true;
    }
  }
  // Reading stopped with errors left unread.
  void truncate() { truncated_ = true; }
  [[nodiscard]] bool full() const { return messages_.size() >= kMaxErrors; }
  // Runs f; a ConfigError it throws is kept and the reading goes on.
  template <class F>
  void attempt(F&& f) {
    try {
      f();
    } catch (const sim::ConfigError& e) {
      add(e.what());
    }
  }
  void throw_if_any() const {
    if (messages_.empty()) return;
    std::string text;
    for (const auto& m : messages_) text += (text.empty() ? "" : "\n") + m;
    if (truncated_)
      text += "\n(further config errors not shown: the first " + std::to_string(kMaxErrors) +
              " are above)";
    throw sim::ConfigError(text);
  }

 private:
  std::vector<std::string> messages_;
  bool truncated_ = false;
};

// Reads `object` with its visit() declaration into `options`. A bad key is
// kept in `errors` and the object read again without it, so every bad key of
// a section is reported, not only the first.
template <class Options>
void visit_collecting(const nlohmann::json& object, const std::string& where, bool strings_allowed,
                      const std::string& real_section, Options& options,
                      std::vector<std::string>& ignored, ErrorList& errors) {
  nlohmann::json remaining = object;
  std::string last;
  for (;;) {
    Options attempt = options;
    sim::OptionReader reader(remaining, where, strings_allowed);
    if (!real_section.empty()) {
      reader.real_keys([real_section](std::string_view key) { return real_key(real_section, key); },
                       real_key_candidates(real_section));
    }
    try {
      visit(reader, attempt);
    } catch (const sim::ConfigError& e) {
      if (e.what() == last) return;  // the same error again: not a key's own
      last = e.what();
      errors.add(last);
      const std::string key = reader.failed_key();
      if (key.empty() || !remaining.contains(key)) return;
      if (errors.full()) {
        errors.truncate();  // re-reading a huge object key by key would take long: stop here
        return;
      }
      remaining.erase(key);
      continue;
    }
    options = attempt;
    ignored.insert(ignored.end(), reader.ignored_found().begin(), reader.ignored_found().end());
    return;
  }
}

}  // namespace pipesim::pipeline::config_detail
