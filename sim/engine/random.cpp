#include "sim/engine/random.h"

#include <cmath>

namespace pipesim::sim {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr double kTwoPi = 6.283185307179586476925286766559;

}  // namespace

std::uint64_t fnv1a64(std::string_view text, std::uint64_t basis) {
  std::uint64_t h = basis;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

RandomStream::RandomStream(std::uint64_t master_seed, std::string_view name) {
  // The name's hash and the seed are mixed through splitmix64, which also
  // fills the four state words (the seeding xoshiro's authors recommend).
  std::uint64_t x = master_seed ^ rotl(fnv1a64(name), 17);
  for (auto& word : s_) word = splitmix64(x);
}

RandomStream RandomStream::from_key(std::uint64_t key) {
  RandomStream r;
  std::uint64_t x = key;
  for (auto& word : r.s_) word = splitmix64(x);
  return r;
}

std::uint64_t RandomStream::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double RandomStream::uniform01() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

std::uint64_t RandomStream::below(std::uint64_t n) {
  // Lemire's multiply-shift with rejection: unbiased and deterministic.
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

bool RandomStream::bernoulli(double p) {
  if (p <= 0.0) return false;
  if (p >= 1.0) return true;
  return uniform01() < p;
}

double RandomStream::exponential(double mean) {
  // 1 - U lies in (0, 1], so the log is finite.
  return -mean * std::log(1.0 - uniform01());
}

double RandomStream::normal() {
  const double u1 = 1.0 - uniform01();
  const double u2 = uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

std::int64_t RandomStream::poisson(double mean) {
  if (mean <= 0.0) return 0;
  if (mean < 64.0) {
    // Knuth: multiply uniforms until the product drops below e^-mean.
    const double limit = std::exp(-mean);
    std::int64_t k = 0;
    double product = uniform01();
    while (product > limit) {
      ++k;
      product *= uniform01();
    }
    return k;
  }
  const double v = std::floor(mean + std::sqrt(mean) * normal() + 0.5);
  return v < 0.0 ? 0 : static_cast<std::int64_t>(v);
}

Time RandomStream::exponential_time(Time mean) {
  return Time{static_cast<std::int64_t>(std::llround(exponential(static_cast<double>(mean.us))))};
}

}  // namespace pipesim::sim
