// pipesim report RESULT --out report.html: one self-contained HTML page of a
// result, to look at rather than read, and to attach to a ticket. RESULT is
// the JSON of `run --per-seed`, of `compare` or of `check` (--format json), or
// a sweep directory. The page is data plus Chart.js (sim/report/html_page).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "models/pipeline/config.h"
#include "models/pipeline/fault_timeline.h"
#include "cli/commands.h"
#include "cli/report_pages.h"
#include "cli/simulate.h"
#include "sim/config/options.h"
#include "sim/engine/interrupt.h"
#include "sim/experiment/importance.h"
#include "sim/report/output_file.h"
#include "sim/report/progress_line.h"

namespace pipesim::cli {
namespace {

struct ReportArgs {
  std::string result;
  std::string out;
  bool stories = true;
};

// A result that is not one: exit 2 with a message naming the file.
struct BadResult : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadResult("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) throw BadResult("cannot read " + path);
  return text.str();
}

Json parse(const std::string& text, const std::string& where) {
  // nlohmann's parser stops at a NUL byte; what follows it would be ignored.
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw BadResult(where + ": not JSON (a NUL byte at offset " + std::to_string(nul) + ")");
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw BadResult(where + ": not JSON (" + std::string(e.what()) + ")");
  }
}

// A sweep directory as one document: {"sweep": sweep.json, "points": [points.jsonl lines]}.
Json read_sweep(const std::string& dir) {
  const std::string manifest = (std::filesystem::path(dir) / "sweep.json").string();
  const std::string lines = (std::filesystem::path(dir) / "points.jsonl").string();
  if (!std::filesystem::exists(manifest)) {
    throw BadResult(
        dir +
        " is a directory without sweep.json: not a sweep directory (pipesim sweep --out DIR)");
  }
  Json doc = {{"sweep", parse(read_text(manifest), manifest)}, {"points", Json::array()}};
  if (std::filesystem::exists(lines)) {
    std::istringstream in(read_text(lines));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.empty()) continue;
      doc["points"].push_back(parse(line, lines + ": line " + std::to_string(n)));
    }
  }
  return doc;
}

std::string kind_of(const Json& doc) {
  if (!doc.is_object()) return "";
  if (doc.contains("sweep") && doc.contains("points")) return "sweep";
  if (doc.contains("expectations") && doc.contains("passed")) return "check";
  if (doc.contains("a") && doc.contains("b") && doc.contains("metrics")) return "compare";
  if (doc.contains("estimates") && doc.contains("metrics") && doc.contains("seeds")) return "run";
  return "";
}

// The worst seeds of a run and their stories, simulated again from the
// result's own effective config (which must give the result's digest back).
std::vector<SeedStory> worst_seed_stories(const Json& result, bool simulate) {
  std::vector<SeedStory> out;
  if (!result.contains("extreme_seeds")) return out;
  std::optional<pipeline::Config> config;
  std::string unavailable = simulate ? "" : "(not simulated: --no-stories)";
  if (simulate) {
    try {
      config = pipeline::load_config(nlohmann::json::parse(result.at("config").dump()));
      if (pipeline::config_digest(*config) != result.value("config_digest", std::string())) {
        unavailable = "(no story: the result's config gives digest " +
                      pipeline::config_digest(*config) + ", not the result's " +
                      result.value("config_digest", std::string()) +
                      "; it was written by another pipesim version)";
        config.reset();
      } else if (result.contains("importance")) {
        const std::string tilt = result.at("importance").value("tilt", std::string());
        config = pipeline::tilted_config(
            *config, sim::parse_tilt(tilt, pipeline::poisson_fault_kinds(*config)));
      }
    } catch (const sim::ConfigError& e) {
      unavailable =
          std::string("(no story: the result's config is not valid here: ") + e.what() + ")";
      config.reset();
    }
  }
  for (const auto& e : result.at("extreme_seeds")) {
    SeedStory s;
    s.metric = e.value("metric", std::string());
    s.seed = e.at("seed").get<std::uint64_t>();
    s.value = e.value("value", 0.0);
    s.command = e.value("explain", std::string());
    s.unavailable = unavailable;
    if (config) {
      const RunProgress progress("pipesim report: the story of seed " + std::to_string(s.seed),
                                 *config);
      s.story = explain_seed(*config, s.seed, 20);
    }
    out.push_back(std::move(s));
  }
  return out;
}

int execute(const ReportArgs& a) {
  try {
    sim::check_output_path(a.out);  // before any work, not after
    // A sweep directory's result is its manifest and points.
    const std::filesystem::path dir(a.result);
    sim::check_not_an_input(a.out, {{"result", a.result},
                                    {"sweep manifest", (dir / "sweep.json").string()},
                                    {"sweep points", (dir / "points.jsonl").string()}});
  } catch (const std::exception& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  const std::string name = std::filesystem::path(a.result).filename().string().empty()
                               ? std::filesystem::path(a.result).parent_path().filename().string()
                               : std::filesystem::path(a.result).filename().string();
  std::string html;
  try {
    if (!std::filesystem::exists(a.result))
      throw BadResult(a.result + ": no such file or directory");
    const Json doc = std::filesystem::is_directory(a.result) ? read_sweep(a.result)
                                                             : parse(read_text(a.result), a.result);
    const std::string kind = kind_of(doc);
    if (kind.empty()) {
      throw BadResult(
          a.result +
          " is not a result of pipesim run --per-seed, compare or check (--format json), "
          "nor a sweep directory");
    }
    try {
      if (kind == "run") html = run_page(doc, name, worst_seed_stories(doc, a.stories)).render();
      if (kind == "compare") html = compare_page(doc, name).render();
      if (kind == "check") html = check_page(doc, name).render();
      if (kind == "sweep") html = sweep_page(doc, name).render();
    } catch (const nlohmann::json::exception& e) {
      throw BadResult(a.result + ": not a complete " + kind + " result (" + e.what() + ")");
    }
  } catch (const BadResult& e) {
    sim::end_progress_line();
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  try {
    sim::write_file_atomically(a.out, html);
  } catch (const sim::Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    std::cerr << "pipesim: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "pipesim report: wrote " << a.out << " (" << html.size() / 1024 << " KiB)\n";
  return 0;
}

}  // namespace

Command register_report(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "write a self-contained HTML page of a run, comparison, check or sweep");
  cmd->add_option(
         "result", args->result,
         "the JSON of run --per-seed, compare or check (--format json), or a sweep directory")
      ->required();
  cmd->add_option("--out", args->out, "the HTML file to write")->required();
  cmd->add_flag_callback(
      "--no-stories", [args] { args->stories = false; },
      "do not simulate the worst seeds again to tell their stories");
  return [args] { return execute(*args); };
}

}  // namespace pipesim::cli
