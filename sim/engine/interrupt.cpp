#include "sim/engine/interrupt.h"

#include <atomic>

namespace pipesim::sim {
namespace {

// Lock-free, so a signal handler may store to it.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

thread_local std::function<void(Time)> t_observer;

}  // namespace

void request_interrupt(int signal) noexcept {
  int none = 0;
  g_signal.compare_exchange_strong(none, signal);
}

int interrupt_signal() noexcept { return g_signal.load(std::memory_order_relaxed); }

void clear_interrupt() noexcept { g_signal.store(0); }

void throw_if_interrupted() {
  if (const int s = interrupt_signal(); s != 0) throw Interrupted(s);
}

void checkpoint(Time now) {
  throw_if_interrupted();
  if (t_observer) t_observer(now);
}

void observe_progress(std::function<void(Time)> observer) { t_observer = std::move(observer); }

}  // namespace pipesim::sim
