// libFuzzer target: the `pipesim decide --cases` reader.
//
// Input: a JSON-lines stream as `decide --cases -` reads it. The stream must
// end with 0 (every line answered) or 2 (a message naming the bad line),
// never a crash. Every line that parses must give an answer line that is
// valid JSON repeating the case, and an explanation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "models/sink/decide_cases.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::cerr << "decide_cases_fuzz finding: " << what << "\n";
  std::abort();
}

// A parsed case answers with a line whose first four keys give the case back.
void check_answer(const std::string& line) {
  using pipesim::sink::DecideCase;
  const auto parsed = pipesim::sink::parse_decide_case(line);
  const auto* c = std::get_if<DecideCase>(&parsed);
  if (c == nullptr) return;
  const pipesim::sink::Decision d = pipesim::sink::decide(*c);
  const std::string answer = pipesim::sink::format_decision(*c, d);
  nlohmann::json echoed;
  try {
    echoed = nlohmann::json::parse(answer);
  } catch (const nlohmann::json::parse_error&) {
    finding("the answer is not JSON: " + answer);
  }
  if (!echoed.contains("ops") || !echoed.contains("error"))
    finding("answer without ops/error: " + answer);
  echoed.erase("ops");
  echoed.erase("error");
  const auto again = pipesim::sink::parse_decide_case(echoed.dump());
  const auto* c2 = std::get_if<DecideCase>(&again);
  if (c2 == nullptr) finding("the echoed case does not parse: " + echoed.dump());
  if (pipesim::sink::format_decision(*c2, pipesim::sink::decide(*c2)) != answer) {
    finding("the echoed case answers differently: " + answer);
  }
  if (pipesim::sink::explain_decision(*c, d).empty()) finding("empty explanation: " + answer);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream err;
  const int rc = pipesim::sink::run_decide_stream(in, out, err);
  if (rc != 0 && rc != 2) finding("exit code " + std::to_string(rc));
  if (rc == 2 && err.str().rfind("pipesim decide: line ", 0) != 0) finding("message: " + err.str());
  if (rc == 0 && !err.str().empty()) finding("stderr on success: " + err.str());
  // Each answer is one line of valid JSON.
  std::istringstream answers(out.str());
  for (std::string a; std::getline(answers, a);) {
    if (!nlohmann::json::accept(a)) finding("answer is not JSON: " + a);
  }
  std::istringstream lines(input);
  for (std::string line; std::getline(lines, line);) check_answer(line);
  return 0;
}
