// benchmark.hpp: the harness core, after the C++ paper (seed 000): a
// `benchmark` wraps a function taking a `state`; the `state` holds the run's
// parameters, per-LT counters and the shared timer.
//
// Timing: every LT meets at an LT-aware barrier (waiting by yielding to its
// runtime, never by blocking its carrier); then all run the loop. The lowest-
// numbered LT (LT 0) owns the timer: it checks the clock once per iteration,
// ends the warm-up (warmup_fraction x duration), opens the timed part, and
// closes it after duration. An acquisition counts when the phase it reads
// inside its critical section is `measuring`. A second barrier follows the loop.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "fibersync/bench/metrics.hpp"
#include "fibersync/bench/registry.hpp"
#include "fibersync/bench/scenario.hpp"
#include "fibersync/bench/ticks.hpp"
#include "fibersync/bench/work.hpp"
#include "fibersync/runtime/counting.hpp"
#include "fibersync/topology/topology.hpp"

namespace fibersync::bench {

// Sense-reversing barrier whose waiters yield to their runtime.
class lt_barrier {
 public:
  explicit lt_barrier(unsigned n) : n_(n) {}
  void arrive_and_wait(void (*yield)()) {
    const unsigned gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_acq_rel);  // release: pairs with the acquire load below
    } else {
      while (generation_.load(std::memory_order_acquire) == gen) yield();
    }
  }

 private:
  const unsigned n_;
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<unsigned> generation_{0};
};

enum class phase : int { warmup = 0, measuring = 1, stopped = 2 };

// Per-LT counters, written only by their LT (read after the run).
struct alignas(64) lt_counters {
  std::uint64_t acquisitions = 0;
  std::uint64_t migrations = 0;          // carrier changed since the previous iteration
  std::uint64_t latency_migrated = 0;    // samples whose LT changed carrier while waiting
  std::uint64_t handovers = 0;           // acquisitions that followed another acquisition
  std::uint64_t same_node = 0;           // ... made on the NUMA node of the one before
  std::uint64_t same_cluster = 0;        // ... made in the cache cluster of the one before
  std::uint64_t last_seq = ~std::uint64_t{0};
  histogram bypass;
  histogram latency_ticks;
};

class state {
 public:
  state(const run_config& cfg, const run_env& env, const lt_ops& ops, wait_counts (*counts)())
      : cfg(cfg), env(env), ops(ops), counts_(counts), lts_(cfg.lts), barrier_(cfg.lts) {
    std::size_t bytes = std::max(cfg.critical.kind == work_kind::memory ? cfg.critical.a : 0,
                                 cfg.parallel.kind == work_kind::memory ? cfg.parallel.a : 0);
    shared_memory_.assign(bytes + 64, 0);
  }

  const run_config& cfg;
  const run_env& env;
  const lt_ops ops;

  lt_counters& lt(unsigned i) { return lts_[i]; }
  unsigned char* shared_memory() { return shared_memory_.data(); }
  void barrier() { barrier_.arrive_and_wait(ops.yield); }

  phase current() const noexcept { return static_cast<phase>(phase_.load(std::memory_order_relaxed)); }

  // LT 0: start the warm-up clock.
  void start() {
    warm_end_ns_ = monotonic_ns() + cfg.duration_ms * cfg.warmup_fraction * 1e6;
  }
  // LT 0, once per iteration: advance the phase when its time has come.
  // Returns false once the run is over.
  bool tick_timer() {
    const phase p = current();
    if (p == phase::stopped) return false;
    const double now = monotonic_ns();
    if (p == phase::warmup && now >= warm_end_ns_) {
      t0_ns_ = monotonic_ns();
      cpu0_ns_ = process_cpu_ns();
      if (counts_) counts0_ = counts_();
      phase_.store(int(phase::measuring), std::memory_order_relaxed);
      end_ns_ = t0_ns_ + cfg.duration_ms * 1e6;
    } else if (p == phase::measuring && now >= end_ns_) {
      phase_.store(int(phase::stopped), std::memory_order_relaxed);
      t1_ns_ = monotonic_ns();
      cpu1_ns_ = process_cpu_ns();
      if (counts_) counts1_ = counts_();
      return false;
    }
    return true;
  }
  // For workloads that run to completion instead of for a duration.
  void mark_begin() {
    t0_ns_ = monotonic_ns();
    cpu0_ns_ = process_cpu_ns();
    if (counts_) counts0_ = counts_();
    phase_.store(int(phase::measuring), std::memory_order_relaxed);
  }
  void mark_end() {
    phase_.store(int(phase::stopped), std::memory_order_relaxed);
    t1_ns_ = monotonic_ns();
    cpu1_ns_ = process_cpu_ns();
    if (counts_) counts1_ = counts_();
  }

  // Records one acquisition (called inside the critical section or right
  // after unlock with the values read inside it).
  void record(lt_counters& me, phase p, std::uint64_t seq, std::uint64_t wait_ticks, bool migrated) {
    record(me, p, seq, me.last_seq, wait_ticks, migrated);
  }
  // The same, where each of several mutexes numbers its own acquisitions:
  // last_seq is this LT's previous number from the same mutex.
  void record(lt_counters& me, phase p, std::uint64_t seq, std::uint64_t& last_seq, std::uint64_t wait_ticks,
              bool migrated) {
    if (p == phase::measuring) {
      ++me.acquisitions;
      if (last_seq != ~std::uint64_t{0}) me.bypass.add(seq - last_seq - 1);
      if (cfg.latency) {
        if (migrated) ++me.latency_migrated;
        else me.latency_ticks.add(wait_ticks);
      }
    }
    last_seq = seq;
  }

  // Inside the critical section: where this acquisition runs, compared with
  // the previous one (the mutex under test orders the accesses to prev_*).
  void record_place(lt_counters& me, phase p, const topology::cpu_place& here) {
    if (p == phase::measuring && prev_node_ >= 0) {
      ++me.handovers;
      me.same_node += static_cast<unsigned>(prev_node_) == here.node;
      me.same_cluster += static_cast<unsigned>(prev_cluster_) == here.cluster;
    }
    prev_node_ = static_cast<int>(here.node);
    prev_cluster_ = static_cast<int>(here.cluster);
  }

  // Metrics of the finished run, keys = CSV columns (null = not applicable).
  nlohmann::json metrics() const;

 private:
  wait_counts (*counts_)();
  std::vector<lt_counters> lts_;
  lt_barrier barrier_;
  std::vector<unsigned char> shared_memory_;
  alignas(64) std::atomic<int> phase_{int(phase::warmup)};
  alignas(64) int prev_node_ = -1;  // place of the last acquisition: written inside the critical section
  int prev_cluster_ = -1;
  double warm_end_ns_ = 0, end_ns_ = 0, t0_ns_ = 0, t1_ns_ = 0, cpu0_ns_ = 0, cpu1_ns_ = 0;
  wait_counts counts0_{}, counts1_{};
};

// A benchmark: a name and the function every LT runs with the shared state.
struct benchmark {
  std::string name;
  std::function<void(state&, unsigned lt)> body;
};

}  // namespace fibersync::bench
