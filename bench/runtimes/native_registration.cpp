// native_registration.cpp: fibersync's own M:N scheduler (fibersync::sched)
// for fibersync-bench.
//
// LTs are uthreads of one sched::scheduler with `carriers` carrier threads
// (work stealing; pinning=compact pins carrier k to CPU k), a fresh scheduler
// per run. Mutexes: every fibersync mutex on native_runtime. There is no
// `library` baseline: the scheduler has no mutex of its own, only events
// (docs/bench.md). Besides loop and text_stats, this runtime runs the gauss
// workload (sched/apps/gauss, DESIGN.md section 4): block-parallel Gaussian
// elimination whose uthreads synchronise through events of architecture
// A0/A1/A2 (scenario field event_arch).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "fibersync/bench/driver.hpp"
#include "fibersync/bench/mutex_list.hpp"
#include "fibersync/runtime/native.hpp"
#include "fibersync/runtime/native_executor.hpp"
#include "gauss/gauss.hpp"

namespace fibersync::bench {

namespace {

struct native_traits {
  using runtime = fibersync::native_runtime;
  static constexpr const char* name = "native";
  static constexpr const char* description =
      "fibersync::sched M:N scheduler on `carriers` carrier threads (work stealing); no library mutex "
      "(the scheduler has none); workloads loop, text_stats, gauss";
  static void run_lts(const executor_options& o, unsigned lts, const lt_body& body) {
    run_lts_on_native(o, lts, body);
  }
  static void spawn_join(unsigned k, std::uint64_t pauses) {
    spawn_and_join_on_native(k, [pauses](unsigned) { pause_n(pauses); });
  }
  static void yield() { sched::this_thread::yield(); }
  static unsigned carrier() { return fibersync::native_runtime::carrier(); }
};

// Test hook (tests/bench): FIBERSYNC_BENCH_GAUSS_CORRUPT=1 perturbs one entry
// of the factor after forward elimination, so the residual check must fail.
bool corrupt_requested() {
  const char* v = std::getenv("FIBERSYNC_BENCH_GAUSS_CORRUPT");
  return v != nullptr && v[0] == '1';
}

nlohmann::json run_gauss_workload(const run_config& cfg) {
  gauss::config g;
  g.lts = cfg.lts;
  g.carriers = cfg.carriers;
  g.pin = cfg.pinning == "compact";
  if (!sched::parse_arch(cfg.event_arch, g.arch)) throw std::runtime_error("bad event_arch " + cfg.event_arch);
  if (!gauss::parse_distribution(cfg.distribution, g.dist))
    throw std::runtime_error("bad distribution " + cfg.distribution);
  g.n = cfg.matrix_n;
  g.tiles_per_dim = cfg.gauss_tiles;
  g.seed = cfg.seed;
  g.corrupt = corrupt_requested();
  const gauss::result r = gauss::run_gauss(g);
  nlohmann::json out = nlohmann::json::object();
  out["duration_ms"] = r.total_ms;
  out["throughput_per_ms"] = nullptr;
  out["arch"] = cfg.event_arch;
  out["distribution"] = cfg.distribution;
  out["matrix_n"] = cfg.matrix_n;
  out["forward_ms"] = r.forward_ms;
  out["back_ms"] = r.back_ms;
  out["total_ms"] = r.total_ms;
  out["residual"] = r.residual;
  out["tiles_per_dim"] = r.tiles_per_dim;
  if (g.corrupt) out["corrupted"] = true;
  out["verified"] = r.ok;
  if (!r.ok) {
    char why[200];
    std::snprintf(why, sizeof why, "gauss: relative residual %.3e is not below 1e-8 (%s, %s, n=%u, lts=%u)",
                  r.residual, cfg.event_arch.c_str(), cfg.distribution.c_str(), cfg.matrix_n, cfg.lts);
    out["verification_error"] = why;
  }
  return out;
}

class native_driver : public basic_driver<native_traits> {
 public:
  std::vector<std::string> workloads() const override { return {"loop", "text_stats", "gauss"}; }
  nlohmann::json run(const run_config& cfg, const run_env& env) const override {
    if (cfg.workload == "gauss") return run_gauss_workload(cfg);
    return basic_driver<native_traits>::run(cfg, env);
  }
};

}  // namespace

void register_native(registry& reg) {
  auto d = std::make_unique<native_driver>();
  add_fibersync_mutexes(*d);
  reg.add(std::move(d));
}

}  // namespace fibersync::bench
