// The producer's TCP paths under a response_loss window (producer.h):
// which window a segment meets, its retransmissions (Linux / RFC 6298) and
// the fate of an answer once it leaves the broker.
#include "models/producer/producer.h"

#include <algorithm>

namespace pipesim::producer {

void Producer::add_response_loss(const ResponseLoss& loss) {
  if (loss.probability <= 0) return;  // loses nothing
  // An answer's fate is drawn at the first look after it leaves, and no
  // request outlives request.timeout.ms nor a batch delivery.timeout.ms: a
  // window that ended before both is never asked about again.
  const sim::Time horizon = options_.request_timeout + options_.delivery_timeout;
  const sim::Time now = sim_.now();
  std::erase_if(losses_, [&](const ResponseLoss& w) { return w.until + horizon < now; });
  losses_.push_back(loss);
}

void Producer::decide_answer(Connection& c, Request& r) {
  r.back_decided = true;
  const sim::Time leaves = r.leave_at;
  const ResponseLoss* loss = loss_at(leaves);
  if (loss == nullptr || loss->mode != LossMode::RETRANSMIT) return;
  bool dead = false;
  r.back_delay = retransmission_delay(leaves, dead);
  if (r.back_delay > sim::Time{}) ++counters_.late_segments;
  if (dead) {
    // The broker's kernel gave up on the connection (tcp_retries2): it is
    // reset then; the client sees it one way later, and nothing more is
    // read or answered on it.
    r.lost = true;
    ++counters_.lost_answers;
    const sim::Time gave_up = leaves + r.back_delay;
    c.dead_from = std::min(c.dead_from, gave_up);
    c.stalled_from = std::min(c.stalled_from, leaves);
    c.closed_at = std::min(c.closed_at, gave_up + one_way_);
  }
}

const ResponseLoss* Producer::loss_at(sim::Time t) const {
  const ResponseLoss* best = nullptr;
  for (const auto& w : losses_) {
    if (w.probability <= 0 || t < w.from || t >= w.until) continue;
    if (best == nullptr || w.probability > best->probability) best = &w;
  }
  return best;
}

sim::Time Producer::retransmission_delay(sim::Time at, bool& dead) {
  // Linux: RTO = SRTT + max(4 RTTVAR, tcp_rto_min) (tcp_set_rto), ~the round
  // trip + tcp_rto_min on a LAN; doubled at each retransmission of the same
  // segment (RFC 6298 §5.5) up to TCP_RTO_MAX (120 s); after tcp_retries2
  // retransmissions the connection is given up (tcp_write_timeout). Each
  // transmission is lost with the probability of the window open when it is
  // sent.
  constexpr sim::Time kRtoMax = sim::Time::seconds(120);
  dead = false;
  sim::Time delay{};
  const ResponseLoss* first = loss_at(at);
  if (first == nullptr) return delay;
  sim::Time rto = round_trip_ + first->tcp_rto_min;
  for (std::int64_t sent = 0;; ++sent) {
    const ResponseLoss* w = loss_at(at + delay);
    if (w == nullptr || !answers_.bernoulli(w->probability)) return delay;
    delay += rto;  // the wait for this transmission's acknowledgement
    if (sent == first->tcp_retries2) {
      dead = true;  // the last retransmission timed out too: the delay is the give-up time
      return delay;
    }
    rto = std::min(rto * 2, kRtoMax);
  }
}

}  // namespace pipesim::producer
