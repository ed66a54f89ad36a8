// JSON-lines I/O of `pipesim decide` (docs/model.md §9): one case per input line, one answer per
// output line, computed by decide() of models/sink/decision.h.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <variant>

#include "models/sink/decision.h"

namespace pipesim::sink {

struct DecideCase {
  StateRecord stored;
  OffsetRange batch;
  bool tolerate_state_mismatch = false;
  // Whether the line gave "stored" as a range. Always true for BEFORE_PROCESSING and
  // AFTER_PROCESSING; for NONE an absent or null "stored" is echoed as "stored":null.
  bool stored_given = false;
};

// The case, or a message saying what is wrong with the line (the caller adds "line N: ").
using ParsedDecideCase = std::variant<DecideCase, std::string>;

// One input line, e.g.
//   {"state":"AFTER_PROCESSING","stored":[10,20],"batch":[5,15],"tolerateStateMismatch":false}
// "stored" may be omitted or null only for state NONE; "tolerateStateMismatch" defaults to
// false. Unknown and duplicate keys are errors.
[[nodiscard]] ParsedDecideCase parse_decide_case(std::string_view line);

[[nodiscard]] Decision decide(const DecideCase& c);

// The answer line (no newline): the input's four keys in the documented order (docs/model.md §4.4), then "ops" and "error".
[[nodiscard]] std::string format_decision(const DecideCase& c, const Decision& d);

// How the task's errors.tolerance handles an error the connector throws.
struct ErrorHandling {
  bool tolerance_all = false;  // errors.tolerance=all
  bool has_dlq = false;        // errors.deadletterqueue.topic.name is set
};

// What the connector does with this batch and why, in plain language. With
// `handling` (a run's config) a thrown error is told with that outcome only;
// without (pipesim decide), with both.
[[nodiscard]] std::string explain_decision(const DecideCase& c, const Decision& d,
                                           const ErrorHandling* handling = nullptr);

// Answers every non-blank line of `in` on `out`, in order, flushing whenever the input has
// nothing buffered (so a caller may feed it line by line). On the first bad line it writes
// "pipesim decide: line N: <what is wrong>" to `err` and returns 2: answers of earlier lines
// stay printed, nothing is printed for that line or later ones. Returns 0 otherwise.
// N counts physical lines, blank ones included.
int run_decide_stream(std::istream& in, std::ostream& out, std::ostream& err);
// The same over lines given one by one: `next_line` returns false at the end
// (it may end early, e.g. on an interrupt; the caller says so). Out is flushed
// whenever `pending` says no more input is at hand, so an answer is never held
// back while the next line is awaited.
int run_decide_lines(const std::function<bool(std::string&)>& next_line,
                     const std::function<bool()>& pending, std::ostream& out, std::ostream& err);

}  // namespace pipesim::sink
