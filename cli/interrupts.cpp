#include "cli/interrupts.h"

#include <csignal>
#include <iostream>
#include <unistd.h>

#include "sim/engine/interrupt.h"
#include "sim/report/output_file.h"
#include "sim/report/progress_line.h"

namespace pipesim::cli {
namespace {

extern "C" void on_interrupt(int signal) {
  if (sim::interrupt_signal() != 0) {
    sim::remove_temporary_output();
    // Async-signal-safe: write(2) only; a leading newline ends a progress line.
    constexpr char kMessage[] = "\npipesim: interrupted again, stopping now\n";
    [[maybe_unused]] const auto n = ::write(2, kMessage, sizeof kMessage - 1);
    ::_exit(128 + signal);
  }
  sim::request_interrupt(signal);
}

}  // namespace

void handle_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interrupted(int signal, const std::string& what) {
  sim::end_progress_line();
  std::cerr << "pipesim: interrupted (" << (signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal")
            << "), " << what << "\n";
  return 128 + signal;
}

}  // namespace pipesim::cli
