// os_threads_registration.cpp: the OS-thread runtime for fibersync-bench.
//
// LTs are std::threads; "carriers" is the number of CPUs they may run on
// (affinity 0..carriers-1). carrier() is the CPU the thread runs on now
// (sched_getcpu), so migrations count CPU changes. Baseline: std::mutex.
#include <sched.h>

#include <mutex>
#include <thread>
#include <vector>

#include "fibersync/bench/driver.hpp"
#include "fibersync/bench/mutex_list.hpp"
#include "fibersync/runtime/os_thread_executor.hpp"

namespace fibersync::bench {

namespace {
struct os_threads_traits {
  using runtime = fibersync::os_thread_runtime;
  static constexpr const char* name = "os_threads";
  static constexpr const char* description = "one OS thread per LT; carriers = CPUs allowed; library = std::mutex";
  static void run_lts(const executor_options& o, unsigned lts, const lt_body& body) {
    fibersync::run_lts_on_os_threads(o, lts, body);
  }
  static void spawn_join(unsigned k, std::uint64_t pauses) {
    std::vector<std::thread> ts;
    ts.reserve(k);
    for (unsigned i = 0; i < k; ++i) ts.emplace_back([pauses] { pause_n(pauses); });
    for (auto& t : ts) t.join();
  }
  static void yield() { ::sched_yield(); }
  static unsigned carrier() {
    const int c = ::sched_getcpu();
    return c < 0 ? 0u : static_cast<unsigned>(c);
  }
};
}  // namespace

void register_os_threads(registry& reg) {
  auto d = std::make_unique<basic_driver<os_threads_traits>>();
  add_fibersync_mutexes(*d);
  d->add_mutex<std::mutex>("library", false);
  reg.add(std::move(d));
}

}  // namespace fibersync::bench
