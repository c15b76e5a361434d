// registry.hpp: runtime drivers, by name.
//
// A runtime driver runs one run_config (N LTs on C carriers with a named
// mutex) inside the current process and returns the run's metrics as JSON
// (keys = CSV columns, plus per_lt_acquisitions and extras). The harness calls
// it in a forked child, one child per run, because Boost.Fiber's work_stealing
// can be set up only once per process.
//
// In-tree runtimes register in runtimes/<runtime>_registration.cpp; an
// out-of-tree project does the same before calling run_main() (see
// docs/bench.md, "Adding a runtime"). Most drivers are a basic_driver<Traits>
// (driver.hpp), whose mutex table is filled by add_fibersync_mutexes() plus
// one add_mutex<>() line for the runtime's own mutex.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fibersync/bench/scenario.hpp"
#include "fibersync/bench/work.hpp"

namespace fibersync::bench {

struct text_corpus;

// --trace for one run: where its Chrome trace goes (empty: no trace).
struct trace_request {
  std::string path;
  std::size_t buffer_records = 0;  // records per carrier buffer
  unsigned pid = 1;                // the run's number in the sweep (trace pid)
  std::string process_name;
};

// Read-only data prepared by the parent before it forks the run's child.
struct run_env {
  calibration cal;
  const text_corpus* corpus = nullptr;  // text_stats workload only
  trace_request trace;
};

class runtime_driver {
 public:
  virtual ~runtime_driver() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // Mutex names in display order ("library" = the runtime's own mutex).
  virtual std::vector<std::string> mutexes() const = 0;
  // Workloads this runtime runs (loop and text_stats need only a mutex; gauss
  // needs the native scheduler's events).
  virtual std::vector<std::string> workloads() const { return {"loop", "text_stats"}; }
  // Carriers when the scenario says 0 (default: the machine's cores).
  virtual unsigned default_carriers(unsigned hardware) const { return hardware; }
  // Runs cfg in this process. Throws on failure.
  virtual nlohmann::json run(const run_config& cfg, const run_env& env) const = 0;
};

class registry {
 public:
  // The process-wide registry, with the in-tree runtimes already added.
  static registry& instance();

  void add(std::unique_ptr<runtime_driver> driver);  // replaces one of the same name
  const runtime_driver* find(std::string_view name) const;
  std::vector<const runtime_driver*> drivers() const;

 private:
  std::vector<std::unique_ptr<runtime_driver>> drivers_;
};

// Called once by registry::instance(): the in-tree registrations.
void register_os_threads(registry& reg);
void register_boost_fiber(registry& reg);
void register_native(registry& reg);
void register_argobots(registry& reg);  // only when built with Argobots

}  // namespace fibersync::bench
