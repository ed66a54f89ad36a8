// A user's interrupt (SIGINT, SIGTERM) of a long run. The CLI's signal
// handler records the signal; the event loop and the Monte Carlo workers look
// at the record now and then and give up with Interrupted. Looking never
// changes a result: a run that is not interrupted is the same either way.
#pragma once

#include <functional>
#include <stdexcept>

#include "sim/engine/time.h"

namespace pipesim::sim {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal) : std::runtime_error("interrupted"), signal_(signal) {}
  [[nodiscard]] int signal() const { return signal_; }

 private:
  int signal_;
};

// Async-signal-safe: records the first signal (a later one does not replace it).
void request_interrupt(int signal) noexcept;
// The recorded signal, 0 when none.
[[nodiscard]] int interrupt_signal() noexcept;
// Forgets the signal (tests).
void clear_interrupt() noexcept;
// Throws Interrupted if a signal was recorded.
void throw_if_interrupted();

// What the event loop does every 2^10 events: throw_if_interrupted(), then
// tell this thread's observer (if any) how far simulated time has come: the
// progress line of a command that runs one seed. Observing never changes a run.
void checkpoint(Time now);
// Sets (or, with an empty function, clears) the calling thread's observer.
void observe_progress(std::function<void(Time)> observer);

}  // namespace pipesim::sim
