#include "cli/explain_story.h"

#include "sim/report/story_lines.h"
#include "sim/report/summary.h"

namespace pipesim::cli {
namespace {

std::string group_text(const ledger::FateGroup& g) {
  std::string text = "partition " + std::to_string(g.partition) + ": records [" +
                     std::to_string(g.ids.first) + ", " + std::to_string(g.ids.end() - 1) + "] (" +
                     std::to_string(g.ids.count) + ") ";
  if (g.fate == "duplicated") {
    text +=
        "in ClickHouse " + std::to_string(g.rows_per_id) + " times (extra rows: " + g.detail + ")";
  } else if (g.fate == "lost") {
    text += "lost (" + g.detail + ")";
  } else {
    text += "still pending at the end";
  }
  return text;
}

}  // namespace

ExplainStory tell_story(const sim::Trace& trace, const pipeline::TracedRun& run,
                        std::size_t max_groups) {
  ExplainStory story;
  const sim::StoryLines lines = sim::story_lines(trace);
  story.lines = lines.lines;
  if (lines.records == 0)
    story.lines.push_back("(nothing happened but records flowing: no fault fired)");
  const auto n = [&](const char* name) {
    return sim::format_number(sim::value_of(run.metrics, name));
  };
  story.outcome = "outcome: " + n("records_produced") + " records produced, " +
                  n("clickhouse_rows") + " rows in ClickHouse, " + n("duplicate_rows") +
                  " duplicate rows, " + n("lost_records") + " lost, " + n("pending_records") +
                  " pending";
  for (const auto& g : run.groups) {
    if (g.fate == "pending" && sim::value_of(run.metrics, "pending_records") == 0) continue;
    if (story.groups.size() < max_groups) {
      story.groups.push_back(group_text(g));
    } else {
      ++story.hidden_groups;
    }
  }
  return story;
}

ExplainStory explain_seed(const pipeline::Config& config, std::uint64_t seed,
                          std::size_t max_groups) {
  sim::Trace trace(/*detail=*/false);
  const pipeline::TracedRun run = pipeline::run_scenario_traced(config, seed, trace);
  return tell_story(trace, run, max_groups);
}

}  // namespace pipesim::cli
