#include "sim/engine/fault_schedule.h"

#include <algorithm>

#include "sim/engine/random.h"

namespace pipesim::sim {

std::string fault_stream_name(const std::vector<FaultSpec>& specs, std::size_t index) {
  std::size_t earlier_of_kind = 0;
  for (std::size_t i = 0; i < index; ++i) {
    if (specs[i].kind == specs[index].kind) ++earlier_of_kind;
  }
  std::string name = "faults/" + specs[index].kind;
  if (earlier_of_kind > 0) name += "/" + std::to_string(earlier_of_kind);
  return name;
}

namespace {

struct Keyed {
  FaultOccurrence occurrence;
  std::size_t draw = 0;
};

FaultOccurrence make_occurrence(const FaultSpec& spec, std::size_t index, Time at,
                                RandomStream& stream, const std::vector<std::string>& candidates) {
  FaultOccurrence o{at, index, spec.duration, spec.target};
  if (spec.duration_mean.us > 0) o.duration = stream.exponential_time(spec.duration_mean);
  if (o.target.empty() && !candidates.empty()) o.target = candidates[stream.below(candidates.size())];
  return o;
}

}  // namespace

std::vector<FaultOccurrence> build_fault_schedule(const std::vector<FaultSpec>& specs,
                                                  std::uint64_t master_seed, Time horizon,
                                                  const TargetLister& targets) {
  std::vector<Keyed> keyed;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const FaultSpec& spec = specs[i];
    RandomStream stream(master_seed, fault_stream_name(specs, i));
    const std::vector<std::string> candidates = targets ? targets(spec.kind) : std::vector<std::string>{};
    if (spec.at) {
      if (*spec.at < horizon) keyed.push_back({make_occurrence(spec, i, *spec.at, stream, candidates), 0});
      continue;
    }
    if (spec.rate_per_day <= 0) continue;
    const double mean_gap_us = static_cast<double>(Time::days(1).us) / spec.rate_per_day;
    double t = 0;
    for (std::size_t draw = 0;; ++draw) {
      t += stream.exponential(mean_gap_us);
      if (t >= static_cast<double>(horizon.us)) break;
      const Time at{static_cast<std::int64_t>(t)};
      keyed.push_back({make_occurrence(spec, i, at, stream, candidates), draw});
    }
  }
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    if (a.occurrence.at != b.occurrence.at) return a.occurrence.at < b.occurrence.at;
    if (a.occurrence.spec != b.occurrence.spec) return a.occurrence.spec < b.occurrence.spec;
    return a.draw < b.draw;
  });
  std::vector<FaultOccurrence> result;
  result.reserve(keyed.size());
  for (auto& k : keyed) result.push_back(std::move(k.occurrence));
  return result;
}

}  // namespace pipesim::sim
