#include "models/pipeline/shrink.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

#include "models/pipeline/fault_timeline.h"
#include "models/pipeline/metrics.h"
#include "models/pipeline/scenario.h"
#include "sim/config/duration.h"
#include "sim/config/options.h"
#include "sim/engine/interrupt.h"
#include "sim/experiment/ddmin.h"
#include "sim/report/summary.h"

namespace pipesim::pipeline {
namespace {

const std::vector<std::string> kOperators = {">=", "<=", "==", "!=", ">", "<"};

std::string trimmed(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  const auto b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

bool compare(double x, const std::string& op, double v) {
  if (op == ">") return x > v;
  if (op == ">=") return x >= v;
  if (op == "<") return x < v;
  if (op == "<=") return x <= v;
  if (op == "==") return x == v;
  return x != v;
}

}  // namespace

RunCondition parse_run_condition(const std::string& text) {
  RunCondition c;
  c.text = text;
  const std::string bad = "--until \"" + text + "\": ";
  std::string rest = text;
  // "&&" stands for "and".
  for (auto p = rest.find("&&"); p != std::string::npos; p = rest.find("&&"))
    rest.replace(p, 2, " and ");
  std::vector<std::string> parts;
  std::istringstream words(rest);
  std::string word, part;
  while (words >> word) {
    if (word == "and") {
      parts.push_back(part);
      part.clear();
    } else {
      part += (part.empty() ? "" : " ") + word;
    }
  }
  parts.push_back(part);
  for (const auto& raw : parts) {
    const std::string p = trimmed(raw);
    std::size_t at = std::string::npos;
    std::string op;
    for (const auto& o : kOperators) {
      const auto found = p.find(o);
      if (found != std::string::npos &&
          (at == std::string::npos || found < at || (found == at && o.size() > op.size()))) {
        at = found;
        op = o;
      }
    }
    if (at == std::string::npos || at == 0) {
      throw sim::ConfigError(
          bad + "expected METRIC OP NUMBER (OP one of > >= < <= == !=), found \"" + p + "\"");
    }
    RunCondition::Clause clause;
    clause.metric = trimmed(p.substr(0, at));
    clause.op = op;
    const std::string number = trimmed(p.substr(at + op.size()));
    const auto& names = metric_names();
    if (std::find(names.begin(), names.end(), clause.metric) == names.end()) {
      const std::string hint = sim::closest_key(clause.metric, names);
      throw sim::ConfigError(bad + "unknown metric \"" + clause.metric + "\"" +
                             (hint.empty() ? "" : "; did you mean \"" + hint + "\"?") +
                             " (a metric of one run, as in run --per-seed)");
    }
    const auto [end, ec] =
        std::from_chars(number.data(), number.data() + number.size(), clause.value);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
      throw sim::ConfigError(bad + "expected a number after \"" + op + "\", found \"" + number +
                             "\"");
    }
    c.clauses.push_back(clause);
  }
  return c;
}

bool holds(const RunCondition& condition, const sim::Metrics& metrics) {
  return std::all_of(condition.clauses.begin(), condition.clauses.end(),
                     [&](const RunCondition::Clause& c) {
                       return compare(sim::value_of(metrics, c.metric), c.op, c.value);
                     });
}

std::string describe(const RunCondition& condition, const sim::Metrics& metrics) {
  std::string s;
  for (const auto& c : condition.clauses) {
    s += (s.empty() ? "" : ", ") + c.metric + " = " +
         sim::format_number(sim::value_of(metrics, c.metric)) + " (" + c.op + " " +
         sim::format_number(c.value) + ")";
  }
  return s;
}

std::vector<sim::FaultSpec> realised_faults(const Config& config, std::uint64_t seed) {
  std::vector<sim::FaultSpec> out;
  for (const auto& o : fault_schedule(config, seed)) {
    sim::FaultSpec f = config.faults[o.spec];
    f.at = o.at;
    f.rate_per_day = 0;
    f.duration = o.duration;
    f.duration_mean = sim::Time{};
    f.target = o.target;
    out.push_back(std::move(f));
  }
  return out;
}

std::string describe(const sim::FaultSpec& f) {
  const std::int64_t us = f.at.value_or(sim::Time{}).us;
  char clock[48];
  std::snprintf(
      clock, sizeof clock, "%02lld:%02lld:%02lld.%06lld", static_cast<long long>(us / 3600000000LL),
      static_cast<long long>(us / 60000000LL % 60), static_cast<long long>(us / 1000000LL % 60),
      static_cast<long long>(us % 1000000LL));
  std::string s = f.kind + " at " + clock;
  if (!f.target.empty()) s += " on " + f.target;
  if (f.duration.us > 0) s += " for " + sim::format_duration(f.duration);
  std::string params;
  for (const auto& [k, v] : f.params.items())
    params += (params.empty() ? "" : ", ") + k + "=" + v.dump();
  if (!params.empty()) s += " (" + params + ")";
  return s;
}

}  // namespace pipesim::pipeline

namespace pipesim::pipeline {
namespace {

// The budget ran out: the search stops with the best config so far.
struct OutOfRuns {};

class Search {
 public:
  Search(const Config& config, std::uint64_t seed,
         const std::function<bool(const sim::Metrics&)>& condition, std::int64_t max_runs,
         const std::function<void(std::int64_t, std::size_t)>& progress)
      : config_(config),
        seed_(seed),
        condition_(condition),
        max_runs_(max_runs),
        progress_(progress) {}

  bool holds(const std::vector<sim::FaultSpec>& faults) {
    if (result_.runs >= max_runs_) throw OutOfRuns{};
    Config c = config_;
    c.faults = faults;
    ++result_.runs;
    const bool h = condition_(run_scenario(c, seed_));
    // The best: fewest faults, then the shortest windows in all.
    if (h && (faults.size() < result_.kept.size() ||
              (faults.size() == result_.kept.size() && total(faults) < total(result_.kept)))) {
      result_.kept = faults;
    }
    if (progress_) progress_(result_.runs, result_.kept.size());
    return h;
  }

  ShrinkResult& result() { return result_; }

 private:
  static std::int64_t total(const std::vector<sim::FaultSpec>& faults) {
    std::int64_t t = 0;
    for (const auto& f : faults) t += f.duration.us;
    return t;
  }

  const Config& config_;
  std::uint64_t seed_;
  const std::function<bool(const sim::Metrics&)>& condition_;
  std::int64_t max_runs_;
  const std::function<void(std::int64_t, std::size_t)>& progress_;
  ShrinkResult result_;
};

std::vector<sim::FaultSpec> pick(const std::vector<sim::FaultSpec>& all,
                                 const std::vector<std::size_t>& idx) {
  std::vector<sim::FaultSpec> out;
  for (const std::size_t i : idx) out.push_back(all[i]);
  return out;
}

}  // namespace

ShrinkResult shrink_faults(
    const Config& config, std::uint64_t seed,
    const std::function<bool(const sim::Metrics&)>& condition,
    const std::vector<sim::FaultSpec>& all, std::int64_t max_runs,
    const std::function<void(std::int64_t runs, std::size_t kept)>& progress) {
  Search search(config, seed, condition, max_runs, progress);
  search.result().kept = all;  // holds: the caller checked the run it reproduces
  try {
    const auto kept = sim::ddmin(all.size(), [&](const std::vector<std::size_t>& idx) {
      return search.holds(pick(all, idx));
    });
    // A window of 0 is some kinds' default window, so halving stops at 1 ms.
    std::vector<sim::FaultSpec> current = pick(all, kept);
    for (std::size_t i = 0; i < current.size(); ++i) {
      while (current[i].duration.us >= 2000) {
        std::vector<sim::FaultSpec> shorter = current;
        shorter[i].duration = sim::Time{current[i].duration.us / 2};
        if (!search.holds(shorter)) break;
        current = shorter;
      }
    }
  } catch (const OutOfRuns&) {
    search.result().out_of_runs = true;
  } catch (const sim::Interrupted& e) {
    search.result().signal = e.signal();
  }
  return search.result();
}

}  // namespace pipesim::pipeline
