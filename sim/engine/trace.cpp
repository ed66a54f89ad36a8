#include "sim/engine/trace.h"

#include <cstdio>

namespace pipesim::sim {

bool Trace::keep(Time at) {
  if (!detail_at(at)) return false;
  if (kept_detail_ >= max_detail_) {
    if (!detail_cut_) detail_cut_ = at;
    return false;
  }
  ++kept_detail_;
  return true;
}

void Trace::story(Time at, std::string track, std::string name, std::string text, nlohmann::json args) {
  records_.push_back({at, std::move(track), std::move(name), 'i', Time{}, 0, std::move(text), std::move(args)});
}

void Trace::instant(Time at, std::string track, std::string name, nlohmann::json args) {
  if (!keep(at)) return;
  records_.push_back({at, std::move(track), std::move(name), 'i', Time{}, 0, "", std::move(args)});
}

void Trace::span(Time at, Time duration, std::string track, std::string name, nlohmann::json args) {
  if (!keep(at)) return;
  records_.push_back({at, std::move(track), std::move(name), 'X', duration, 0, "", std::move(args)});
}

void Trace::counter(Time at, std::string track, std::string name, double value) {
  if (!keep(at)) return;
  records_.push_back({at, std::move(track), std::move(name), 'C', Time{}, value, "", nlohmann::json::object()});
}

std::string format_clock(Time t) {
  const std::int64_t ms_total = t.us / 1000;
  const std::int64_t days = ms_total / 86400000;
  const std::int64_t h = ms_total / 3600000 % 24;
  const std::int64_t m = ms_total / 60000 % 60;
  const std::int64_t s = ms_total / 1000 % 60;
  const std::int64_t ms = ms_total % 1000;
  char buf[48];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lldd %02lld:%02lld:%02lld.%03lld", static_cast<long long>(days),
                  static_cast<long long>(h), static_cast<long long>(m), static_cast<long long>(s),
                  static_cast<long long>(ms));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld.%03lld", static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(s), static_cast<long long>(ms));
  }
  return buf;
}

}  // namespace pipesim::sim
