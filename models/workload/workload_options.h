// The business service's workload (docs/model.md §4.1, §9 "workload").
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/options.h"
#include "sim/engine/time.h"

namespace pipesim::workload {

struct WorkloadOptions {
  // Logical records per simulated day, averaged over the daily profile.
  std::int64_t records_per_day = 200'000'000;
  // "production" (daily curve peaking near 10,000 records/s at 200 M/day),
  // "constant", or a list of 24 hourly multipliers (normalised to mean 1).
  nlohmann::json profile = "production";
  std::int64_t record_bytes = 1024;
  // How the service's records are spread in time, each at its own instant:
  // "poisson" (independent arrivals at the profile's rate), or "fixed"
  // (evenly spaced: record k of a partition arrives when the profile's
  // cumulative rate reaches k, so record 0 at time 0), for lab configs whose
  // outcome is computed by hand.
  std::string arrivals = "poisson";
};

// "" when the profile is valid, else what was expected.
std::string check_profile(const nlohmann::json& profile);

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, WorkloadOptions> {
  v.integer("records_per_day", o.records_per_day, 0, 100'000'000'000LL,
            "logical records the business service emits per day (mean over the profile)");
  v.any("profile", o.profile, check_profile,
        "\"production\", \"constant\" or 24 hourly multipliers");
  v.integer("record_bytes", o.record_bytes, 1, 100'000'000, "bytes per record");
  v.choice("arrivals", o.arrivals, {"poisson", "fixed"},
           "each record arrives at its own instant: Poisson, or evenly spaced");
  v.removed("tick",
            "records arrive one by one at their own instants (workload.arrivals: \"poisson\" or "
            "\"fixed\" for evenly spaced), so there is no arrival quantum to set");
  v.finish();
}

}  // namespace pipesim::workload
