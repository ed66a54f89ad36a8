// Tests of the `pipesim decide` JSON-lines I/O (docs/model.md §9): parser, answer line, explanation,
// stream driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "models/sink/decide_cases.h"

namespace pipesim::sink {
namespace {

DecideCase parse_ok(const std::string_view line) {
  const ParsedDecideCase parsed = parse_decide_case(line);
  if (const auto* problem = std::get_if<std::string>(&parsed)) {
    ADD_FAILURE() << "unexpected parse error: " << *problem << " for " << line;
    return {};
  }
  return std::get<DecideCase>(parsed);
}

std::string parse_error(const std::string_view line) {
  const ParsedDecideCase parsed = parse_decide_case(line);
  if (const auto* problem = std::get_if<std::string>(&parsed)) return *problem;
  ADD_FAILURE() << "parsed although invalid: " << line;
  return {};
}

std::string answer(const std::string_view line) {
  const DecideCase c = parse_ok(line);
  return format_decision(c, decide(c));
}

std::string explain(const std::string_view line) {
  const DecideCase c = parse_ok(line);
  return explain_decision(c, decide(c));
}

// ---------------------------------------------------------------------------------------------
// Parser: valid lines

TEST(DecideParse, ReadsAllFourKeys) {
  const DecideCase c = parse_ok(R"({"state":"AFTER_PROCESSING","stored":[10,20],)"
                                R"("batch":[5,15],"tolerateStateMismatch":true})");
  EXPECT_EQ(c.stored.state, ProcessingState::AFTER_PROCESSING);
  EXPECT_EQ(c.stored.range, (OffsetRange{10, 20}));
  EXPECT_EQ(c.batch, (OffsetRange{5, 15}));
  EXPECT_TRUE(c.tolerate_state_mismatch);
  EXPECT_TRUE(c.stored_given);
}

TEST(DecideParse, KeysMayComeInAnyOrderWithWhitespace) {
  const DecideCase c =
      parse_ok(R"( { "batch" : [ 1 , 2 ] , "stored" : [0,0], "state" : "BEFORE_PROCESSING" } )");
  EXPECT_EQ(c.stored.state, ProcessingState::BEFORE_PROCESSING);
  EXPECT_EQ(c.stored.range, (OffsetRange{0, 0}));
  EXPECT_EQ(c.batch, (OffsetRange{1, 2}));
}

TEST(DecideParse, TolerateStateMismatchDefaultsToFalse) {
  EXPECT_FALSE(parse_ok(R"({"state":"AFTER_PROCESSING","stored":[1,2],"batch":[3,4]})")
                   .tolerate_state_mismatch);
}

TEST(DecideParse, NoneMayOmitStored) {
  const DecideCase c = parse_ok(R"({"state":"NONE","batch":[3,4]})");
  EXPECT_EQ(c.stored.state, ProcessingState::NONE);
  EXPECT_FALSE(c.stored_given);
}

TEST(DecideParse, NoneMayGiveStoredAsNull) {
  EXPECT_FALSE(parse_ok(R"({"state":"NONE","stored":null,"batch":[3,4]})").stored_given);
}

TEST(DecideParse, NoneMayGiveStoredRange) {
  const DecideCase c = parse_ok(R"({"state":"NONE","stored":[7,9],"batch":[3,4]})");
  EXPECT_TRUE(c.stored_given);
  EXPECT_EQ(c.stored.range, (OffsetRange{7, 9}));
}

TEST(DecideParse, AcceptsTheLargestOffset) {
  EXPECT_EQ(parse_ok(R"({"state":"NONE","batch":[0,9223372036854775807]})").batch.max,
            9223372036854775807);
}

// ---------------------------------------------------------------------------------------------
// Parser: exact error messages

TEST(DecideParse, UnknownStateNamesTheExpectedOnes) {
  EXPECT_EQ(parse_error(R"({"state":"X","batch":[5,15]})"),
            R"(unknown state "X" (expected NONE, BEFORE_PROCESSING or AFTER_PROCESSING))");
}

TEST(DecideParse, StateNamesAreCaseSensitive) {
  EXPECT_EQ(parse_error(R"({"state":"none","batch":[5,15]})"),
            R"(unknown state "none" (expected NONE, BEFORE_PROCESSING or AFTER_PROCESSING))");
}

TEST(DecideParse, StateOfWrongType) {
  EXPECT_EQ(parse_error(R"({"state":1,"batch":[5,15]})"),
            R"("state": expected a string, found number 1)");
}

TEST(DecideParse, BatchMinAboveMax) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[7,3]})"), R"("batch": min 7 > max 3)");
}

TEST(DecideParse, StoredMinAboveMax) {
  EXPECT_EQ(parse_error(R"({"state":"BEFORE_PROCESSING","stored":[9,8],"batch":[7,7]})"),
            R"("stored": min 9 > max 8)");
}

TEST(DecideParse, NegativeOffset) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[-3,3]})"),
            R"("batch": min -3 is negative (offsets start at 0))");
  EXPECT_EQ(parse_error(R"({"state":"AFTER_PROCESSING","stored":[1,-1],"batch":[3,3]})"),
            R"("stored": max -1 is negative (offsets start at 0))");
}

TEST(DecideParse, OffsetAboveInt64) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,9223372036854775808]})"),
            R"("batch": max 9223372036854775808 is out of range (at most 9223372036854775807))");
}

TEST(DecideParse, NonIntegerOffset) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1.5,3]})"),
            R"("batch": min must be an integer offset, found number 1.5)");
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,"3"]})"),
            R"("batch": max must be an integer offset, found string "3")");
}

TEST(DecideParse, RangeOfWrongShape) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":"5-15"})"),
            R"("batch": expected an array [min,max], found string "5-15")");
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,2,3]})"),
            R"("batch": expected an array [min,max], found an array of 3 elements)");
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1]})"),
            R"("batch": expected an array [min,max], found an array of 1 element)");
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":{"min":1,"max":2}})"),
            R"("batch": expected an array [min,max], found object)");
}

TEST(DecideParse, MissingKeys) {
  EXPECT_EQ(parse_error(R"({"batch":[1,2]})"), R"(missing key "state")");
  EXPECT_EQ(parse_error(R"({"state":"NONE"})"), R"(missing key "batch")");
  EXPECT_EQ(parse_error(R"({"state":"BEFORE_PROCESSING","batch":[1,2]})"),
            R"(missing key "stored" (required when state is BEFORE_PROCESSING))");
  EXPECT_EQ(parse_error(R"({"state":"AFTER_PROCESSING","batch":[1,2]})"),
            R"(missing key "stored" (required when state is AFTER_PROCESSING))");
}

TEST(DecideParse, StoredNullOnlyForNone) {
  EXPECT_EQ(parse_error(R"({"state":"AFTER_PROCESSING","stored":null,"batch":[1,2]})"),
            R"("stored": expected an array [min,max], found null)");
}

TEST(DecideParse, TolerateOfWrongType) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,2],"tolerateStateMismatch":"true"})"),
            R"("tolerateStateMismatch": expected true or false, found string "true")");
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,2],"tolerateStateMismatch":1})"),
            R"("tolerateStateMismatch": expected true or false, found number 1)");
}

TEST(DecideParse, UnknownKey) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,2],"foo":1})"),
            R"(unknown key "foo" (expected state, stored, batch, tolerateStateMismatch))");
}

TEST(DecideParse, UnknownKeyCloseToAKnownOneGetsAHint) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","Batch":[1,2]})"),
            R"(unknown key "Batch" (did you mean "batch"?))");
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,2],"tolerateStateMissmatch":true})"),
            R"(unknown key "tolerateStateMissmatch" (did you mean "tolerateStateMismatch"?))");
}

TEST(DecideParse, DuplicateKey) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,2],"batch":[3,4]})"),
            R"(duplicate key "batch")");
}

TEST(DecideParse, DuplicateKeyInsideANestedObjectIsNotReportedAsDuplicate) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":{"a":1,"a":2}})"),
            R"("batch": expected an array [min,max], found object)");
}

TEST(DecideParse, MalformedJson) {
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,2])"),
            "malformed JSON at column 30: syntax error while parsing object - unexpected end "
            "of input; expected '}'");
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[1,2]} x)"),
            "malformed JSON at column 32: syntax error while parsing value - invalid literal; "
            "last read: '2]} x'; expected end of input");
}

// Fuzzing finding: a number beyond double's range is nlohmann's out_of_range,
// not a parse_error, and it escaped parse_decide_case (the program aborted).
TEST(DecideParse, NumberBeyondDoubleRange) {
  EXPECT_EQ(parse_error(R"({"state":1e400,"batch":[1,2]})"), "number overflow parsing '1e400'");
  EXPECT_EQ(parse_error(R"({"state":"NONE","batch":[0,9223372036854775808e9223372036854775808]})"),
            "number overflow parsing '9223372036854775808e9223372036854775808'");
  std::istringstream in("{\"state\":\"NONE\",\"batch\":[0,9]}\n{\"state\":-1e999}\n");
  std::ostringstream out, err;
  EXPECT_EQ(run_decide_stream(in, out, err), 2);
  EXPECT_EQ(err.str(), "pipesim decide: line 2: number overflow parsing '-1e999'\n");
}

TEST(DecideParse, NotAnObject) {
  EXPECT_EQ(parse_error("[1,2]"), "expected a JSON object, found array");
  EXPECT_EQ(parse_error("42"), "expected a JSON object, found number 42");
}

// ---------------------------------------------------------------------------------------------
// Answer line (format_decision), exact strings

TEST(DecideFormat, StateMismatch) {
  EXPECT_EQ(answer(R"({"state":"AFTER_PROCESSING","stored":[10,20],)"
                   R"("batch":[5,15],"tolerateStateMismatch":false})"),
            R"({"state":"AFTER_PROCESSING","stored":[10,20],)"
            R"("batch":[5,15],"tolerateStateMismatch":false,)"
            R"("ops":[],"error":"AFTER_PROCESSING_STATE_MISMATCH"})");
}

TEST(DecideFormat, BeforeProcessingOverlapWithDlq) {
  EXPECT_EQ(answer(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[15,30]})"),
            R"({"state":"BEFORE_PROCESSING","stored":[10,20],)"
            R"("batch":[15,30],"tolerateStateMismatch":false,)"
            R"("ops":[{"op":"dlq","records":[15,20],"count":6,"reason":"DuplicateException"},)"
            R"({"op":"set_state","state":"BEFORE_PROCESSING","range":[21,30]},)"
            R"({"op":"insert","records":[21,30],"count":10,"token":[21,30]},)"
            R"({"op":"set_state","state":"AFTER_PROCESSING","range":[21,30]}],"error":null})");
}

TEST(DecideFormat, BeforeProcessingSameTokensTheWholeBatch) {
  EXPECT_EQ(answer(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[5,20]})"),
            R"({"state":"BEFORE_PROCESSING","stored":[10,20],)"
            R"("batch":[5,20],"tolerateStateMismatch":false,)"
            R"("ops":[{"op":"insert","records":[10,20],"count":11,"token":[5,20]},)"
            R"({"op":"set_state","state":"AFTER_PROCESSING","range":[5,20]}],"error":null})");
}

TEST(DecideFormat, KeepState) {
  EXPECT_EQ(answer(R"({"state":"AFTER_PROCESSING","stored":[10,20],)"
                   R"("batch":[12,18],"tolerateStateMismatch":true})"),
            R"({"state":"AFTER_PROCESSING","stored":[10,20],)"
            R"("batch":[12,18],"tolerateStateMismatch":true,)"
            R"("ops":[{"op":"keep_state"}],"error":null})");
}

TEST(DecideFormat, NoneWithoutStoredEchoesNull) {
  EXPECT_EQ(answer(R"({"batch":[0,2],"state":"NONE"})"),
            R"({"state":"NONE","stored":null,"batch":[0,2],"tolerateStateMismatch":false,)"
            R"("ops":[{"op":"set_state","state":"BEFORE_PROCESSING","range":[0,2]},)"
            R"({"op":"insert","records":[0,2],"count":3,"token":[0,2]},)"
            R"({"op":"set_state","state":"AFTER_PROCESSING","range":[0,2]}],"error":null})");
}

TEST(DecideFormat, NoneWithStoredEchoesIt) {
  EXPECT_EQ(answer(R"({"state":"NONE","stored":[4,4],"batch":[5,5]})"),
            R"({"state":"NONE","stored":[4,4],"batch":[5,5],"tolerateStateMismatch":false,)"
            R"("ops":[{"op":"set_state","state":"BEFORE_PROCESSING","range":[5,5]},)"
            R"({"op":"insert","records":[5,5],"count":1,"token":[5,5]},)"
            R"({"op":"set_state","state":"AFTER_PROCESSING","range":[5,5]}],"error":null})");
}

TEST(DecideFormat, ErrorNames) {
  EXPECT_EQ(
      answer(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[12,18]})"),
      R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[12,18],)"
      R"("tolerateStateMismatch":false,"ops":[],"error":"BEFORE_PROCESSING_STATE_CONTAINS"})");
  EXPECT_EQ(answer(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[5,15]})"),
            R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[5,15],)"
            R"("tolerateStateMismatch":false,"ops":[],"error":"BEFORE_PROCESSING_ERROR_STATE"})");
}

TEST(DecideFormat, OutputIsValidJsonThatParsesBackToTheCase) {
  const std::string line = R"({"state":"AFTER_PROCESSING","stored":[10,20],)"
                           R"("batch":[5,30],"tolerateStateMismatch":true})";
  const std::string out = answer(line);
  // The answer's first four keys form a valid input line again.
  const std::string echoed = out.substr(0, out.find(R"(,"ops")")) + "}";
  EXPECT_EQ(echoed, line);
}

// ---------------------------------------------------------------------------------------------
// Explanation: one test per branch, each checking the phrase that names the branch's reason.

void expect_contains(const std::string& text, const std::string_view part) {
  EXPECT_NE(text.find(part), std::string::npos) << "missing \"" << part << "\" in: " << text;
}

TEST(DecideExplain, None) {
  const std::string text = explain(R"({"state":"NONE","batch":[5,15]})");
  expect_contains(text, "No state is stored");
  expect_contains(text,
                  "writes BEFORE_PROCESSING [5,15], inserts the 11 records [5,15] with "
                  "token [5,15], then writes AFTER_PROCESSING [5,15]");
}

TEST(DecideExplain, BeforeProcessingZero) {
  const std::string text =
      explain(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[0,8]})");
  expect_contains(text, "(ZERO)");
  expect_contains(text, "deleted and recreated topic");
}

TEST(DecideExplain, BeforeProcessingSame) {
  const std::string text =
      explain(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[5,20]})");
  expect_contains(text, "batch [5,20] starts before the stored range [10,20] and ends at its end");
  expect_contains(text, "retry of that insert");
  expect_contains(text, "same token [5,20]");
  expect_contains(text, "Records [5,9], below the stored min, are dropped.");
}

TEST(DecideExplain, BeforeProcessingNew) {
  const std::string text =
      explain(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[25,30]})");
  expect_contains(text, "(offsets [21,24] in between were never seen)");
  expect_contains(text, "without writing BEFORE_PROCESSING first");
}

TEST(DecideExplain, BeforeProcessingContains) {
  const std::string text =
      explain(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[12,18]})");
  expect_contains(text, "throws \"BEFORE_PROCESSING: State CONTAINS\" before any write");
}

TEST(DecideExplain, BeforeProcessingOverlapRetry) {
  const std::string text =
      explain(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[10,30]})");
  expect_contains(text, "covers the stored range exactly");
  expect_contains(text, "inserts the 11 records [10,20] with token [10,20]");
}

TEST(DecideExplain, BeforeProcessingOverlapDlq) {
  const std::string text =
      explain(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[15,30]})");
  expect_contains(text, "does not reach down to the stored min");
  expect_contains(text, "sends the 6 records [15,20] to the DLQ as DuplicateException");
}

TEST(DecideExplain, BeforeProcessingError) {
  const std::string text =
      explain(R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[5,15]})");
  expect_contains(text, "throws \"BEFORE_PROCESSING: ERROR State\"");
  expect_contains(text, "tolerateStateMismatch does not apply");
}

TEST(DecideExplain, AfterProcessingSameOrContains) {
  const std::string same =
      explain(R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[5,20]})");
  expect_contains(same, "skips the batch");
  expect_contains(same, "Records [5,9], below the stored min, are skipped as well.");
  const std::string contains =
      explain(R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[12,18]})");
  expect_contains(contains, "(CONTAINS)");
  expect_contains(contains, "reports the stored range [10,20] as inserted");
}

TEST(DecideExplain, AfterProcessingZero) {
  const std::string text =
      explain(R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[0,8]})");
  expect_contains(text, "(ZERO)");
  expect_contains(text, "inserted again");
}

TEST(DecideExplain, AfterProcessingNew) {
  const std::string text =
      explain(R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[21,30]})");
  expect_contains(text, "batch [21,30] directly follows the stored range [10,20] (NEW)");
  expect_contains(text, "writes BEFORE_PROCESSING [21,30]");
}

TEST(DecideExplain, AfterProcessingOverlap) {
  const std::string text =
      explain(R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[15,30]})");
  expect_contains(text, "Records [15,20] were already inserted and are skipped silently (no DLQ)");
}

TEST(DecideExplain, AfterProcessingStateMismatch) {
  const std::string text = explain(R"({"state":"AFTER_PROCESSING","stored":[10,20],)"
                                   R"("batch":[5,15],"tolerateStateMismatch":false})");
  expect_contains(text, "batch [5,15] starts before the stored range [10,20] and ends inside it");
  expect_contains(text, "the stored state is AFTER_PROCESSING");
  expect_contains(text, "throws \"AFTER_PROCESSING: State MISMATCH\"");
  expect_contains(text, "tolerateStateMismatch=true would skip the batch");
}

TEST(DecideExplain, AfterProcessingStateMismatchTolerated) {
  const std::string text = explain(R"({"state":"AFTER_PROCESSING","stored":[10,20],)"
                                   R"("batch":[5,15],"tolerateStateMismatch":true})");
  expect_contains(text, "skips the 11 records: no insert, no state write, no offset reported");
}

TEST(DecideExplain, EveryBranchHasItsOwnExplanation) {
  const std::vector<std::string_view> lines = {
      R"({"state":"NONE","batch":[5,15]})",
      R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[0,8]})",
      R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[5,20]})",
      R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[21,30]})",
      R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[12,18]})",
      R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[10,30]})",
      R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[15,30]})",
      R"({"state":"BEFORE_PROCESSING","stored":[10,20],"batch":[5,15]})",
      R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[10,20]})",
      R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[0,8]})",
      R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[21,30]})",
      R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[15,30]})",
      R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[5,15]})",
      R"({"state":"AFTER_PROCESSING","stored":[10,20],)"
      R"("batch":[5,15],"tolerateStateMismatch":true})",
  };
  std::vector<std::string> texts;
  for (const std::string_view line : lines) {
    std::string text = explain(line);
    EXPECT_GT(text.size(), 80u) << line;
    for (const std::string& earlier : texts) EXPECT_NE(text, earlier) << line;
    texts.push_back(std::move(text));
  }
}

// ---------------------------------------------------------------------------------------------
// Stream driver

TEST(DecideStream, AnswersEveryLineInOrderSkippingBlankOnes) {
  std::istringstream in(
      "{\"state\":\"NONE\",\"batch\":[0,1]}\n"
      "\n"
      "   \t\n"
      "{\"state\":\"AFTER_PROCESSING\",\"stored\":[0,1],\"batch\":[0,1]}\r\n"
      "{\"state\":\"AFTER_PROCESSING\",\"stored\":[10,20],\"batch\":[5,15]}");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_decide_stream(in, out, err), 0);
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(out.str(),
            R"({"state":"NONE","stored":null,"batch":[0,1],"tolerateStateMismatch":false,)"
            R"("ops":[{"op":"set_state","state":"BEFORE_PROCESSING","range":[0,1]},)"
            R"({"op":"insert","records":[0,1],"count":2,"token":[0,1]},)"
            R"({"op":"set_state","state":"AFTER_PROCESSING","range":[0,1]}],"error":null})"
            "\n"
            R"({"state":"AFTER_PROCESSING","stored":[0,1],"batch":[0,1],)"
            R"("tolerateStateMismatch":false,"ops":[{"op":"keep_state"}],"error":null})"
            "\n"
            R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[5,15],)"
            R"("tolerateStateMismatch":false,"ops":[],"error":"AFTER_PROCESSING_STATE_MISMATCH"})"
            "\n");
}

TEST(DecideStream, EmptyInputIsFine) {
  std::istringstream in("");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_decide_stream(in, out, err), 0);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "");
}

TEST(DecideStream, BadLineThreeStopsWithExitTwoAndNothingFromLineThreeOn) {
  std::istringstream in(
      "{\"state\":\"NONE\",\"batch\":[0,1]}\n"
      "{\"state\":\"NONE\",\"batch\":[2,3]}\n"
      "{\"state\":\"NONE\",\"batch\":[7,3]}\n"
      "{\"state\":\"NONE\",\"batch\":[4,5]}\n");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_decide_stream(in, out, err), 2);
  EXPECT_EQ(err.str(), "pipesim decide: line 3: \"batch\": min 7 > max 3\n");
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_NE(text.find("\"batch\":[0,1]"), std::string::npos);
  EXPECT_NE(text.find("\"batch\":[2,3]"), std::string::npos);
  EXPECT_EQ(text.find("\"batch\":[4,5]"), std::string::npos);
}

TEST(DecideStream, LineNumbersCountBlankLines) {
  std::istringstream in("\n{\"state\":\"NONE\",\"batch\":[0,1]}\n\n{\"state\":\"X\"}\n");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_decide_stream(in, out, err), 2);
  EXPECT_EQ(err.str(),
            "pipesim decide: line 4: unknown state \"X\" (expected NONE, BEFORE_PROCESSING or "
            "AFTER_PROCESSING)\n");
}

TEST(DecideStream, TenThousandCasesAllAnswered) {
  std::string input;
  for (int i = 0; i < 10000; ++i) {
    input += R"({"state":"AFTER_PROCESSING","stored":[10,20],"batch":[)" + std::to_string(i % 40) +
             "," + std::to_string(40 + i % 7) + R"(],"tolerateStateMismatch":false})" + "\n";
  }
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_decide_stream(in, out, err), 0);
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10000);
}

}  // namespace
}  // namespace pipesim::sink
