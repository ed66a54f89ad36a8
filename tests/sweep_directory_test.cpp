// Sweep output: append-only files that lose at most a torn last line, the
// JSON-line and CSV formats, resuming a directory after a kill, and merging
// shard directories into exactly what one unsharded sweep writes.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/engine/interrupt.h"
#include "sim/experiment/statistics.h"
#include "sim/report/append_file.h"
#include "sim/report/sweep_directory.h"
#include "sim/report/sweep_output.h"

namespace pipesim::sim {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "pipesim_sweep_test.XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  [[nodiscard]] std::string operator/(const std::string& name) const {
    return (fs::path(path_) / name).string();
  }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

void append_raw(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << text;
}

TEST(AppendFile, RecoverCutsATornLastLine) {
  TempDir t;
  const std::string path = t / "lines.jsonl";
  {
    AppendFile f(path);
    f.append("a\nb\n");
  }
  append_raw(path, "{\"point\":2,\"par");  // a write cut short by kill -9
  bool torn = false;
  EXPECT_EQ(read_lines(path, &torn), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(torn);
  EXPECT_EQ(recover_lines(path), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(slurp(path), "a\nb\n");
  {
    AppendFile f(path);
    f.append("c\n");
  }
  EXPECT_EQ(slurp(path), "a\nb\nc\n");
  EXPECT_EQ(recover_lines(path, 1), (std::vector<std::string>{"a"}));
  EXPECT_EQ(slurp(path), "a\n");
  EXPECT_TRUE(read_lines(t / "missing").empty());
}

TEST(SweepOutput, CsvNumbersReadBackAsTheSameDouble) {
  EXPECT_EQ(csv_number(96.0), "96");
  EXPECT_EQ(csv_number(200000000.0), "200000000");  // not 2e+08
  EXPECT_EQ(csv_number(-2.5), "-2.5");
  EXPECT_EQ(csv_number(0.1), "0.1");
  EXPECT_EQ(csv_number(1.0 / 3.0),
            "0.3333333333333333");  // 16 digits: the shortest that round-trips
  EXPECT_EQ(std::stod(csv_number(1.0 / 3.0)), 1.0 / 3.0);
  EXPECT_EQ(csv_number(std::nan("")), "");
}

std::vector<MetricSummary> two_metrics(double a, double b) {
  // Two seeds with values a-1, a+1 (mean a, sd sqrt(2)) and b, b (mean b, sd 0).
  return summarize_runs({{{"dups", a - 1}, {"lag.max", b}}, {{"dups", a + 1}, {"lag.max", b}}});
}

TEST(SweepOutput, PointLineAndCsvRow) {
  const Json params = Json::parse(
      R"({"connect.max.poll.records": 200, "app.resend_policy": "a,b", "connector.exactlyOnce": true})");
  const std::string line = point_line(3, params, "00ff", 1, 2, two_metrics(10, 7));
  // t(0.975, 1) = 12.706...; half width = t * sqrt(2) / sqrt(2) = t.
  const double t = student_t_quantile(0.975, 1);
  const Json j = Json::parse(line);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(j["point"], 3);
  EXPECT_EQ(j["params"].dump(), params.dump());
  EXPECT_EQ(j["seeds"].dump(), R"({"first":1,"count":2})");
  EXPECT_EQ(j["metrics"]["dups"]["mean"], 10.0);
  EXPECT_DOUBLE_EQ(j["metrics"]["dups"]["ci95"][1].get<double>(), 10 + t);
  EXPECT_EQ(j["metrics"]["lag"]["max"]["stddev"], 0.0);  // dotted names nest

  const std::string csv = summary_csv({line.substr(0, line.size() - 1)});
  const std::string header =
      "point,connect.max.poll.records,app.resend_policy,connector.exactlyOnce,config_digest,"
      "dups_mean,dups_stddev,dups_ci95_lo,dups_ci95_hi,dups_p50,dups_p95,dups_p99,"
      "lag.max_mean,lag.max_stddev,lag.max_ci95_lo,lag.max_ci95_hi,lag.max_p50,lag.max_p95,lag.max_"
      "p99\n";
  // dups: 9, 11 -> p50 10, p95 = 9 + 2 * 0.95 = 10.9, p99 = 10.98; the CI is clipped at 0 below.
  const std::string row = "3,200,\"a,b\",true,00ff,10," + csv_number(std::sqrt(2.0)) + ",0," +
                          csv_number(10 + t) + ",10," + csv_number(9 + 2 * 0.95) + "," +
                          csv_number(9 + 2 * 0.99) + ",7,0,7,7,7,7,7\n";
  EXPECT_EQ(csv, header + row);
}

// A small sweep's manifest and lines, made by hand.
Json manifest_of(std::size_t points, bool per_seed, std::uint64_t shard = 0,
                 std::uint64_t shards = 0) {
  Json m;
  m["pipesim_version"] = "test";
  m["grid"] = {{"k.x", {1, 2, 3, 4, 5}}};
  m["points"] = points;
  m["seeds"] = {{"first", 1}, {"count", 2}};
  m["per_seed"] = per_seed;
  if (shards > 0) m["shard"] = {{"index", shard}, {"count", shards}};
  return m;
}

Json params_of(std::size_t p) { return Json{{"k.x", p + 1}}; }

std::string line_of(std::size_t p) {
  return point_line(p, params_of(p), "d", 1, 2, two_metrics(p, 2 * p));
}

std::string seeds_of(std::size_t p) {
  return seed_lines(
      p, params_of(p), 1,
      {{{"dups", p - 1.0}, {"lag.max", 2.0 * p}}, {{"dups", p + 1.0}, {"lag.max", 2.0 * p}}});
}

void run_points(SweepDirectory& d, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i) {
    const std::size_t p = d.points()[i];
    d.append(line_of(p), seeds_of(p));
  }
}

std::string files_of(const std::string& dir) {
  std::string all;
  for (const char* f : {kSweepManifestFile, kSweepPointsFile, kSweepSeedsFile, kSweepSummaryFile}) {
    all += std::string("== ") + f + "\n" + slurp((fs::path(dir) / f).string());
  }
  return all;
}

TEST(SweepDirectory, ResumeAfterAKillGivesTheFilesOfAnUninterruptedRun) {
  TempDir t;
  {
    SweepDirectory whole(t / "whole", manifest_of(5, true), false);
    run_points(whole, 0, 5);
    whole.finish();
  }
  {
    SweepDirectory first(t / "killed", manifest_of(5, true), false);
    run_points(first, 0, 2);
  }
  // The kill came while point 2 was being written: its seed lines are in,
  // its point line only in part.
  append_raw(t / "killed/seeds.jsonl", seeds_of(2));
  append_raw(t / "killed/points.jsonl", line_of(2).substr(0, 40));
  EXPECT_FALSE(fs::exists(t / "killed/summary.csv"));

  SweepDirectory resumed(t / "killed", manifest_of(5, true), true);
  EXPECT_EQ(resumed.done(), 2u);
  EXPECT_TRUE(resumed.cut_unfinished());
  EXPECT_EQ(read_lines(t / "killed/seeds.jsonl").size(), 4u);  // 2 points x 2 seeds
  run_points(resumed, 2, 5);
  resumed.finish();
  EXPECT_EQ(files_of(t / "killed"), files_of(t / "whole"));
}

TEST(SweepDirectory, RefusesToOverwriteOrToResumeAnotherSweep) {
  TempDir t;
  { SweepDirectory d(t / "s", manifest_of(5, false), false); }
  try {
    SweepDirectory again(t / "s", manifest_of(5, false), false);
    FAIL();
  } catch (const SweepFileError& e) {
    EXPECT_NE(std::string(e.what()).find("already holds a sweep (sweep.json): pass --resume"),
              std::string::npos);
  }
  try {
    SweepDirectory other(t / "s", manifest_of(5, true), true);
    FAIL();
  } catch (const SweepFileError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "holds a different sweep (its sweep.json differs in \"per_seed\")"),
              std::string::npos);
  }
  // --resume on a directory without a sweep starts one.
  SweepDirectory fresh(t / "new", manifest_of(5, false), true);
  EXPECT_EQ(fresh.done(), 0u);
  EXPECT_TRUE(fs::exists(t / "new/sweep.json"));
}

// A signal that comes while the sweep writes its manifest is an interrupt
// (exit 130/143 from the command), not a file error (exit 2), and leaves no sweep.json.
TEST(SweepDirectory, AnInterruptWhileWritingTheManifestIsNotAFileError) {
  TempDir t;
  request_interrupt(SIGTERM);
  EXPECT_THROW(SweepDirectory(t / "s", manifest_of(5, false), false), Interrupted);
  clear_interrupt();
  EXPECT_FALSE(fs::exists(t / "s/sweep.json"));
}

TEST(SweepDirectory, ResumeRejectsLinesOfOtherPoints) {
  TempDir t;
  { SweepDirectory d(t / "s", manifest_of(5, false, 1, 2), false); }  // shard 1/2: points 0, 2, 4
  append_raw(t / "s/points.jsonl", line_of(0) + line_of(1));
  try {
    SweepDirectory d(t / "s", manifest_of(5, false, 1, 2), true);
    FAIL();
  } catch (const SweepFileError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2 holds point 1, expected point 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(SweepMerge, ShardsJoinIntoTheUnshardedFiles) {
  TempDir t;
  {
    SweepDirectory whole(t / "whole", manifest_of(5, true), false);
    run_points(whole, 0, 5);
    whole.finish();
  }
  for (std::uint64_t k = 1; k <= 3; ++k) {
    SweepDirectory shard(t / ("shard" + std::to_string(k)), manifest_of(5, true, k, 3), false);
    run_points(shard, 0, shard.points().size());
    shard.finish();
  }
  // Shard 1/3 holds points 0 and 3, 2/3 holds 1 and 4, 3/3 holds 2.
  EXPECT_EQ(read_lines(t / "shard2/points.jsonl").size(), 2u);
  merge_sweep_shards({t / "shard3", t / "shard1", t / "shard2"}, t / "merged");
  EXPECT_EQ(files_of(t / "merged"), files_of(t / "whole"));
}

void expect_merge_error(const std::vector<std::string>& dirs, const std::string& out,
                        const std::string& want) {
  try {
    merge_sweep_shards(dirs, out);
    FAIL() << "merged";
  } catch (const SweepFileError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(SweepMerge, NamesMissingDuplicateUnfinishedAndForeignShards) {
  TempDir t;
  for (std::uint64_t k = 1; k <= 2; ++k) {
    SweepDirectory shard(t / ("s" + std::to_string(k)), manifest_of(5, false, k, 2), false);
    run_points(shard, 0, shard.points().size() - (k == 2 ? 1 : 0));  // shard 2 stops one short
  }
  { SweepDirectory other(t / "other", manifest_of(4, false, 2, 2), false); }
  expect_merge_error({t / "s1"}, t / "m", "shard 2/2 is missing");
  expect_merge_error({t / "s1", t / "s1"}, t / "m", "shard 1/2 is given twice");
  expect_merge_error({t / "s1", t / "s2"}, t / "m",
                     "shard 2/2 in " + (t / "s2") + " is unfinished: 1 of 2 points");
  expect_merge_error(
      {t / "s1", t / "other"}, t / "m",
      "a shard of a different sweep than " + (t / "s1") + " (sweep.json differs in \"points\")");
  expect_merge_error({t / "nothing"}, t / "m", "cannot read " + (t / "nothing/sweep.json"));
  EXPECT_FALSE(fs::exists(t / "m"));
}

}  // namespace
}  // namespace pipesim::sim
