#include "models/pipeline/topology.h"

#include <boost/graph/dijkstra_shortest_paths.hpp>

#include "models/pipeline/config.h"
#include "sim/engine/invariant.h"

namespace pipesim::pipeline {

Topology::Topology(const Config& c) {
  add("producer");
  add("keeper");
  for (int b = 0; b < c.kafka.brokers; ++b) {
    const std::string broker = "broker-" + std::to_string(b);
    add(broker);
    // Half the healthy produce round trip each way.
    link("producer", broker, sim::Time{c.kafka.produce_latency.us / 2});
  }
  for (int w = 0; w < c.connect.workers; ++w) {
    const std::string worker = "worker-" + std::to_string(w);
    add(worker);
    for (int b = 0; b < c.kafka.brokers; ++b) {
      link(worker, "broker-" + std::to_string(b), sim::Time{c.connect.fetch_latency.us / 2});
    }
  }
  for (int r = 0; r < c.clickhouse.replicas; ++r) {
    const std::string replica = "replica-" + std::to_string(r);
    add(replica);
    link(replica, "keeper", sim::Time{c.keeper.latency.us / 2});
    for (int w = 0; w < c.connect.workers; ++w) {
      link("worker-" + std::to_string(w), replica, sim::Time::micros(250));
    }
  }
}

std::size_t Topology::add(const std::string& name) {
  return boost::add_vertex(Vertex{name}, graph_);
}

std::size_t Topology::vertex(const std::string& name) const {
  for (std::size_t v = 0; v < boost::num_vertices(graph_); ++v) {
    if (graph_[v].name == name) return v;
  }
  PIPESIM_INVARIANT(false, "no component named " + name);
  return 0;
}

void Topology::link(const std::string& a, const std::string& b, sim::Time one_way) {
  boost::add_edge(vertex(a), vertex(b), Link{one_way.us}, graph_);
}

sim::Time Topology::round_trip(const std::string& from, const std::string& to) const {
  std::vector<std::int64_t> distance(boost::num_vertices(graph_));
  boost::dijkstra_shortest_paths(
      graph_, vertex(from),
      boost::weight_map(boost::get(&Link::one_way_us, graph_))
          .distance_map(boost::make_iterator_property_map(distance.begin(),
                                                          boost::get(boost::vertex_index, graph_))));
  return sim::Time{2 * distance[vertex(to)]};
}

}  // namespace pipesim::pipeline
