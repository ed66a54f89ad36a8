#include "models/connect/fetcher.h"

#include <algorithm>

#include "sim/engine/invariant.h"

namespace pipesim::connect {

void Fetcher::assign(const std::vector<int>& partitions, const std::vector<std::int64_t>& offsets) {
  clear();
  order_ = partitions;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    State s;
    s.partition = partitions[i];
    s.position = offsets[i];
    s.fetch_offset = offsets[i];
    states_.push_back(s);
  }
}

void Fetcher::clear() {
  order_.clear();
  states_.clear();
  requests_.clear();
  completed_.clear();
  paused_ = false;
}

Fetcher::State* Fetcher::state_of(int partition) {
  for (auto& s : states_) {
    if (s.partition == partition) return &s;
  }
  return nullptr;
}

const Fetcher::State* Fetcher::state_of(int partition) const {
  for (const auto& s : states_) {
    if (s.partition == partition) return &s;
  }
  return nullptr;
}

std::int64_t Fetcher::position(int partition) const {
  const State* s = state_of(partition);
  return s ? s->position : -1;
}

std::int64_t Fetcher::buffered_records() const {
  std::int64_t n = 0;
  for (const auto& c : completed_) n += c.to - c.from;
  for (const auto& r : requests_) {
    if (!r.answered) continue;
    for (const auto& p : r.parts) n += p.end - p.offset;
  }
  return n;
}

void Fetcher::seek(int partition, std::int64_t offset) {
  State* s = state_of(partition);
  if (!s) return;
  s->position = std::min(s->position, offset);
  s->fetch_offset = s->position;
  s->buffered = false;
  s->in_flight = false;
  completed_.erase(std::remove_if(completed_.begin(), completed_.end(),
                                  [&](const Completed& c) { return c.partition == partition; }),
                   completed_.end());
  // The partition's part of a fetch in flight is void (the response is
  // discarded for a partition whose position changed).
  for (auto& r : requests_) {
    r.parts.erase(std::remove_if(r.parts.begin(), r.parts.end(),
                                 [&](const Part& p) { return p.partition == partition; }),
                  r.parts.end());
  }
  requests_.erase(std::remove_if(requests_.begin(), requests_.end(),
                                 [](const Request& r) { return r.parts.empty(); }),
                  requests_.end());
}

std::int64_t Fetcher::readable(const Request& r, const LogView& view) const {
  // DelayedFetch: each partition counts up to its max.partition.fetch.bytes.
  std::int64_t n = 0;
  for (const auto& p : r.parts) {
    n += std::clamp<std::int64_t>(view.high_watermark(p.partition) - p.offset, 0,
                                  settings_.max_partition_records);
  }
  return n;
}

void Fetcher::answer(Request& r, sim::Time at, const LogView& view, bool now_view) {
  r.answered = true;
  r.answer_at = at;
  std::int64_t room = settings_.max_response_records;
  for (auto& p : r.parts) {
    const std::int64_t hw = now_view ? view.high_watermark(p.partition)
                                     : view.high_watermark_at(p.partition, at);
    // A waiting fetch keeps what it saw at the last notification (`end`)
    // when the brokers cannot tell the past.
    const std::int64_t top = std::max(hw, p.end);
    const std::int64_t take = std::clamp<std::int64_t>(
        std::min(top - p.offset, settings_.max_partition_records), 0, room);
    p.end = p.offset + take;
    room -= take;
  }
}

sim::Time Fetcher::answer_time(const Request& r, const LogView& view, bool chained) const {
  const sim::Time timeout = r.sent + settings_.max_wait;
  // The instant fetch.min.bytes become readable, if the brokers can tell:
  // the min_records-th earliest visibility among the request's partitions.
  const std::int64_t need = settings_.min_records;
  std::vector<sim::Time> times;
  for (const auto& p : r.parts) {
    const std::int64_t already = std::max<std::int64_t>(0, p.end - p.offset);
    const std::int64_t cap = settings_.max_partition_records;
    for (std::int64_t k = already; k < std::min(need, cap); ++k) {
      const sim::Time v = view.visible_at(p.partition, p.offset + k);
      if (v == sim::Time::max()) break;
      times.push_back(v);
    }
    for (std::int64_t k = 0; k < std::min(already, need); ++k) times.push_back(r.sent);
  }
  // The broker answers when fetch.min.bytes are readable or at
  // fetch.max.wait.ms with whatever is readable then.
  sim::Time ready = sim::Time::max();
  sim::Time first = sim::Time::max();
  if (!times.empty()) first = std::max(*std::min_element(times.begin(), times.end()), r.sent);
  if (static_cast<std::int64_t>(times.size()) >= need) {
    std::nth_element(times.begin(), times.begin() + (need - 1), times.end());
    ready = std::max(times[static_cast<std::size_t>(need - 1)], r.sent);
  }
  const sim::Time period = settings_.max_wait + settings_.latency;
  if (first <= timeout || !chained || period.us <= 0) return std::min(ready, timeout);
  // A chain of empty answers with no record in sight: the next answer that
  // matters waits for one (on_visible).
  if (first == sim::Time::max()) return sim::Time::max();
  // Nothing was readable by the timeout: the answer was empty, and fetches
  // go out again every max_wait + latency. The first one whose wait sees a
  // record answers, at fetch.min.bytes or its own timeout; a record that
  // appeared while an empty answer travelled is there when the next fetch
  // is sent.
  const std::int64_t k = (first - timeout + period - sim::Time{1}).us / period.us;
  const sim::Time sent = r.sent + period * k;
  return std::clamp(ready, sent, sent + settings_.max_wait);
}

void Fetcher::rebase(Request& r, sim::Time now) const {
  const sim::Time period = settings_.max_wait + settings_.latency;
  if (r.answered || period.us <= 0 || now < r.sent + period) return;
  const std::int64_t k = (now - r.sent).us / period.us;
  r.sent = r.sent + period * k;
  // A fetch sent anew sees what is readable then, nothing recorded before.
  for (auto& p : r.parts) p.end = p.offset;
}

void Fetcher::settle(sim::Time now, const LogView& view, bool blocked) {
  for (auto& r : requests_) {
    if (r.answered) continue;
    const sim::Time at = answer_time(r, view, blocked);
    if (at <= now) {
      answer(r, at, view, false);
    } else if (blocked) {
      rebase(r, now);
    }
  }
}

void Fetcher::collect_responses(sim::Time now, const LogView& view, bool blocked) {
  settle(now, view, blocked);
  // Responses are buffered in the order they arrive.
  std::vector<std::size_t> arrived;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    const Request& r = requests_[i];
    if (r.answered && r.answer_at + settings_.latency <= now) arrived.push_back(i);
  }
  if (arrived.empty()) return;
  std::stable_sort(arrived.begin(), arrived.end(), [&](std::size_t a, std::size_t b) {
    return requests_[a].answer_at < requests_[b].answer_at;
  });
  for (const std::size_t i : arrived) {
    for (const auto& p : requests_[i].parts) {
      State* s = state_of(p.partition);
      if (!s) continue;
      s->in_flight = false;
      if (p.end > p.offset) {
        completed_.push_back(Completed{p.partition, p.offset, p.end});
        s->buffered = true;
        s->fetch_offset = p.end;
      }
    }
  }
  std::vector<Request> rest;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (std::find(arrived.begin(), arrived.end(), i) == arrived.end()) rest.push_back(std::move(requests_[i]));
  }
  requests_.swap(rest);
}

void Fetcher::move_to_end(int partition) {
  const auto it = std::find(order_.begin(), order_.end(), partition);
  if (it == order_.end()) return;
  order_.erase(it);
  order_.push_back(partition);
}

void Fetcher::send_fetches(sim::Time now, const LogView& view) {
  if (paused_) return;
  const std::size_t first_new = requests_.size();
  for (const int p : order_) {
    State* s = state_of(p);
    if (s->buffered || s->in_flight) continue;
    const int node = view.leader(p);
    if (node < 0) continue;  // no leader: the metadata refresh will tell
    // auto.offset.reset=earliest: a position that retention deleted moves to the log start.
    const std::int64_t start = view.log_start(p);
    if (s->fetch_offset < start) s->fetch_offset = s->position = start;
    const auto pending = std::find_if(requests_.begin(), requests_.end(),
                                      [&](const Request& q) { return q.node == node; });
    if (pending != requests_.end() &&
        static_cast<std::size_t>(pending - requests_.begin()) < first_new) {
      continue;  // a fetch to this node is pending (nodesWithPendingFetchRequests)
    }
    if (pending == requests_.end()) {
      requests_.push_back(Request{node, now, false, sim::Time::max(), {}});
      requests_.back().parts.push_back(Part{p, s->fetch_offset, s->fetch_offset});
    } else {
      pending->parts.push_back(Part{p, s->fetch_offset, s->fetch_offset});
    }
    s->in_flight = true;
  }
  for (std::size_t i = first_new; i < requests_.size(); ++i) {
    Request& r = requests_[i];
    const std::int64_t readable_now = readable(r, view);
    if (readable_now >= settings_.min_records || (settings_.max_wait.us <= 0 && readable_now > 0)) {
      answer(r, now, view, true);
    } else {
      // It waits at the broker (DelayedFetch): remember what is readable now.
      // With fetch.max.wait.ms 0 and nothing readable the answer is empty
      // at once, and a blocked poll sends the next fetch when it arrives:
      // answer_time follows that chain without an event per fetch.
      for (auto& p : r.parts) p.end = std::max(p.offset, view.high_watermark(p.partition));
    }
  }
}

Fetcher::PollResult Fetcher::poll(sim::Time now, const LogView& view, std::int64_t max_records,
                                  std::vector<sink::PartitionBatch>& out, bool blocked) {
  PollResult result;
  if (paused_) return result;
  collect_responses(now, view, blocked);
  std::int64_t room = max_records;
  while (room > 0 && !completed_.empty()) {
    Completed& c = completed_.front();
    State* s = state_of(c.partition);
    if (!s) {
      completed_.pop_front();
      continue;
    }
    const std::int64_t take = std::min(room, c.to - c.from);
    out.push_back(sink::PartitionBatch{c.partition, sink::OffsetRange{c.from, c.from + take - 1},
                                       ledger::InsertTag::NORMAL, {}});
    s->position = c.from + take;
    c.from += take;
    room -= take;
    if (c.from == c.to) {
      completed_.pop_front();
      s->buffered = false;
      move_to_end(s->partition);
    }
  }
  send_fetches(now, view);
  result.records = !out.empty();
  if (!result.records) result.wake_at = next_response(view);
  return result;
}

sim::Time Fetcher::next_response(const LogView& view) const {
  sim::Time t = sim::Time::max();
  for (const auto& r : requests_) {
    const sim::Time at = r.answered ? r.answer_at : answer_time(r, view, true);
    if (at != sim::Time::max()) t = std::min(t, at + settings_.latency);
  }
  return t;
}

bool Fetcher::on_visible(int partition, sim::Time now, const LogView& view, bool blocked) {
  for (auto& r : requests_) {
    if (r.answered) continue;
    const bool covers = std::any_of(r.parts.begin(), r.parts.end(),
                                    [&](const Part& p) { return p.partition == partition; });
    if (!covers) continue;
    if (blocked) rebase(r, now);
    const sim::Time timeout = r.sent + settings_.max_wait;
    if (now > timeout) {
      if (blocked) {
        // Its empty answer is on its way; the next fetch, sent when it
        // arrives, finds the records at once.
        for (auto& p : r.parts) p.end = std::max(p.end, view.high_watermark(p.partition));
        if (readable(r, view) < settings_.min_records) return false;
        answer(r, r.sent + settings_.max_wait + settings_.latency, view, true);
        return true;
      }
      // It was answered at its timeout with what it had seen.
      answer(r, timeout, view, false);
      return false;
    }
    for (auto& p : r.parts) p.end = std::max(p.end, view.high_watermark(p.partition));
    if (readable(r, view) < settings_.min_records) return false;
    answer(r, now, view, true);
    return true;
  }
  return false;
}

}  // namespace pipesim::connect
