// pipesim's own "run" section (docs/model.md §9): how long a run lasts and which seeds.
#pragma once

#include <cstdint>

#include "sim/config/options.h"
#include "sim/engine/time.h"

namespace pipesim::pipeline {

struct RunOptions {
  // Faults fire only within [0, duration); the pipeline then drains (no new
  // faults, the workload stops) so that in-flight records are not taken for lost.
  sim::Time duration = sim::Time::days(1);
  sim::Time drain = sim::Time::minutes(30);
  // The time of day the run starts, in whole hours (the workload's profile is
  // hourly): run.duration is the window [start, start + duration) of the day,
  // e.g. "18h" for the evening peak. Times in a run (fault "at", trace) count
  // from the run's start. Faults' Poisson rates do not vary over the day.
  sim::Time start = sim::Time::micros(0);
  std::int64_t seeds = 100;
  std::int64_t first_seed = 1;
  // Every record's path event by event: no stretch is advanced in aggregate
  // (the producer's direct feed, the sink's healthy stretches). Slower; the
  // aggregate is tested against it on the same seeds.
  bool exact = false;
};

template <class V, class O>
void visit(V& v, O& o) requires std::is_same_v<std::remove_const_t<O>, RunOptions> {
  v.duration("duration", o.duration, sim::Time::seconds(1), sim::Time::days(3650),
             "simulated time with workload and faults");
  v.duration("start", o.start, sim::Time::micros(0), sim::Time::hours(23),
             "time of day the run starts, in whole hours (the workload profile's hour at time 0)");
  v.duration("drain", o.drain, sim::Time::micros(0), sim::Time::days(365),
             "time after `duration` to settle in-flight records (no faults, no new records)");
  v.integer("seeds", o.seeds, 1, 100000000, "seeds of a Monte Carlo run");
  v.integer("first_seed", o.first_seed, 0, 9007199254740991LL, "the first seed");
  v.boolean("exact", o.exact,
            "simulate every healthy stretch event by event (no aggregate shortcut; slower)");
  v.finish();
}

}  // namespace pipesim::pipeline
