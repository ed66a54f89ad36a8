#include "sim/engine/invariant.h"

namespace pipesim::sim {

void invariant_failed(const char* condition, const std::string& message, const char* file,
                      int line) {
  throw InvariantViolation("invariant violated: " + message + " (" + condition + ") at " +
                           file + ":" + std::to_string(line));
}

}  // namespace pipesim::sim
