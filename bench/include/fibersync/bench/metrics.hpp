// metrics.hpp: the numbers computed from one run, as pure functions so that
// tests can check them on known inputs.
#pragma once

#include <cstdint>
#include <vector>

namespace fibersync::bench {

// Jain's fairness index (sum x)^2 / (n sum x^2): 1 = perfectly even, 1/n = one
// LT did everything. 1 for an empty or all-zero input.
double jain_index(const std::vector<std::uint64_t>& per_lt);

// Nearest-rank percentile (p in [0, 100]) of unsorted samples; 0 if empty.
double percentile(std::vector<double> samples, double p);

// Log-linear histogram of non-negative integers: exact below 256, then 32
// sub-buckets per power of two (relative error < 3.2%). Fixed size, cheap to
// record into from the hot loop, mergeable.
class histogram {
 public:
  static constexpr unsigned exact = 256;
  static constexpr unsigned sub = 32;
  static constexpr unsigned buckets = exact + (64 - 8) * sub;

  histogram() : counts_(buckets, 0) {}
  void add(std::uint64_t v) noexcept {
    ++counts_[index(v)];
    ++n_;
    sum_ += static_cast<double>(v);
    if (v > max_) max_ = v;
  }
  void merge(const histogram& o);
  std::uint64_t count() const noexcept { return n_; }
  double mean() const noexcept { return n_ ? sum_ / static_cast<double>(n_) : 0; }
  std::uint64_t max() const noexcept { return max_; }
  // Nearest-rank percentile; the lower edge of the bucket, exact below 256.
  double percentile(double p) const;

  static unsigned index(std::uint64_t v) noexcept {
    if (v < exact) return static_cast<unsigned>(v);
    const unsigned msb = 63u - static_cast<unsigned>(__builtin_clzll(v));  // >= 8
    const unsigned mant = static_cast<unsigned>((v >> (msb - 5)) & (sub - 1));
    return exact + (msb - 8) * sub + mant;
  }
  static std::uint64_t lower_edge(unsigned i) noexcept {
    if (i < exact) return i;
    const unsigned msb = (i - exact) / sub + 8;
    const unsigned mant = (i - exact) % sub;
    return (std::uint64_t{1} << msb) | (std::uint64_t{mant} << (msb - 5));
  }

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t n_ = 0;
  double sum_ = 0;
  std::uint64_t max_ = 0;
};

// Bypass counts from the global acquisition sequence numbers one LT saw (the
// value of the shared counter when it held the lock): bypass = number of
// acquisitions by others between two consecutive acquisitions of this LT.
struct bypass_stats {
  double mean = 0;
  double p99 = 0;
  std::uint64_t max = 0;
  std::uint64_t samples = 0;
};
bypass_stats bypass_from_sequences(const std::vector<std::vector<std::uint64_t>>& per_lt_sequences);
bypass_stats bypass_from_histogram(const histogram& h);

}  // namespace fibersync::bench
