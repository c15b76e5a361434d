// driver.hpp: basic_driver<Traits>, a runtime_driver built from a few hooks.
//
// Traits must provide:
//   using runtime = R;                                  // a fibersync runtime adapter
//   static constexpr const char* name, *description;
//   static void run_lts(const executor_options&, unsigned lts, const lt_body&);
//   static void spawn_join(unsigned k, std::uint64_t pauses);  // k LTs doing pause(pauses)
//   static void yield();
//   static unsigned carrier();                          // carrier the calling LT runs on now
//
// Mutexes are added by type: add_mutex<M>("name", counted). A fibersync mutex
// is added as X<trace::traced_runtime<Traits>> (counted = true): that runtime
// is counting_runtime<R>, so its yields and suspends are counted, plus the
// --trace records; add_fibersync_mutexes() adds every one (the list is in
// mutex_list.hpp: adding a mutex there adds it to every runtime).
//
// --trace (run_env::trace): recording starts before the carriers and is
// collected after they have been joined; the file is written after the
// metrics, outside the timed part. The harness' own yields go through
// trace::traced_yield<Traits>, which is Traits::yield plus one predictable
// branch when not tracing.
#pragma once

#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fibersync/bench/benchmark.hpp"
#include "fibersync/bench/placement.hpp"
#include "fibersync/bench/text_stats.hpp"
#include "fibersync/bench/trace.hpp"
#include "fibersync/runtime/counting.hpp"
#include "fibersync/runtime/executor.hpp"

namespace fibersync::bench {

namespace detail {

template <class M>
struct alignas(64) padded {
  M value;
};

// The loop of DESIGN.md section 5:
//   while (!stop) { lock; critical_section(); unlock; parallel_work(); yield(); }
template <class Traits, class M>
benchmark loop_benchmark(M& mutex, std::atomic<std::uint64_t>& seq) {
  return {"loop", [&mutex, &seq](state& st, unsigned lt) {
            lt_counters& me = st.lt(lt);
            work_runner critical(st.cfg.critical, st.ops, st.shared_memory(), st.cfg.seed * 7919 + lt);
            work_runner parallel(st.cfg.parallel, st.ops, st.shared_memory(), st.cfg.seed * 104729 + lt);
            const bool latency = st.cfg.latency, yield_inside = st.cfg.yield_inside,
                       yield_after = st.cfg.yield_after_unlock;
            const topology& topo = topology::current();
            // --trace: `seen` is the trace-clock tick at which prev_carrier
            // was read, where the LT's migration arrow starts.
            const bool tracing = trace::enabled();
            const std::uint64_t self = tracing ? trace::lt_key(Traits::runtime::current()) : 0;
            if (tracing) trace::add(trace::kind::lt_start, self, Traits::carrier(), lt);
            st.barrier();
            if (lt == 0) st.start();
            unsigned prev_carrier = Traits::carrier();
            std::uint64_t seen = tracing ? trace::now() : 0;
            for (;;) {
              if (lt == 0) {
                const phase before = tracing ? st.current() : phase::warmup;
                const bool go_on = st.tick_timer();
                if (tracing && st.current() != before)
                  trace::add(before == phase::warmup ? trace::kind::measuring_begins : trace::kind::measuring_ends,
                             self, Traits::carrier());
                if (!go_on) break;
              } else if (st.current() == phase::stopped) {
                break;
              }
              const unsigned c0 = Traits::carrier();
              const std::uint64_t seen0 = tracing ? trace::now() : 0;
              if (c0 != prev_carrier && st.current() == phase::measuring) {
                ++me.migrations;
                // The arrow is recorded by the statement that counts the
                // migration: the trace has exactly `migrations` arrows.
                if (tracing) trace::add_at(seen0, trace::kind::migration, self, c0, seen, prev_carrier);
              }
              const std::uint64_t t0 = latency ? ticks_begin() : 0;
              mutex.lock();
              const std::uint64_t t1 = latency ? ticks_end() : 0;
              const unsigned c1 = latency ? Traits::carrier() : c0;
              // relaxed load + store, not fetch_add: the mutex orders them, and a
              // broken mutex shows up as repeated sequence numbers, not UB.
              const std::uint64_t s = seq.load(std::memory_order_relaxed);
              seq.store(s + 1, std::memory_order_relaxed);
              const phase p = st.current();
              st.record_place(me, p, topo.current_place());
              critical.run();
              if (yield_inside) trace::traced_yield<Traits>();
              mutex.unlock();
              st.record(me, p, s, t1 - t0, c1 != c0);
              prev_carrier = c1;
              seen = latency ? t1 : seen0;  // t1: the tick c1 was read at, same counter as trace::now()
              parallel.run();
              if (yield_after) trace::traced_yield<Traits>();
            }
            if (tracing) trace::add(trace::kind::lt_exit, self, Traits::carrier());
            st.barrier();
          }};
}

// Text statistics: each LT counts the words of every lts-th line. Each shard
// numbers its own acquisitions (bypass is per mutex), on its own cache line:
// one counter for all shards would be a 17th shared line that every critical
// section writes, and two holders of different shards would race on it.
template <class Traits, class M>
benchmark text_stats_benchmark(std::vector<std::unique_ptr<padded<M>>>& mutexes, std::vector<shard_table>& tables,
                               std::vector<padded<std::atomic<std::uint64_t>>>& seqs) {
  return {"text_stats", [&](state& st, unsigned lt) {
            lt_counters& me = st.lt(lt);
            const text_corpus& corpus = *st.env.corpus;
            const std::size_t shards = tables.size();
            std::vector<std::uint64_t> last_seq(shards, ~std::uint64_t{0});
            const bool tracing = trace::enabled();
            const std::uint64_t self = tracing ? trace::lt_key(Traits::runtime::current()) : 0;
            if (tracing) trace::add(trace::kind::lt_start, self, Traits::carrier(), lt);
            st.barrier();
            if (lt == 0) st.mark_begin();
            st.barrier();
            for (std::size_t i = lt; i < corpus.lines.size(); i += st.cfg.lts) {
              for_each_word(corpus.lines[i], [&](std::string_view w) {
                const std::uint64_t h = word_hash(w);
                const std::size_t k = (h >> 32) % shards;
                M& mutex = mutexes[k]->value;
                mutex.lock();
                std::atomic<std::uint64_t>& seq = seqs[k].value;
                const std::uint64_t s = seq.load(std::memory_order_relaxed);
                seq.store(s + 1, std::memory_order_relaxed);
                tables[k].add(h);
                if (st.cfg.yield_inside) trace::traced_yield<Traits>();
                mutex.unlock();
                st.record(me, phase::measuring, s, last_seq[k], 0, false);
              });
              if (st.cfg.yield_after_unlock) trace::traced_yield<Traits>();
            }
            if (tracing) trace::add(trace::kind::lt_exit, self, Traits::carrier());
            st.barrier();
            if (lt == 0) st.mark_end();
          }};
}

}  // namespace detail

template <class Traits>
class basic_driver : public runtime_driver {
 public:
  using R = typename Traits::runtime;
  using run_fn = nlohmann::json (*)(const run_config&, const run_env&);

  std::string name() const override { return Traits::name; }
  std::string description() const override { return Traits::description; }
  std::vector<std::string> mutexes() const override { return order_; }

  // counted: M uses counting_runtime<R> (via trace::traced_runtime), so
  // yields/suspends are reported.
  template <class M>
  void add_mutex(const std::string& mutex_name, bool counted) {
    if (!table_.count(mutex_name)) order_.push_back(mutex_name);
    table_[mutex_name] = counted ? &run_with<M, true> : &run_with<M, false>;
  }

  nlohmann::json run(const run_config& cfg, const run_env& env) const override {
    auto it = table_.find(cfg.mutex);
    if (it == table_.end()) throw std::runtime_error("runtime " + name() + " has no mutex " + cfg.mutex);
    return it->second(cfg, env);
  }

  static lt_ops ops() {
    lt_ops o;
    o.yield = &trace::traced_yield<Traits>;
    o.spawn_join = &Traits::spawn_join;
    o.carrier = &Traits::carrier;
    return o;
  }

 private:
  // A mutex of the run, built with the scenario's wait-policy overrides
  // when it takes a wait_policy (the fibersync mutexes; not the library's).
  template <class M>
  static std::unique_ptr<detail::padded<M>> make_mutex(const run_config& cfg) {
    if constexpr (std::is_constructible_v<M, const wait_policy&>) {
      wait_policy policy = default_wait_policy<R>();
      if (cfg.max_backoff >= 0) policy.max_backoff = static_cast<std::uint32_t>(cfg.max_backoff);
      if (cfg.yield_every >= 0) policy.yield_every = static_cast<std::uint32_t>(cfg.yield_every);
      if (cfg.suspend_after >= 0) policy.suspend_after = static_cast<std::uint32_t>(cfg.suspend_after);
      return std::unique_ptr<detail::padded<M>>(new detail::padded<M>{M(policy)});
    } else {
      return std::make_unique<detail::padded<M>>();
    }
  }

  template <class M, bool Counted>
  static nlohmann::json run_with(const run_config& cfg, const run_env& env) {
    wait_counts (*counts)() = nullptr;
    if constexpr (Counted) counts = &counting_runtime<R>::totals;
    state st(cfg, env, ops(), counts);
    executor_options ex;
    ex.carriers = cfg.carriers;
    ex.idle_suspend = cfg.idle_suspend;
    ex.cpus = carrier_cpus(cfg.pinning, cfg.carriers, install_topology(cfg.topology),
                           std::max(1u, std::thread::hardware_concurrency()));
    ex.shared_pool = cfg.abt_pools == "shared";
    nlohmann::json extra = nlohmann::json::object();
    const bool tracing = !env.trace.path.empty();
    if (tracing) trace::start(env.trace.buffer_records);
    if (cfg.workload == "loop") {
      std::atomic<std::uint64_t> seq{0};
      auto m = make_mutex<M>(cfg);
      benchmark b = detail::loop_benchmark<Traits, M>(m->value, seq);
      Traits::run_lts(ex, cfg.lts, [&](unsigned lt) { b.body(st, lt); });
    } else if (cfg.workload == "text_stats") {
      if (env.corpus == nullptr) throw std::runtime_error("text_stats: no corpus");
      std::vector<std::unique_ptr<detail::padded<M>>> mutexes;
      for (unsigned i = 0; i < cfg.text_shards; ++i) mutexes.push_back(make_mutex<M>(cfg));
      std::size_t cap = 64;
      while (cap < 2 * std::size_t{cfg.text_vocabulary}) cap <<= 1;
      std::vector<shard_table> tables;
      tables.reserve(cfg.text_shards);
      for (unsigned i = 0; i < cfg.text_shards; ++i) tables.emplace_back(cap);
      std::vector<detail::padded<std::atomic<std::uint64_t>>> seqs(cfg.text_shards);
      benchmark b = detail::text_stats_benchmark<Traits, M>(mutexes, tables, seqs);
      Traits::run_lts(ex, cfg.lts, [&](unsigned lt) { b.body(st, lt); });
      std::vector<const shard_table*> ptrs;
      for (const auto& t : tables) ptrs.push_back(&t);
      std::string why;
      extra["verified"] = verify_counts(*env.corpus, ptrs, &why);
      if (!why.empty()) extra["verification_error"] = why;
    } else {
      throw std::runtime_error("unknown workload " + cfg.workload);
    }
    // Every carrier has been joined: the buffers are complete.
    trace::recording recorded;
    if (tracing) recorded = trace::collect();
    nlohmann::json out = st.metrics();
    for (auto& [k, v] : extra.items()) out[k] = v;
    if (tracing) {
      trace::trace_info info;
      info.pid = env.trace.pid;
      info.process_name = env.trace.process_name;
      info.ticks_per_ns = env.cal.ticks_per_ns;
      info.buffer_records = env.trace.buffer_records;
      info.run = {{"runtime", cfg.runtime}, {"mutex", cfg.mutex}, {"lts", cfg.lts}, {"carriers", cfg.carriers},
                  {"repetition", cfg.repetition}, {"metric_migrations", out["migrations"]}};
      const trace::trace_summary t = trace::write_chrome_trace(env.trace.path, recorded, info);
      out["trace_file"] = env.trace.path;
      out["trace_events"] = t.events;
      out["trace_migrations"] = t.migrations;
      out["trace_dropped_records"] = t.dropped;
    }
    if (cfg.workload == "text_stats") {
      const double ms = out["duration_ms"].get<double>();
      out["total_ms"] = ms;
      out["lines_per_ms"] = ms > 0 ? cfg.text_lines / ms : 0.0;
    }
    return out;
  }

  std::map<std::string, run_fn> table_;
  std::vector<std::string> order_;
};

}  // namespace fibersync::bench
