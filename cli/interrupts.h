// SIGINT and SIGTERM, the same in every subcommand: the first asks the work to
// stop (no new seed starts, the event loops give up within 2^10 events), the
// command writes nothing partial and exits 128 + signal (130, 143) with a
// message on its own line; a second signal ends the program at once, removing
// the temporary file of a result being written.
#pragma once

#include <string>

namespace pipesim::cli {

// Installs the handlers (main does, before any subcommand runs).
void handle_interrupts();

// Prints "pipesim: interrupted (SIGINT), <what>" on its own line and returns
// the exit code, 128 + signal.
int interrupted(int signal, const std::string& what = "no result written");

}  // namespace pipesim::cli
