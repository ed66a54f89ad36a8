// The output directory of a sweep (README "pipesim sweep"):
//   sweep.json    the manifest: version, base config and its digest, grid,
//                 point count, seeds, per-seed flag, shard; written first, whole
//   seeds.jsonl   (--per-seed only) one line per point and seed
//   points.jsonl  one line per finished point, in point order
//   summary.csv   one row per point; written whole once the last point is in
// A point is finished when its line is in points.jsonl: its seed lines are
// appended (and synced) first, then its point line, each with a single
// write() and fsync(). After a kill -9, --resume cuts a torn last line and
// seed lines whose point line is missing, checks that the manifest is the
// same sweep, and carries on; since the lines are deterministic and in point
// order, the finished files are byte for byte those of an uninterrupted run.
// A shard's directory holds its own points only; merge_sweep_shards joins the
// shards of one sweep into what one unsharded run writes.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/append_file.h"

namespace pipesim::sim {

// Bad or foreign sweep directories, unreadable or unwritable files (exit 2).
class SweepFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kSweepManifestFile = "sweep.json";
inline constexpr const char* kSweepPointsFile = "points.jsonl";
inline constexpr const char* kSweepSeedsFile = "seeds.jsonl";
inline constexpr const char* kSweepSummaryFile = "summary.csv";

class SweepDirectory {
 public:
  // `manifest` must hold "points" (the whole grid's count), "seeds": {"count"},
  // "per_seed" and, for a shard, "shard": {"index", "count"} as its last key.
  // Without `resume`, `dir` must not hold a sweep yet; with it, a sweep in
  // `dir` must have the same manifest, and an empty or missing `dir` starts
  // afresh (so a job can always be started with --resume).
  SweepDirectory(std::string dir, const nlohmann::ordered_json& manifest, bool resume);

  // The grid points this directory holds (its shard's), in order.
  [[nodiscard]] const std::vector<std::size_t>& points() const { return points_; }
  // How many of points() are finished.
  [[nodiscard]] std::size_t done() const { return done_; }
  // Whether opening it cut an unfinished line (a write cut short by a kill).
  [[nodiscard]] bool cut_unfinished() const { return cut_unfinished_; }

  // Appends the next point: its seed lines (empty unless per-seed), then its line.
  void append(const std::string& point_line, const std::string& seed_lines);
  // Writes summary.csv. REQUIRES: done() == points().size().
  void finish();

 private:
  std::string dir_;
  std::vector<std::size_t> points_;
  std::uint64_t seeds_ = 0;
  bool per_seed_ = false;
  std::size_t done_ = 0;
  bool cut_unfinished_ = false;
  std::unique_ptr<AppendFile> points_file_;
  std::unique_ptr<AppendFile> seeds_file_;
};

// Joins the directories of all shards K/N (K = 1..N, each finished) of one
// sweep into `out_dir`, writing exactly the files one unsharded run writes.
// Throws SweepFileError naming what is missing, foreign or unfinished.
void merge_sweep_shards(const std::vector<std::string>& shard_dirs, const std::string& out_dir);

}  // namespace pipesim::sim
