#include "sim/experiment/importance.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "sim/config/options.h"

namespace pipesim::sim {
namespace {

constexpr double kMaxFactor = 1e6;

std::string joined(const std::vector<std::string>& kinds) {
  std::string s;
  for (std::size_t i = 0; i < kinds.size(); ++i) s += (i ? ", " : "") + kinds[i];
  return s.empty() ? "none: the config has no Poisson fault" : s;
}

}  // namespace

Tilt parse_tilt(const std::string& text, const std::vector<std::string>& kinds) {
  Tilt tilt;
  const std::string bad = "--importance \"" + text + "\": ";
  std::size_t from = 0;
  while (from <= text.size()) {
    const auto comma = text.find(',', from);
    const std::string part =
        text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw ConfigError(bad + "expected KIND=FACTOR[,KIND=FACTOR...], found \"" + part + "\"");
    }
    const std::string kind = part.substr(0, eq);
    const std::string number = part.substr(eq + 1);
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      const std::string hint = closest_key(kind, kinds);
      throw ConfigError(
          bad + "\"" + kind + "\" is not a fault kind with a Poisson rate in this config (" +
          joined(kinds) + ")" + (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
    }
    double factor = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), factor);
    if (ec != std::errc() || end != number.data() + number.size() || !(factor > 0) ||
        factor > kMaxFactor) {
      throw ConfigError(bad + kind + ": expected a factor above 0 and at most 1e6, found \"" +
                        number + "\"");
    }
    if (!tilt.factors.emplace(kind, factor).second)
      throw ConfigError(bad + kind + " is given twice");
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return tilt;
}

std::string format_tilt(const Tilt& tilt) {
  std::string s;
  for (const auto& [kind, factor] : tilt.factors) {
    std::ostringstream f;
    f << factor;
    s += (s.empty() ? "" : ",") + kind + "=" + f.str();
  }
  return s;
}

std::vector<FaultSpec> tilt_specs(std::vector<FaultSpec> specs, const Tilt& tilt) {
  for (auto& spec : specs) {
    const auto it = tilt.factors.find(spec.kind);
    if (it != tilt.factors.end() && !spec.at) spec.rate_per_day *= it->second;
  }
  return specs;
}

double likelihood_ratio(const std::vector<FaultSpec>& real, const Tilt& tilt,
                        const std::vector<FaultOccurrence>& schedule, Time horizon) {
  if (tilt.empty()) return 1.0;
  std::vector<std::size_t> arrivals(real.size(), 0);
  for (const auto& o : schedule) ++arrivals[o.spec];
  const double days = static_cast<double>(horizon.us) / static_cast<double>(Time::days(1).us);
  double log_w = 0;
  for (std::size_t i = 0; i < real.size(); ++i) {
    const FaultSpec& spec = real[i];
    const auto it = tilt.factors.find(spec.kind);
    if (it == tilt.factors.end() || spec.at || spec.rate_per_day <= 0) continue;
    const double f = it->second;
    log_w += -static_cast<double>(arrivals[i]) * std::log(f) + (f - 1.0) * spec.rate_per_day * days;
  }
  return std::exp(log_w);
}

double effective_sample_size(const std::vector<double>& weights) {
  double sum = 0, squares = 0;
  for (const double w : weights) {
    sum += w;
    squares += w * w;
  }
  return squares > 0 ? sum * sum / squares : 0.0;
}

}  // namespace pipesim::sim
