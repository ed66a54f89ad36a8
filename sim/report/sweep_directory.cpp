#include "sim/report/sweep_directory.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/engine/interrupt.h"
#include "sim/experiment/sweep_grid.h"
#include "sim/report/output_file.h"
#include "sim/report/sweep_output.h"

namespace pipesim::sim {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

std::string in_dir(const std::string& dir, const char* name) {
  return (fs::path(dir) / name).string();
}

std::string manifest_text(const Json& manifest) { return manifest.dump(2) + "\n"; }

struct Layout {
  std::size_t total_points = 0;
  Shard shard;
  std::uint64_t seeds = 0;
  bool per_seed = false;
};

bool is_count(const Json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

// Reads the fields the directory needs; `where` names the manifest in errors.
Layout layout_of(const Json& m, const std::string& where) {
  const auto bad = [&where](const std::string& what) {
    return SweepFileError(where + " is not a pipesim sweep manifest: " + what);
  };
  Layout l;
  if (!m.is_object()) throw bad("expected a JSON object");
  if (!m.contains("points") || !is_count(m["points"])) throw bad("no \"points\" count");
  l.total_points = m["points"].get<std::size_t>();
  if (!m.contains("seeds") || !m["seeds"].is_object() || !m["seeds"].contains("count") ||
      !is_count(m["seeds"]["count"])) {
    throw bad("no \"seeds\": {\"count\"}");
  }
  l.seeds = m["seeds"]["count"].get<std::uint64_t>();
  l.per_seed = m.contains("per_seed") && m["per_seed"].is_boolean() && m["per_seed"].get<bool>();
  if (m.contains("shard")) {
    const Json& s = m["shard"];
    if (!s.is_object() || !s.contains("index") || !s.contains("count") || !is_count(s["index"]) ||
        !is_count(s["count"]) || s["index"].get<std::uint64_t>() < 1 ||
        s["index"].get<std::uint64_t>() > s["count"].get<std::uint64_t>()) {
      throw bad("bad \"shard\"");
    }
    l.shard = {s["index"].get<std::uint64_t>(), s["count"].get<std::uint64_t>()};
  }
  return l;
}

Json read_manifest(const std::string& dir) {
  const std::string path = in_dir(dir, kSweepManifestFile);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SweepFileError("cannot read " + path + ": is " + dir + " a sweep directory?");
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    return Json::parse(buffer.str());
  } catch (const Json::parse_error&) {
    throw SweepFileError(path + " is not valid JSON");
  }
}

// The first top-level key whose value differs, for the error message.
std::string first_difference(const Json& a, const Json& b) {
  for (const auto& [key, v] : a.items()) {
    if (!b.contains(key) || b[key] != v) return key;
  }
  for (const auto& [key, v] : b.items()) {
    if (!a.contains(key)) return key;
  }
  return "key order";
}

std::string shard_text(const Shard& s) {
  return std::to_string(s.index) + "/" + std::to_string(s.count);
}

// Checks that `lines` are points[0..] in order (or, for seed lines, each point
// `per` times); `file` names the file in errors.
void check_points(const std::vector<std::string>& lines, const std::vector<std::size_t>& points,
                  std::size_t per, const std::string& file) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::size_t p = 0;
    try {
      p = point_of_line(lines[i]);
    } catch (const std::exception& e) {
      throw SweepFileError(file + " line " + std::to_string(i + 1) + ": " + e.what());
    }
    if (i / per >= points.size() || p != points[i / per]) {
      throw SweepFileError(
          file + " line " + std::to_string(i + 1) + " holds point " + std::to_string(p) +
          ", expected " +
          (i / per < points.size() ? "point " + std::to_string(points[i / per]) : "no more lines"));
    }
  }
}

}  // namespace

SweepDirectory::SweepDirectory(std::string dir, const nlohmann::ordered_json& manifest, bool resume)
    : dir_(std::move(dir)) {
  const Layout layout = layout_of(manifest, "the new sweep");
  points_ = shard_points(layout.total_points, layout.shard);
  seeds_ = layout.seeds;
  per_seed_ = layout.per_seed;
  const std::string manifest_path = in_dir(dir_, kSweepManifestFile);
  const std::string points_path = in_dir(dir_, kSweepPointsFile);
  const std::string seeds_path = in_dir(dir_, kSweepSeedsFile);

  std::error_code ec;
  const bool has_manifest = fs::exists(manifest_path, ec);
  const bool has_points = fs::exists(points_path, ec);
  if (has_manifest || has_points) {
    if (!resume) {
      throw SweepFileError(dir_ + " already holds a sweep (" +
                           (has_manifest ? kSweepManifestFile : kSweepPointsFile) +
                           "): pass --resume to finish it, or choose another --out");
    }
    if (!has_manifest) {
      throw SweepFileError(dir_ + " has " + kSweepPointsFile + " but no " + kSweepManifestFile +
                           ": not a sweep pipesim can resume");
    }
    const Json existing = read_manifest(dir_);
    if (manifest_text(existing) != manifest_text(manifest)) {
      throw SweepFileError(
          dir_ + " holds a different sweep (its " + kSweepManifestFile + " differs in \"" +
          first_difference(existing, manifest) +
          "\"): resume it with the same config, grid, seeds and shard, or choose another --out");
    }
    bool torn = false;
    (void)read_lines(points_path, &torn);
    std::vector<std::string> lines = recover_lines(points_path);
    cut_unfinished_ = torn;
    check_points(lines, points_, 1, points_path);
    done_ = lines.size();
    if (per_seed_) {
      const std::size_t expected = done_ * seeds_;
      const std::size_t before = read_lines(seeds_path, &torn).size();
      std::vector<std::string> seed_lines = recover_lines(seeds_path, expected);
      cut_unfinished_ = cut_unfinished_ || torn || before > expected;
      if (seed_lines.size() != expected) {
        throw SweepFileError(seeds_path + " has " + std::to_string(seed_lines.size()) +
                             " lines for " + std::to_string(done_) + " finished points of " +
                             std::to_string(seeds_) + " seeds: it was changed outside pipesim");
      }
      check_points(seed_lines, points_, seeds_, seeds_path);
    }
  } else {
    fs::create_directories(dir_, ec);
    if (ec) throw SweepFileError("cannot create " + dir_ + ": " + ec.message());
    try {
      write_file_atomically(manifest_path, manifest_text(manifest));
    } catch (const Interrupted&) {
      throw;  // an interrupt is not a file error: the command reports it (exit 130/143)
    } catch (const std::exception& e) {
      throw SweepFileError(e.what());
    }
  }
  try {
    if (per_seed_) seeds_file_ = std::make_unique<AppendFile>(seeds_path);
    points_file_ = std::make_unique<AppendFile>(points_path);
  } catch (const std::exception& e) {
    throw SweepFileError(e.what());
  }
}

void SweepDirectory::append(const std::string& point_line, const std::string& seed_lines) {
  try {
    if (per_seed_) seeds_file_->append(seed_lines);
    points_file_->append(point_line);
  } catch (const std::exception& e) {
    throw SweepFileError(e.what());
  }
  ++done_;
}

void SweepDirectory::finish() {
  const std::string points_path = in_dir(dir_, kSweepPointsFile);
  try {
    write_file_atomically(in_dir(dir_, kSweepSummaryFile), summary_csv(read_lines(points_path)));
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    throw SweepFileError(e.what());
  }
}

void merge_sweep_shards(const std::vector<std::string>& shard_dirs, const std::string& out_dir) {
  if (shard_dirs.empty()) throw SweepFileError("no shard directories given");
  struct Part {
    std::string dir;
    Layout layout;
    std::vector<std::string> points;
    std::vector<std::string> seeds;
  };
  std::map<std::uint64_t, Part> parts;  // by shard index
  Json common;
  std::string common_dir;
  std::uint64_t count = 0;
  for (const auto& dir : shard_dirs) {
    Json manifest = read_manifest(dir);
    Part part{dir, layout_of(manifest, in_dir(dir, kSweepManifestFile)), {}, {}};
    manifest.erase("shard");
    if (common_dir.empty()) {
      common = manifest;
      common_dir = dir;
      count = part.layout.shard.count;
    } else if (manifest_text(manifest) != manifest_text(common)) {
      throw SweepFileError(dir + " is a shard of a different sweep than " + common_dir + " (" +
                           kSweepManifestFile + " differs in \"" +
                           first_difference(common, manifest) + "\")");
    } else if (part.layout.shard.count != count) {
      throw SweepFileError(dir + " is shard " + shard_text(part.layout.shard) + " but " +
                           common_dir + " is one of " + std::to_string(count) + " shards");
    }
    const auto seen = parts.find(part.layout.shard.index);
    if (seen != parts.end()) {
      throw SweepFileError("shard " + shard_text(part.layout.shard) +
                           " is given twice: " + seen->second.dir + " and " + dir);
    }
    const std::vector<std::size_t> expected =
        shard_points(part.layout.total_points, part.layout.shard);
    const std::string points_path = in_dir(dir, kSweepPointsFile);
    bool torn = false;
    part.points = read_lines(points_path, &torn);
    check_points(part.points, expected, 1, points_path);
    if (part.points.size() != expected.size()) {
      throw SweepFileError("shard " + shard_text(part.layout.shard) + " in " + dir +
                           " is unfinished: " + std::to_string(part.points.size()) + " of " +
                           std::to_string(expected.size()) +
                           " points; finish it with the same `pipesim sweep` command and --resume");
    }
    if (part.layout.per_seed) {
      const std::string seeds_path = in_dir(dir, kSweepSeedsFile);
      part.seeds = read_lines(seeds_path);
      if (part.seeds.size() != expected.size() * part.layout.seeds) {
        throw SweepFileError(seeds_path + " has " + std::to_string(part.seeds.size()) +
                             " lines, expected " +
                             std::to_string(expected.size() * part.layout.seeds));
      }
      check_points(part.seeds, expected, part.layout.seeds, seeds_path);
    }
    parts.emplace(part.layout.shard.index, std::move(part));
  }
  for (std::uint64_t k = 1; k <= count; ++k) {
    if (!parts.count(k)) {
      throw SweepFileError("shard " + std::to_string(k) + "/" + std::to_string(count) +
                           " is missing");
    }
  }

  // Point p is the (p / count)-th line of shard (p mod count) + 1.
  const Layout& layout = parts.begin()->second.layout;
  std::vector<std::string> points;
  std::string points_text;
  std::string seeds_text;
  for (std::size_t p = 0; p < layout.total_points; ++p) {
    const Part& part = parts.at(p % count + 1);
    const std::size_t i = p / count;
    points.push_back(part.points[i]);
    points_text += part.points[i] + "\n";
    for (std::uint64_t s = 0; s < layout.seeds && layout.per_seed; ++s) {
      seeds_text += part.seeds[i * layout.seeds + s] + "\n";
    }
  }

  std::error_code ec;
  if (fs::exists(in_dir(out_dir, kSweepManifestFile), ec)) {
    Json existing = read_manifest(out_dir);
    if (manifest_text(existing) != manifest_text(common)) {
      throw SweepFileError(out_dir + " holds a different sweep: choose another --out");
    }
  }
  fs::create_directories(out_dir, ec);
  if (ec) throw SweepFileError("cannot create " + out_dir + ": " + ec.message());
  try {
    write_file_atomically(in_dir(out_dir, kSweepManifestFile), manifest_text(common));
    if (layout.per_seed) write_file_atomically(in_dir(out_dir, kSweepSeedsFile), seeds_text);
    write_file_atomically(in_dir(out_dir, kSweepPointsFile), points_text);
    write_file_atomically(in_dir(out_dir, kSweepSummaryFile), summary_csv(points));
  } catch (const SweepFileError&) {
    throw;
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    throw SweepFileError(e.what());
  }
}

}  // namespace pipesim::sim
