#include "sim/experiment/ddmin.h"

#include <algorithm>
#include <map>

namespace pipesim::sim {
namespace {

// `set` cut into `parts` contiguous chunks of near-equal size.
std::vector<std::vector<std::size_t>> split(const std::vector<std::size_t>& set,
                                            std::size_t parts) {
  std::vector<std::vector<std::size_t>> chunks;
  std::size_t from = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    const std::size_t to = from + (set.size() - from) / (parts - i);
    chunks.emplace_back(set.begin() + static_cast<std::ptrdiff_t>(from),
                        set.begin() + static_cast<std::ptrdiff_t>(to));
    from = to;
  }
  return chunks;
}

}  // namespace

std::vector<std::size_t> ddmin(std::size_t n,
                               const std::function<bool(const std::vector<std::size_t>&)>& holds) {
  std::map<std::vector<std::size_t>, bool> seen;
  const auto test = [&](const std::vector<std::size_t>& subset) {
    const auto it = seen.find(subset);
    if (it != seen.end()) return it->second;
    const bool h = holds(subset);
    seen.emplace(subset, h);
    return h;
  };
  if (test({})) return {};
  std::vector<std::size_t> current(n);
  for (std::size_t i = 0; i < n; ++i) current[i] = i;
  std::size_t granularity = 2;
  while (current.size() >= 2) {
    granularity = std::min(granularity, current.size());
    const auto chunks = split(current, granularity);
    bool reduced = false;
    // Reduce to a chunk: the cause lies within one part.
    for (const auto& chunk : chunks) {
      if (test(chunk)) {
        current = chunk;
        granularity = 2;
        reduced = true;
        break;
      }
    }
    // Reduce to a complement: one part is not needed.
    if (!reduced && granularity > 2) {
      for (std::size_t i = 0; i < chunks.size() && !reduced; ++i) {
        std::vector<std::size_t> complement;
        for (std::size_t j = 0; j < chunks.size(); ++j) {
          if (j != i) complement.insert(complement.end(), chunks[j].begin(), chunks[j].end());
        }
        if (test(complement)) {
          current = complement;
          granularity = std::max<std::size_t>(granularity - 1, 2);
          reduced = true;
        }
      }
    }
    if (reduced) continue;
    if (granularity >= current.size()) break;  // every single element is needed: 1-minimal
    granularity = std::min(granularity * 2, current.size());
  }
  return current;
}

}  // namespace pipesim::sim
