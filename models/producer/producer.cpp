#include "models/producer/producer.h"

namespace pipesim::producer {

Producer::Producer(sim::Simulation& sim, const ProducerOptions& options,
                   workload::Workload& workload, std::vector<broker::PartitionLog>& logs,
                   ledger::Ledger& ledger, sim::Time produce_latency,
                   std::function<void(int)> on_append)
    : sim_(sim),
      options_(options),
      workload_(workload),
      logs_(logs),
      ledger_(ledger),
      produce_latency_(produce_latency),
      on_append_(std::move(on_append)),
      id_(sim.add_component(this)) {}

void Producer::start(sim::Time stop) {
  stop_ = stop;
  sim_.schedule(sim_.now(), id_, kTick);
}

void Producer::handle(const sim::Event& event) {
  if (event.type == kTick) {
    tick();
  } else {
    answer();
  }
}

void Producer::tick() {
  workload_.draw_tick(sim_.now(), counts_);
  std::vector<InFlight> request;
  for (std::size_t p = 0; p < counts_.size(); ++p) {
    if (counts_[p] == 0) continue;
    const int partition = static_cast<int>(p);
    const std::int64_t first = ledger_.emit(partition, counts_[p]);
    request.push_back(InFlight{partition, first, counts_[p]});
    counters_.records_sent += counts_[p];
  }
  if (!request.empty()) {
    ++counters_.requests;
    in_flight_.push_back(std::move(request));
    sim_.schedule_in(produce_latency_, id_, kProduceAnswer);
  }
  const sim::Time next = sim_.now() + workload_.tick();
  if (next < stop_) sim_.schedule(next, id_, kTick);
}

void Producer::answer() {
  const std::vector<InFlight> request = std::move(in_flight_.front());
  in_flight_.pop_front();
  for (const auto& r : request) {
    logs_[static_cast<std::size_t>(r.partition)].append(r.first_id, r.count, ledger::CopyCause::ORIGINAL);
    counters_.kafka_records += r.count;
  }
  for (const auto& r : request) on_append_(r.partition);
}

}  // namespace pipesim::producer
