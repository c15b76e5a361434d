// boost_fiber_registration.cpp: the Boost.Fiber runtime for fibersync-bench.
//
// LTs are boost::fibers::fiber on `carriers` OS threads with the work_stealing
// scheduler (round_robin on one carrier), via run_lts_on_boost_fibers. The
// harness runs every configuration in its own process. Baseline:
// boost::fibers::mutex.
// fibersync headers first: Boost.Fiber 1.74 defines a function-like macro
// `cpu_relax()` (boost/fiber/detail/cpu_relax.hpp) that breaks the declaration
// of fibersync::cpu_relax if it comes later.
#include "fibersync/bench/driver.hpp"
#include "fibersync/bench/mutex_list.hpp"

#include <boost/fiber/fiber.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>

#include <vector>
#include "fibersync/runtime/boost_fiber.hpp"
#include "fibersync/runtime/boost_fiber_executor.hpp"

namespace fibersync::bench {

namespace {
struct boost_fiber_traits {
  using runtime = fibersync::boost_fiber_runtime;
  static constexpr const char* name = "boost_fiber";
  static constexpr const char* description =
      "Boost.Fiber, work_stealing on `carriers` threads (default: cores); library = boost::fibers::mutex";
  static void run_lts(const executor_options& o, unsigned lts, const lt_body& body) {
    fibersync::run_lts_on_boost_fibers(o, lts, body);
  }
  static void spawn_join(unsigned k, std::uint64_t pauses) {
    std::vector<boost::fibers::fiber> fs;
    fs.reserve(k);
    for (unsigned i = 0; i < k; ++i) fs.emplace_back([pauses] { pause_n(pauses); });
    for (auto& f : fs) f.join();
  }
  static void yield() { boost::this_fiber::yield(); }
  static unsigned carrier() { return fibersync::boost_fiber_runtime::carrier(); }
};
}  // namespace

void register_boost_fiber(registry& reg) {
  auto d = std::make_unique<basic_driver<boost_fiber_traits>>();
  add_fibersync_mutexes(*d);
  d->add_mutex<boost::fibers::mutex>("library", false);
  reg.add(std::move(d));
}

}  // namespace fibersync::bench
