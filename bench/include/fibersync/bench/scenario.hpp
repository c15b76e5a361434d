// scenario.hpp: a benchmark scenario as data, and its expansion into runs.
//
// A scenario is a JSON object (a file, or a preset in presets/). Every field can
// be overridden with --set key=value; a field whose value is a list expands
// into a sweep (the cartesian product of all list fields, in key order).
// Field reference: docs/bench.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fibersync/bench/work.hpp"

namespace fibersync::bench {

// Bad input: unknown names, malformed JSON, non-positive counts... The CLI
// prints what() on one line and exits with code 2.
struct config_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class registry;

// One run: every sweep field fixed to one value, one repetition.
struct run_config {
  std::string scenario;
  std::string workload = "loop";  // loop | text_stats | gauss
  std::string runtime;
  std::string mutex;
  unsigned lts = 1;
  unsigned carriers = 1;
  std::string topology = "machine";  // or a virtual topology description (placement.hpp)
  std::string pinning = "none";      // none | compact | scatter (placement.hpp)
  unsigned repetition = 0;
  unsigned reps = 1;
  double duration_ms = 200;        // timed part of the loop
  double warmup_fraction = 1.0 / 3;  // warm-up = this x duration
  work_spec critical;
  work_spec parallel;
  bool yield_after_unlock = true;   // the loop's yield() after parallel work
  bool yield_inside = false;        // yield inside the critical section (Java thesis loop)
  double hold_fraction = -1;        // poisson scenarios; < 0: not used
  double lock_rate_per_ms = -1;     // poisson scenarios; < 0: not used
  bool latency = true;              // record acquire latency samples
  bool idle_suspend = true;         // Boost.Fiber work_stealing: idle carriers sleep (see runtime/executor.hpp)
  std::string abt_pools = "per_stream";  // Argobots: per_stream | shared (executor_options::shared_pool)
  unsigned text_lines = 100000;
  unsigned text_shards = 16;
  unsigned text_vocabulary = 5000;
  std::uint64_t seed = 42;
  // wait_policy overrides for the fibersync mutexes (loop workload); -1: the
  // runtime adapter's default_wait_policy().
  int max_backoff = -1;
  int yield_every = -1;
  int suspend_after = -1;
  // gauss workload (runtimes that run it: native): event architecture A0 |
  // A1 | A2, tile distribution block | cyclic, matrix order, tiles per
  // dimension (0: ceil(sqrt(lts))).
  std::string event_arch = "A2";
  std::string distribution = "block";
  unsigned matrix_n = 512;
  unsigned gauss_tiles = 0;
  nlohmann::json params;            // this run's fields, as expanded
};

struct expand_options {
  bool oversubscribe = false;
  unsigned hardware_carriers = 1;  // carriers allowed without --oversubscribe
};

// Reads a scenario file / preset. Throws config_error.
nlohmann::json load_scenario_file(const std::string& path);
nlohmann::json load_preset(const std::string& name);
std::vector<std::string> preset_names();
std::string presets_dir();

// --set key=value: value is JSON if it parses, a comma list of JSON-or-string
// items if it contains a comma, otherwise a string.
void apply_override(nlohmann::json& scenario, std::string_view assignment);
nlohmann::json parse_value(std::string_view text);

// Validates every field and expands the sweep, repetitions included:
// repetition r of every mutex of a configuration comes before repetition
// r + 1 of any. Throws config_error.
std::vector<run_config> expand(const nlohmann::json& scenario, const registry& reg, const expand_options& opt);

}  // namespace fibersync::bench
