// libFuzzer target: the config loader, as `pipesim validate FILE --set ...` drives it.
//
// Input: the text of a config file, optionally followed by a line "%%" and one
// `--set` assignment per line (section.key=value). Bad input must end in a
// ConfigError (exit 2 in the CLI); anything else escaping, a crash or a
// sanitizer report is a finding. A config that loads must survive the round
// trip the README promises: `validate --print` output loads again to the same
// effective config and digest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "models/pipeline/config.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::cerr << "config_fuzz finding: " << what << "\n";
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using pipesim::pipeline::Config;
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string text = input;
  std::vector<std::string> overrides;
  if (const auto sep = input.find("\n%%\n"); sep != std::string::npos) {
    text = input.substr(0, sep);
    std::size_t start = sep + 4;
    while (start <= input.size()) {
      const auto end = input.find('\n', start);
      const std::string line =
          input.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!line.empty()) overrides.push_back(line);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }

  Config config;
  try {
    nlohmann::json raw = pipesim::pipeline::parse_config_text(text, "fuzz.json");
    for (const auto& o : overrides) pipesim::pipeline::apply_override(raw, o);
    config = pipesim::pipeline::load_config(raw);
  } catch (const pipesim::sim::ConfigError& e) {
    const std::string message = e.what();
    if (message.empty()) finding("empty ConfigError message");
    return 0;
  }

  // validate --print, then validate of that output: same config, same digest.
  const std::string digest = pipesim::pipeline::config_digest(config);
  const std::string printed = pipesim::pipeline::effective_config(config).dump(2);
  try {
    const Config again = pipesim::pipeline::load_config(
        pipesim::pipeline::parse_config_text(printed, "printed.json"));
    if (pipesim::pipeline::config_digest(again) != digest) {
      finding("the printed effective config has another digest:\n" + printed);
    }
  } catch (const pipesim::sim::ConfigError& e) {
    finding(std::string("the printed effective config does not load: ") + e.what() + "\n" +
            printed);
  }
  return 0;
}
