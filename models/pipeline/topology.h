// The scenario's topology as a Boost.Graph: one vertex per component
// instance (producer, brokers, Connect workers, ClickHouse replicas, Keeper),
// one edge per network link with its one-way latency. Models ask it for the
// latency between two components (shortest path), so a network fault can
// later act on links rather than on hard-coded numbers.
#pragma once

#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/engine/time.h"

namespace pipesim::pipeline {

struct Config;

class Topology {
 public:
  explicit Topology(const Config& config);

  // Round trip between two named components ("producer", "broker-0", ...).
  [[nodiscard]] sim::Time round_trip(const std::string& from, const std::string& to) const;
  [[nodiscard]] std::size_t components() const { return boost::num_vertices(graph_); }
  [[nodiscard]] std::size_t links() const { return boost::num_edges(graph_); }

 private:
  struct Vertex {
    std::string name;
  };
  struct Link {
    std::int64_t one_way_us = 0;
  };
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Vertex, Link>;

  std::size_t vertex(const std::string& name) const;
  std::size_t add(const std::string& name);
  void link(const std::string& a, const std::string& b, sim::Time one_way);

  Graph graph_;
};

}  // namespace pipesim::pipeline
