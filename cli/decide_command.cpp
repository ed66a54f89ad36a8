#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/interrupts.h"
#include "cli/result_output.h"
#include "models/sink/decide_cases.h"
#include "sim/engine/interrupt.h"

namespace pipesim::cli {
namespace {

struct DecideArgs {
  std::string cases;
  std::string state;
  std::string stored;
  std::string batch;
  bool tolerate = false;
  bool explain = false;
  std::string out;
};

// Standard input's lines, read with read(2). A read blocked on a quiet pipe
// returns EINTR at SIGINT or SIGTERM (the handlers are installed without
// SA_RESTART), so the first signal ends the stream; an iostream retries the
// read and waits on (`sleep 20 | pipesim decide --cases -` ignored Ctrl-C).
class StdinLines {
 public:
  bool next(std::string& line) {
    for (;;) {
      if (sim::interrupt_signal() != 0) return false;
      const auto nl = buffer_.find('\n', start_);
      if (nl != std::string::npos) {
        line.assign(buffer_, start_, nl - start_);
        start_ = nl + 1;
        return true;
      }
      if (eof_) {
        if (start_ == buffer_.size()) return false;
        line.assign(buffer_, start_, std::string::npos);  // a last line without its newline
        start_ = buffer_.size();
        return true;
      }
      buffer_.erase(0, start_);  // what is left of the last line, at the front
      start_ = 0;
      char chunk[1 << 16];
      const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;  // the loop's first check says whether to stop
      if (n <= 0) {
        eof_ = true;
        continue;
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  [[nodiscard]] bool pending() const { return buffer_.find('\n', start_) != std::string::npos; }

 private:
  std::string buffer_;
  std::size_t start_ = 0;
  bool eof_ = false;
};

// The stream's exit code, or the interrupt's once a signal ended it.
int decided(int code) {
  std::cout.flush();
  if (const int signal = sim::interrupt_signal(); signal != 0 && code == 0)
    return interrupted(signal, "every answer above is complete");
  return code;
}

// "10,20" -> "[10,20]"; empty when malformed (the case parser then says what is wrong).
std::string range_json(const std::string& text) {
  const auto comma = text.find(',');
  if (comma == std::string::npos) return "";
  const std::string a = text.substr(0, comma);
  const std::string b = text.substr(comma + 1);
  const auto numeric = [](const std::string& s) {
    if (s.empty()) return false;
    std::size_t i = s[0] == '-' ? 1 : 0;
    if (i == s.size()) return false;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
    }
    return s.size() < 19;
  };
  if (!numeric(a) || !numeric(b)) return "";
  return "[" + a + "," + b + "]";
}

int single_case(const DecideArgs& a) {
  if (a.state.empty() || a.batch.empty()) {
    std::cerr << "pipesim decide: give --cases FILE, or --state and --batch (and --stored)\n";
    return 2;
  }
  // NONE is the state of a partition with no state row: there is no stored range to give.
  if (a.state == "NONE" && !a.stored.empty()) {
    std::cerr << "pipesim decide: --stored cannot be given with --state NONE (NONE: no state row, so no stored "
                 "range)\n";
    return 2;
  }
  // A stored state row has its range: name the flag, not the case line's key.
  if ((a.state == "BEFORE_PROCESSING" || a.state == "AFTER_PROCESSING") && a.stored.empty()) {
    std::cerr << "pipesim decide: --stored MIN,MAX is required with --state " << a.state
              << " (the range the state row holds)\n";
    return 2;
  }
  const std::string batch = range_json(a.batch);
  const std::string stored = a.stored.empty() ? "null" : range_json(a.stored);
  if (batch.empty()) {
    std::cerr << "pipesim decide: --batch expects MIN,MAX (inclusive offsets), found \"" << a.batch << "\"\n";
    return 2;
  }
  if (stored.empty()) {
    std::cerr << "pipesim decide: --stored expects MIN,MAX (inclusive offsets), found \"" << a.stored << "\"\n";
    return 2;
  }
  // replace: a --state that is not UTF-8 is named as unknown, not an abort.
  const std::string state = nlohmann::json(a.state).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string line = "{\"state\":" + state + ",\"stored\":" + stored + ",\"batch\":" + batch +
                           ",\"tolerateStateMismatch\":" + (a.tolerate ? "true" : "false") + "}";
  const sink::ParsedDecideCase parsed = sink::parse_decide_case(line);
  if (const auto* error = std::get_if<std::string>(&parsed)) {
    // The line was built from the flags: name the flag its key came from.
    std::string message = *error;
    for (const char* key : {"state", "stored", "batch"}) {
      const std::string quoted = std::string("\"") + key + "\"";
      if (message.rfind(quoted, 0) == 0) message = std::string("--") + key + message.substr(quoted.size());
    }
    if (message.rfind("unknown state", 0) == 0) message = "--state: " + message;
    std::cerr << "pipesim decide: " << message << "\n";
    return 2;
  }
  const auto& c = std::get<sink::DecideCase>(parsed);
  const sink::Decision d = sink::decide(c);
  std::string text = sink::format_decision(c, d) + "\n";
  if (a.explain) text += sink::explain_decision(c, d) + "\n";
  return emit_result(text, a.out);
}

// The answers to a stream of cases: as they come on standard output, or with
// --out all at once, atomically, and only when every line was answered.
int decide_lines(const DecideArgs& a, const std::function<bool(std::string&)>& next,
                 const std::function<bool()>& pending) {
  if (a.out.empty()) return decided(sink::run_decide_lines(next, pending, std::cout, std::cerr));
  std::ostringstream answers;
  const int code = sink::run_decide_lines(next, pending, answers, std::cerr);
  if (const int signal = sim::interrupt_signal(); signal != 0)
    return interrupted(signal, "no result written");
  if (code != 0) return code;
  return emit_result(answers.str(), a.out);
}

}  // namespace

Command register_decide(CLI::App& app) {
  auto args = std::make_shared<DecideArgs>();
  CLI::App* cmd = app.add_subcommand(
      "decide", "the sink v1.3.9 per-batch decision: JSON lines in (--cases), JSON lines out");
  cmd->add_option("--cases", args->cases, "JSON-lines file of cases, '-' for stdin");
  cmd->add_option("--state", args->state, "NONE, BEFORE_PROCESSING or AFTER_PROCESSING");
  cmd->add_option("--stored", args->stored, "stored range MIN,MAX");
  cmd->add_option("--batch", args->batch, "batch range MIN,MAX");
  cmd->add_flag("--tolerate-state-mismatch", args->tolerate, "tolerateStateMismatch=true");
  cmd->add_flag("--explain", args->explain, "also say in words what the connector does and why");
  cmd->add_option("--out", args->out,
                  "write the answers to this file (atomically, once all are in)");
  return [args] {
    const std::vector<std::pair<std::string, std::string>> inputs{
        {"cases file", args->cases == "-" ? "" : args->cases}};
    if (!result_out_usable(args->out, inputs)) return 2;
    if (args->cases.empty()) return single_case(*args);
    if (!args->state.empty() || !args->batch.empty() || !args->stored.empty()) {
      std::cerr << "pipesim decide: --cases cannot be combined with --state/--stored/--batch\n";
      return 2;
    }
    std::ios::sync_with_stdio(false);
    if (args->cases == "-") {
      StdinLines lines;
      return decide_lines(
          *args, [&lines](std::string& l) { return lines.next(l); },
          [&lines] { return lines.pending(); });
    }
    // A directory opens as an ifstream on Linux and reads as empty: without
    // this check `decide --cases DIR` answered nothing and exited 0.
    std::error_code ec;
    if (std::filesystem::is_directory(args->cases, ec)) {
      std::cerr << "pipesim decide: cannot read " << args->cases << ": Is a directory\n";
      return 2;
    }
    std::ifstream in(args->cases);
    if (!in) {
      std::cerr << "pipesim decide: cannot read " << args->cases << ": " << std::strerror(errno) << "\n";
      return 2;
    }
    return decide_lines(
        *args,
        [&in](std::string& l) {
          return sim::interrupt_signal() == 0 && static_cast<bool>(std::getline(in, l));
        },
        [&in] { return in.rdbuf()->in_avail() > 0; });
  };
}

}  // namespace pipesim::cli
