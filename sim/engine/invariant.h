// Always-on invariant checks (they stay on in Release, like FoundationDB's
// ASSERT): a violated invariant is a simulator bug and aborts the run with a
// message that says where, so the caller can print the config and seed.
#pragma once

#include <stdexcept>
#include <string>

namespace pipesim::sim {

class InvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void invariant_failed(const char* condition, const std::string& message,
                                   const char* file, int line);

}  // namespace pipesim::sim

#define PIPESIM_INVARIANT(cond, message)                                          \
  do {                                                                            \
    if (!(cond)) [[unlikely]]                                                     \
      ::pipesim::sim::invariant_failed(#cond, (message), __FILE__, __LINE__);     \
  } while (false)
