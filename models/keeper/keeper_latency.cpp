// Keeper's latency histogram (keeper.h): every request it served, in
// microseconds. This pipeline's own are added one by one where they are
// priced (keeper.cpp, keeper_bursts.cpp); the threads' are added here, as
// quantile strata: those a serving leader answered, by the regime's
// distribution of the number ahead displaced by the transient, and those
// that reached a held leader, by when they came.
#include <algorithm>
#include <cmath>

#include "models/keeper/keeper.h"
#include "models/keeper/keeper_time.h"

namespace pipesim::keeper {

void Keeper::note_held_arrivals(sim::Time to) {
  // The threads' requests that reach a held leader over [last_, to) (the
  // fluid's growth: it serves none of them) wait for it to be free, then for
  // those queued before them: one sent at t is answered at the hold's end +
  // (F(t) + 1) / mu + the round trip. Keeper's histogram gets them as
  // quantile strata: the arrivals between F = f and f + df came at the time
  // the held fluid F(t) = N + (f0 - N) e^(-t / D) reaches f.
  const double f0 = fluid_;
  const double f1 = fluid_at(to);
  held_arrivals_carry_ += std::max(0.0, f1 - f0);
  const auto arrived = static_cast<std::int64_t>(held_arrivals_carry_);
  if (arrived <= 0) return;
  held_arrivals_carry_ -= static_cast<double>(arrived);
  const sim::Time end = held_end(last_);
  const auto n = static_cast<double>(loop_.threads());
  const double away = std::max(loop_.threads_away_s(), 1e-12);
  const double span = (to - last_).as_seconds();
  const std::int64_t strata = std::min<std::int64_t>(arrived, 100);
  for (std::int64_t i = 0; i < strata; ++i) {
    const std::int64_t weight = arrived / strata + (i < arrived % strata ? 1 : 0);
    const double f = f0 + (static_cast<double>(i) + 0.5) / static_cast<double>(strata) * (f1 - f0);
    const double tau =
        n - f0 > 0 && n - f > 0 ? std::clamp(-away * std::log((n - f) / (n - f0)), 0.0, span) : 0.0;
    const sim::Time sent = last_ + to_time(tau);
    add_threads_latency((end - sent) + to_time((f + 1) / loop_.mu()), weight);
  }
}

void Keeper::flush_samples() {
  const auto n = static_cast<std::int64_t>(pending_served_);
  if (n < 1) return;
  // 100 strata of the regime's distribution of the number ahead, displaced by
  // the transient's mean over the span; each waits for its own service too.
  const double shift = pending_span_s_ > 0 ? pending_shift_integral_ / pending_span_s_ : 0;
  for (int i = 0; i < 100; ++i) {
    const std::int64_t weight = n / 100 + (i < n % 100 ? 1 : 0);
    if (weight == 0) continue;
    const double ahead = std::clamp(static_cast<double>(loop_.ahead((i + 0.5) / 100.0)) + shift,
                                    0.0, static_cast<double>(loop_.threads()));
    add_threads_latency(to_time((ahead + 1) / loop_.mu()), weight);
  }
  pending_served_ -= static_cast<double>(n);
  pending_shift_integral_ = 0;
  pending_span_s_ = 0;
}

}  // namespace pipesim::keeper
