// explain (the story of a run) and trace (its Chrome trace-event timeline).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/pipeline/config.h"
#include "models/pipeline/scenario.h"
#include "sim/report/chrome_trace.h"
#include "sim/report/story_lines.h"
#include "tests/under_sanitizer.h"

namespace pipesim::pipeline {
namespace {

Config lab(const std::string& name) {
  const char* root = std::getenv("PIPESIM_SOURCE_DIR");
  return load_config(read_config_file(std::string(root ? root : ".") + "/configs/lab/" + name));
}

std::vector<std::string> story(const sim::Trace& trace) {
  std::vector<std::string> lines;
  for (const auto& r : trace.records()) {
    if (!r.story.empty()) lines.push_back(sim::format_clock(r.at) + " " + r.story);
  }
  return lines;
}

// The position of the first line containing `text`, or -1.
int find(const std::vector<std::string>& lines, const std::string& text) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(text) != std::string::npos) return static_cast<int>(i);
  }
  return -1;
}

// (A cleanup_delay_period of a day keeps the cleanup thread out of this lab: its Keeper bursts
// would move the put times the hand calculation follows.)
TEST(Explain, TellsTheCrashToStateMismatchChainInOrder) {
  sim::Trace trace(false);
  const TracedRun run = run_scenario_traced(lab("crash_exactly_once_mismatch.json"), 1, trace);
  const auto lines = story(trace);
  // By hand (see scenario_test and connect_lab_test): killed at 90.512 s
  // with the last commit at offset 6000 (at 60.0009 s) and records 6000..9050
  // (3051) put since; evicted at 135.512 s; reassigned at 136.012 s reading
  // from 6000; State MISMATCH against the stored [9050, 9050]; FAILED.
  const int killed = find(lines, "00:01:30.512 worker-0 killed (kill -9): nothing is committed; partition 0 "
                                 "(task-0): last commit at offset 6000 (00:01:00.000), 3051 records put since");
  const int evicted = find(lines, "00:02:15.512 the group coordinator evicts");
  const int reads = find(lines, "00:02:16.012 rebalance of connect-clickhouse-sink done: task-0 reads p0@6000");
  const int mismatch = find(lines, "batch [6000,6499] lies entirely before the stored range [9050,9050]");
  const int failed = find(lines, "task-0 FAILED (AFTER_PROCESSING_STATE_MISMATCH, partition 0)");
  ASSERT_GE(killed, 0);
  EXPECT_LT(killed, evicted);
  EXPECT_LT(evicted, reads);
  EXPECT_LT(reads, mismatch);
  EXPECT_LT(mismatch, failed);
  // The outcome groups: everything after offset 9050 is pending.
  ASSERT_EQ(run.groups.size(), 1u);
  EXPECT_EQ(run.groups[0].fate, "pending");
  EXPECT_EQ(run.groups[0].ids.first, 9051);
  EXPECT_EQ(run.groups[0].ids.count, 360000 - 9051);
}

TEST(Explain, GroupsDuplicatesWithTheirEntryPoint) {
  sim::Trace trace(false);
  const TracedRun run = run_scenario_traced(lab("runbook_delete_state_row.json"), 1, trace);
  ASSERT_EQ(run.groups.size(), 1u);
  EXPECT_EQ(run.groups[0].fate, "duplicated");
  // Records 6000..9050 (see connect_lab_test: killed at 90.512 s).
  EXPECT_EQ(run.groups[0].ids.first, 6000);
  EXPECT_EQ(run.groups[0].ids.count, 9051 - 6000);
  EXPECT_EQ(run.groups[0].detail, "state_reset");
  EXPECT_GE(find(story(trace), "the restart failed again: the operator applies delete_state_row for task-0"), 0);
}

TEST(Explain, NamesTheEvictedConsumerAndTheAtLeastOnceReplay) {
  // crash_replay_at_least_once: killed at 90.5 s, last commit 6000 at 60 s;
  // the dead consumer (task-0's, on worker-0) is evicted 45 s after the
  // kill; the new instance reads from 6000 and, with exactlyOnce off,
  // inserts those records again.
  sim::Trace trace(false);
  (void)run_scenario_traced(lab("crash_replay_at_least_once.json"), 1, trace);
  const auto lines = story(trace);
  EXPECT_GE(find(lines, "00:02:15.500 the group coordinator evicts task-0's consumer (on worker-0, dead): its "
                        "session.timeout.ms (45000 ms) expired"),
            0);
  const int replay = find(lines, "task-0 inserts partition 0 from offset 6000 again");
  ASSERT_GE(replay, 0);
  EXPECT_EQ(lines[static_cast<std::size_t>(replay)].substr(0, 12), "00:02:16.002");
  // Told once per partition and instance, not for every replayed batch.
  EXPECT_EQ(find(std::vector<std::string>(lines.begin() + replay + 1, lines.end()), "again: records read again"), -1);
}

TEST(Explain, TellsOnlyTheConfiguredErrorToleranceOutcome) {
  sim::Trace none(false);
  (void)run_scenario_traced(lab("crash_exactly_once_mismatch.json"), 1, none);
  const auto a = story(none);
  EXPECT_GE(find(a, "errors.tolerance=none, so the task fails. A restart from the same committed offset"), 0);
  EXPECT_EQ(find(a, "errors.tolerance=all"), -1);
  sim::Trace all(false);
  (void)run_scenario_traced(lab("crash_exactly_once_dlq.json"), 1, all);
  const auto b = story(all);
  EXPECT_GE(find(b, "errors.tolerance=all, so this partition's records go to the DLQ and their offsets are "
                    "committed."),
            0);
  EXPECT_EQ(find(b, "the task fails"), -1);
  EXPECT_EQ(find(b, "A restart from the same committed offset fails again"), -1);
}

TEST(Explain, CollapsesLinesThatRepeatEarlierOnes) {
  // The report_inserted_offsets lab fails, restarts and fails again the same
  // way for 50 minutes: after the first rounds, its story is runs of lines
  // seen before, each told as one line.
  sim::Trace trace(false);
  (void)run_scenario_traced(lab("report_inserted_offsets_failing_task_commits_nothing.json"), 1, trace);
  const sim::StoryLines told = sim::story_lines(trace);
  EXPECT_LT(told.lines.size(), told.records);
  std::set<std::string> texts;
  std::size_t collapsed = 0, hidden = 0;
  for (const auto& line : told.lines) {
    const std::string text = line.substr(14);  // after "HH:MM:SS.mmm  "
    const auto repeat = text.find(" lines that repeat earlier ones word for word");
    if (repeat != std::string::npos) {
      ++collapsed;
      hidden += std::stoul(text.substr(text.find(": ") + 2));
      continue;
    }
    EXPECT_TRUE(texts.insert(text).second) << "told twice: " << text;
  }
  EXPECT_GE(collapsed, 1u);
  // Nothing lost: each story record is a line or counted in a collapsed one.
  EXPECT_EQ(told.lines.size() - collapsed + hidden, told.records);
}

// The crash at 90.5 s and the restarts after it fall within the first 15
// minutes (5 under the sanitizers: the task is back at ~2.5 min): enough of the
// lab for the checks of a whole trace below.
Config crash_lab_first_minutes() {
  Config c = lab("crash_exactly_once_dlq.json");
  c.run.duration = sim::Time::minutes(testing_support::kUnderSanitizer ? 5 : 15);
  c.run.drain = sim::Time::minutes(testing_support::kUnderSanitizer ? 2 : 5);
  return c;
}
// The timeline detail kept by the Chrome-trace test: less than the run.
const sim::Time kDetailWindow = sim::Time::minutes(testing_support::kUnderSanitizer ? 3 : 10);

TEST(Explain, TracingDoesNotChangeTheRun) {
  const Config c = crash_lab_first_minutes();
  sim::Trace trace(true);
  const TracedRun traced = run_scenario_traced(c, 3, trace);
  const sim::Metrics plain = run_scenario(c, 3);
  ASSERT_EQ(traced.metrics.size(), plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(traced.metrics[i].value, plain[i].value) << plain[i].name;
}

TEST(Trace, ChromeTraceParsesAndHoldsTheExpectedTracks) {
  sim::Trace trace(true, sim::Time{0}, kDetailWindow);
  run_scenario_traced(crash_lab_first_minutes(), 1, trace);
  const auto json = nlohmann::json::parse(sim::chrome_trace_json(trace, "test"));
  std::set<std::string> tracks;
  std::set<std::string> phases;
  bool keeper_counter = false, put_span = false;
  for (const auto& e : json["traceEvents"]) {
    phases.insert(e["ph"].get<std::string>());
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "C" && e["name"] == "in_flight") keeper_counter = true;
    if (e["ph"] == "X" && e["name"] == "put") put_span = e.contains("dur") && e["dur"].get<std::int64_t>() > 0;
  }
  for (const char* t : {"faults", "producer", "partition-0", "task-0", "task-0 inserts", "keeper", "connect"}) {
    EXPECT_TRUE(tracks.count(t)) << t;
  }
  EXPECT_TRUE(keeper_counter);
  EXPECT_TRUE(put_span);
  EXPECT_TRUE(phases.count("i"));
  // Detail stops at the window's end; story sentences (instant events) are kept throughout.
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "X" || e["ph"] == "C") {
      EXPECT_LE(e["ts"].get<std::int64_t>(), kDetailWindow.us);
    }
  }
}

// Fit for Perfetto: on every track, spans nest or follow one another (a task's
// inserts never overlap), and a fault's span is on its target's track with
// the target in its args.
TEST(Trace, SpansNestOrFollowOnEveryTrackAndFaultsNameTheirTarget) {
  sim::Trace trace(true);
  run_scenario_traced(crash_lab_first_minutes(), 1, trace);
  const auto json = nlohmann::json::parse(sim::chrome_trace_json(trace, "test"));
  std::map<int, std::string> names;
  std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> spans;
  bool fault_span = false;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    if (e["ph"] != "X") continue;
    const std::int64_t ts = e["ts"].get<std::int64_t>();
    spans[e["tid"].get<int>()].emplace_back(ts, ts + e["dur"].get<std::int64_t>());
    if (e["name"] == "worker_crash") {
      fault_span = true;
      EXPECT_EQ(names[e["tid"].get<int>()], "faults on " + e["args"]["target"].get<std::string>());
    }
  }
  EXPECT_TRUE(fault_span);
  for (auto& [tid, list] : spans) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::int64_t> open;
    for (const auto& [start, end] : list) {
      while (!open.empty() && open.back() <= start) open.pop_back();
      EXPECT_TRUE(open.empty() || end <= open.back()) << names[tid] << ": a span at " << start << " overlaps";
      open.push_back(end);
    }
  }
}

TEST(Trace, DetailStopsAtItsCapAndSaysWhereButTheStoryStaysWhole) {
  sim::Trace trace(true, sim::Time{0}, sim::Time::max(), 2);
  trace.instant(sim::Time{10}, "t", "a");
  trace.story(sim::Time{15}, "faults", "f", "a fault");
  trace.counter(sim::Time{20}, "t", "c", 1.0);
  EXPECT_FALSE(trace.detail_cut());
  trace.span(sim::Time{30}, sim::Time{5}, "t", "s");  // the third detail record: cut here
  trace.instant(sim::Time{40}, "t", "b");
  trace.story(sim::Time{50}, "faults", "g", "another fault");
  ASSERT_EQ(trace.records().size(), 4u);  // 2 detail records and both story sentences
  EXPECT_EQ(trace.records()[3].story, "another fault");
  ASSERT_TRUE(trace.detail_cut());
  EXPECT_EQ(trace.detail_cut()->us, 30);
}

TEST(Trace, AnOverlappingSpanGoesToTheTracksNextLane) {
  sim::Trace trace(true);
  trace.span(sim::Time{0}, sim::Time{10}, "t", "a");
  trace.span(sim::Time{2}, sim::Time{2}, "t", "nested");   // inside a: same lane
  trace.span(sim::Time{5}, sim::Time{10}, "t", "partial");  // ends after a: next lane
  trace.span(sim::Time{10}, sim::Time{3}, "t", "after");    // a has ended: first lane again
  const auto json = nlohmann::json::parse(sim::chrome_trace_json(trace, "test"));
  std::map<int, std::string> names;
  std::map<std::string, std::string> lane;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    if (e["ph"] == "X") lane[e["name"].get<std::string>()] = names[e["tid"].get<int>()];
  }
  EXPECT_EQ(lane["a"], "t");
  EXPECT_EQ(lane["nested"], "t");
  EXPECT_EQ(lane["partial"], "t #2");
  EXPECT_EQ(lane["after"], "t");
}

}  // namespace
}  // namespace pipesim::pipeline
