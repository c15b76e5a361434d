// argobots_registration.cpp: the Argobots runtime for fibersync-bench (built
// only with FIBERSYNC_WITH_ARGOBOTS).
//
// LTs are ULTs on `carriers` execution streams (the run's child process is
// the primary one), via run_lts_on_argobots: one Argobots session (ABT_init ..
// ABT_finalize) per run, in the forked child. Pools: scenario field
// `abt_pools`, "per_stream" (default: one pool per stream, LT i on stream
// i % carriers, no migration) or "shared" (one pool every stream pops from).
// `idle_suspend` picks ABT_SCHED_BASIC_WAIT (idle streams sleep) over
// ABT_SCHED_BASIC (they poll). spawn(k, n) starts k ULTs over the session's
// pools, from the spawner's stream on. Baseline (`library`): ABT_mutex.
#include "fibersync/bench/driver.hpp"
#include "fibersync/bench/mutex_list.hpp"
#include "fibersync/runtime/argobots.hpp"
#include "fibersync/runtime/argobots_executor.hpp"

#include <stdexcept>
#include <string>

namespace fibersync::bench {

namespace {

// ABT_mutex as a Lockable. Statically initialized memory instead of
// ABT_mutex_create: the harness builds the mutex before ABT_init.
class abt_mutex {
 public:
  abt_mutex() = default;
  abt_mutex(const abt_mutex&) = delete;
  abt_mutex& operator=(const abt_mutex&) = delete;
  void lock() { check(ABT_mutex_lock(handle()), "ABT_mutex_lock"); }
  bool try_lock() {
    const int rc = ABT_mutex_trylock(handle());
    if (rc == ABT_ERR_MUTEX_LOCKED) return false;
    check(rc, "ABT_mutex_trylock");
    return true;
  }
  void unlock() { check(ABT_mutex_unlock(handle()), "ABT_mutex_unlock"); }

 private:
  ABT_mutex handle() { return ABT_MUTEX_MEMORY_GET_HANDLE(&memory_); }
  static void check(int rc, const char* what) {
    if (rc != ABT_SUCCESS) throw std::runtime_error(std::string(what) + " failed (Argobots error " + std::to_string(rc) + ")");
  }
  ABT_mutex_memory memory_ = ABT_MUTEX_INITIALIZER;
};

struct argobots_traits {
  using runtime = fibersync::argobots_runtime;
  static constexpr const char* name = "argobots";
  static constexpr const char* description =
      "Argobots ULTs on `carriers` execution streams, abt_pools per_stream|shared; library = ABT_mutex";
  static void run_lts(const executor_options& o, unsigned lts, const lt_body& body) {
    fibersync::run_lts_on_argobots(o, lts, body);
  }
  static void spawn_join(unsigned k, std::uint64_t pauses) {
    fibersync::spawn_and_join_on_argobots(k, [pauses](unsigned) { pause_n(pauses); });
  }
  static void yield() { fibersync::argobots_runtime::yield(); }
  static unsigned carrier() { return fibersync::argobots_runtime::carrier(); }
};

}  // namespace

void register_argobots(registry& reg) {
  auto d = std::make_unique<basic_driver<argobots_traits>>();
  add_fibersync_mutexes(*d);
  d->add_mutex<abt_mutex>("library", false);
  reg.add(std::move(d));
}

}  // namespace fibersync::bench
