// The order in which the sink's put() visits the partitions of a batch.
// ProxySinkTask.put groups records with Collectors.groupingBy into a Java
// HashMap keyed by "<topic>-<partition>" and iterates it: the order is the
// HashMap's bucket order (String.hashCode spread by h ^ (h >>> 16), table of
// 16 buckets doubling past 0.75 load, checked before each new key), and
// within a bucket the most recently first-seen key first (computeIfAbsent
// links new keys at the head; DECISION_NOTES.md row 12). Which partition comes first matters when a
// later one throws: earlier partitions keep their side effects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pipesim::sink {

// java.lang.String.hashCode of an ASCII string.
std::int32_t java_string_hash(std::string_view s);

// The iteration order of a java.util.HashMap filled by computeIfAbsent with
// the distinct `keys` in this (first-seen) order: returns indices into `keys`.
std::vector<std::size_t> java_hashmap_order(const std::vector<std::string>& keys);

}  // namespace pipesim::sink
