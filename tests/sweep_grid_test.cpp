// Sweep grids: point numbering (nested loops, last key fastest), bad grids,
// and --shard K/N (round-robin over points).
#include <gtest/gtest.h>

#include "sim/config/options.h"
#include "sim/experiment/sweep_grid.h"

namespace pipesim::sim {
namespace {

using Json = nlohmann::ordered_json;

SweepGrid grid_of(const std::string& text) {
  return SweepGrid::parse(Json::parse(text), "grid.json");
}

TEST(SweepGrid, PointsAreNestedLoopsWithTheLastKeyFastest) {
  const SweepGrid g = grid_of(R"({"a.x": [1, 2], "b.y": ["p", "q", "r"]})");
  // 2 x 3 = 6 points; like `for x in [1,2]: for y in [p,q,r]`, point 4 is x=2 (4 / 3 = 1), y=q (4 %
  // 3 = 1).
  ASSERT_EQ(g.point_count(), 6u);
  const auto p4 = g.point(4);
  ASSERT_EQ(p4.size(), 2u);
  EXPECT_EQ(p4[0].first, "a.x");
  EXPECT_EQ(p4[0].second, Json(2));
  EXPECT_EQ(p4[1].first, "b.y");
  EXPECT_EQ(p4[1].second, Json("q"));
  EXPECT_EQ(g.point(0)[1].second, Json("p"));
  EXPECT_EQ(g.point(2)[0].second, Json(1));  // 2 / 3 = 0
  EXPECT_EQ(g.point(3)[0].second, Json(2));
}

TEST(SweepGrid, KeepsTheKeyOrderOfTheFile) {
  // Not alphabetical: "z.b" first, so it varies slowest.
  const SweepGrid g = grid_of(R"({"z.b": [true, false], "a.c": [10, 20]})");
  EXPECT_EQ(g.to_json().dump(), R"({"z.b":[true,false],"a.c":[10,20]})");
  EXPECT_EQ(g.point(1)[0].second, Json(true));
  EXPECT_EQ(g.point(1)[1].second, Json(20));
}

TEST(SweepGrid, ValuesMayBeListsAndObjectsLikeAFaultList) {
  const SweepGrid g = grid_of(R"({"faults": [[], [{"kind": "worker_crash", "at": "1h"}]]})");
  ASSERT_EQ(g.point_count(), 2u);
  EXPECT_EQ(g.point(1)[0].second.dump(), R"([{"kind":"worker_crash","at":"1h"}])");
}

void expect_error(const std::string& text, const std::string& want) {
  try {
    grid_of(text);
    FAIL() << "accepted " << text;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(SweepGrid, BadGridsNameTheKey) {
  expect_error(R"([1, 2])", "config error at grid.json: expected an object");
  expect_error(R"({})", "config error at grid.json: expected an object");
  expect_error(R"({"maxpoll": [1]})",
               R"(config error at grid.json["maxpoll"]: expected a config key)");
  expect_error(
      R"({"connect.max.poll.records": 500})",
      R"(config error at grid.json["connect.max.poll.records"]: expected a non-empty list of values, found 500)");
  expect_error(R"({"connect.max.poll.records": []})", "expected a non-empty list");
  expect_error(
      R"({"connect.max.poll.records": [200, 500, 200]})",
      R"(grid.json["connect.max.poll.records"][2]: value 200 is listed twice (also at [0]))");
}

TEST(Shard, ParsesKOfN) {
  const Shard s = parse_shard("2/8");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 8u);
  for (const char* bad : {"0/3", "4/3", "3", "a/3", "1/0", "1/3x", "/3", "1/", "-1/3"}) {
    EXPECT_THROW(parse_shard(bad), ConfigError) << bad;
  }
}

TEST(Shard, SplitsPointsRoundRobinAndCoversEachOnce) {
  // 10 points in 3 shards: p mod 3 = 0 -> shard 1, = 1 -> shard 2, = 2 -> shard 3.
  EXPECT_EQ(shard_points(10, {1, 3}), (std::vector<std::size_t>{0, 3, 6, 9}));
  EXPECT_EQ(shard_points(10, {2, 3}), (std::vector<std::size_t>{1, 4, 7}));
  EXPECT_EQ(shard_points(10, {3, 3}), (std::vector<std::size_t>{2, 5, 8}));
  EXPECT_EQ(shard_points(10, {1, 1}).size(), 10u);
  // More shards than points: the last shards are empty.
  EXPECT_EQ(shard_points(2, {3, 5}), (std::vector<std::size_t>{}));
  EXPECT_EQ(shard_points(2, {2, 5}), (std::vector<std::size_t>{1}));
  // A huge N must not overflow.
  EXPECT_EQ(shard_points(5, {1, ~0ULL}), (std::vector<std::size_t>{0}));
}

}  // namespace
}  // namespace pipesim::sim
