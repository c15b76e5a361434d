// metrics.cpp: metric computations and state::metrics().
#include "fibersync/bench/metrics.hpp"

#include <algorithm>
#include <cmath>

#include "fibersync/bench/benchmark.hpp"

namespace fibersync::bench {

double jain_index(const std::vector<std::uint64_t>& per_lt) {
  double s = 0, s2 = 0;
  for (std::uint64_t x : per_lt) {
    s += static_cast<double>(x);
    s2 += static_cast<double>(x) * static_cast<double>(x);
  }
  if (per_lt.empty() || s2 == 0) return 1.0;
  return s * s / (static_cast<double>(per_lt.size()) * s2);
}

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(samples.size()));
  const std::size_t i = rank < 1 ? 0 : std::min(samples.size() - 1, static_cast<std::size_t>(rank) - 1);
  return samples[i];
}

void histogram::merge(const histogram& o) {
  for (unsigned i = 0; i < buckets; ++i) counts_[i] += o.counts_[i];
  n_ += o.n_;
  sum_ += o.sum_;
  max_ = std::max(max_, o.max_);
}

double histogram::percentile(double p) const {
  if (n_ == 0) return 0;
  const double rank = std::max(1.0, std::ceil(p / 100.0 * static_cast<double>(n_)));
  std::uint64_t seen = 0;
  for (unsigned i = 0; i < buckets; ++i) {
    seen += counts_[i];
    if (static_cast<double>(seen) >= rank) return static_cast<double>(std::min<std::uint64_t>(lower_edge(i), max_));
  }
  return static_cast<double>(max_);
}

bypass_stats bypass_from_histogram(const histogram& h) {
  bypass_stats b;
  b.samples = h.count();
  b.mean = h.mean();
  b.p99 = h.percentile(99);
  b.max = h.max();
  return b;
}

bypass_stats bypass_from_sequences(const std::vector<std::vector<std::uint64_t>>& per_lt_sequences) {
  histogram h;
  for (const auto& seqs : per_lt_sequences)
    for (std::size_t i = 1; i < seqs.size(); ++i) h.add(seqs[i] - seqs[i - 1] - 1);
  return bypass_from_histogram(h);
}

nlohmann::json state::metrics() const {
  using nlohmann::json;
  json m = json::object();
  const double ms = (t1_ns_ - t0_ns_) / 1e6;
  std::vector<std::uint64_t> per_lt;
  histogram bypass, latency;
  std::uint64_t migrated = 0, migrations = 0, total = 0, handovers = 0, same_node = 0, same_cluster = 0;
  for (const lt_counters& c : lts_) {
    per_lt.push_back(c.acquisitions);
    total += c.acquisitions;
    bypass.merge(c.bypass);
    latency.merge(c.latency_ticks);
    migrated += c.latency_migrated;
    migrations += c.migrations;
    handovers += c.handovers;
    same_node += c.same_node;
    same_cluster += c.same_cluster;
  }
  const double acq = static_cast<double>(total);
  m["duration_ms"] = ms;
  m["acquisitions"] = total;
  m["throughput_per_ms"] = ms > 0 ? acq / ms : 0.0;
  m["per_lt_acquisitions"] = per_lt;
  m["jain_index"] = jain_index(per_lt);
  const bypass_stats b = bypass_from_histogram(bypass);
  if (b.samples) {
    m["bypass_mean"] = b.mean;
    m["bypass_p99"] = b.p99;
    m["bypass_max"] = b.max;
  } else {
    m["bypass_mean"] = m["bypass_p99"] = m["bypass_max"] = nullptr;
  }
  if (cfg.latency && cfg.workload == "loop") {
    const double tpn = env.cal.ticks_per_ns > 0 ? env.cal.ticks_per_ns : 1;
    m["latency_p50_ns"] = latency.percentile(50) / tpn;
    m["latency_p90_ns"] = latency.percentile(90) / tpn;
    m["latency_p99_ns"] = latency.percentile(99) / tpn;
    m["latency_samples"] = latency.count();
    m["latency_migrated"] = migrated;
  } else {
    for (const char* k : {"latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_samples", "latency_migrated"})
      m[k] = nullptr;
  }
  if (counts_ && total) {
    m["yields_per_acq"] = static_cast<double>(counts1_.yields - counts0_.yields) / acq;
    m["suspends_per_acq"] = static_cast<double>(counts1_.suspends - counts0_.suspends) / acq;
  } else {
    m["yields_per_acq"] = m["suspends_per_acq"] = nullptr;
  }
  if (handovers && cfg.workload == "loop") {
    const double h = static_cast<double>(handovers);
    m["same_node_handover"] = static_cast<double>(same_node) / h;
    m["same_cluster_handover"] = static_cast<double>(same_cluster) / h;
    m["remote_handovers_per_1000"] = 1000.0 * static_cast<double>(handovers - same_node) / h;
  } else {
    m["same_node_handover"] = m["same_cluster_handover"] = m["remote_handovers_per_1000"] = nullptr;
  }
  m["migrations"] = cfg.workload == "loop" ? json(migrations) : json(nullptr);
  m["migrations_per_acq"] = (total && cfg.workload == "loop") ? json(static_cast<double>(migrations) / acq) : json(nullptr);
  const double cpu_ms = (cpu1_ns_ - cpu0_ns_) / 1e6;
  m["cpu_time_ms"] = cpu_ms;
  m["cpu_utilization"] = ms > 0 ? cpu_ms / (ms * cfg.carriers) : 0.0;
  return m;
}

}  // namespace fibersync::bench
