// The pages of `pipesim report`, one per kind of result: a run (run --per-seed
// JSON), a comparison (compare JSON), a check (check JSON) and a sweep (its
// directory, read as {"sweep": sweep.json, "points": [points.jsonl lines]}).
// Each cell and chart value names the JSON pointer of the result it shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/explain_story.h"
#include "sim/report/html_page.h"

namespace pipesim::cli {

using Json = nlohmann::ordered_json;

struct SeedStory {
  std::string metric;  // the metric the seed is extreme in
  std::uint64_t seed = 0;
  double value = 0;
  std::string command;  // its `pipesim explain` command, from the result
  ExplainStory story;
  std::string unavailable;  // why there is no story (empty when there is one)
};

sim::HtmlPage run_page(const Json& result, const std::string& name,
                       const std::vector<SeedStory>& stories);
sim::HtmlPage compare_page(const Json& result, const std::string& name);
sim::HtmlPage check_page(const Json& result, const std::string& name);
sim::HtmlPage sweep_page(const Json& result, const std::string& name);

// Shared by the pages.
std::string interval_text(double lo, double hi);
std::string value_text(const Json& v);  // a config or grid value as a reader writes it
void config_section(sim::HtmlPage& page, const Json& config, const std::string& title);

}  // namespace pipesim::cli
