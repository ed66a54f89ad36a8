// The message of the ConfigError a piece of code throws: the shared helper of
// the config tests (config_test.cpp, real_inputs_test.cpp).
#pragma once

#include <string>

#include "sim/config/options.h"

namespace pipesim::testing {

// The message of the ConfigError that `f` throws, or "<no error>".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace pipesim::testing
