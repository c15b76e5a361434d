// counting.hpp: counting_runtime<R>, a decorator that counts what a mutex
// asks of its runtime (yields, suspends, resumes) and forwards to R.
//
// The harness runs each fibersync mutex as `X<counting_runtime<R>>` to report
// yields and suspends per acquisition, and the tests use it to prove that a
// stress run really went through the suspend path. Counters are per carrier
// (single writer, so a plain load+store, no bouncing cache line) and summed
// on demand; a carrier's counters outlive its thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "fibersync/detail/carrier_local.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/wait_policy.hpp"

namespace fibersync {

struct wait_counts {
  std::uint64_t yields = 0;
  std::uint64_t suspends = 0;
  std::uint64_t resumes = 0;
};

template <runtime R>
struct counting_runtime {
  using handle = typename R::handle;
  static constexpr std::string_view name = R::name;

  static constexpr wait_policy default_wait_policy() noexcept { return fibersync::default_wait_policy<R>(); }
  static constexpr bool idle_carriers_steal = idle_carriers_steal_v<R>;
  static constexpr bool busy_carriers_steal = busy_carriers_steal_v<R>;
  static constexpr bool preemptive = preemptive_v<R>;

  static handle current() { return R::current(); }
  static void yield() {
    bump(&carrier_counts::yields);
    R::yield();
  }
  static void suspend() {
    bump(&carrier_counts::suspends);
    R::suspend();
  }
  static void resume(handle h) {
    bump(&carrier_counts::resumes);
    R::resume(h);
  }
  static unsigned carrier() { return R::carrier(); }
  static int cpu() noexcept
    requires reports_cpu_v<R>
  {
    return R::cpu();
  }

  // Sum over every carrier that ever counted. Exact once the counted LTs
  // have finished (their carriers' writes happen-before the join).
  static wait_counts totals() {
    registry& reg = the_registry();
    std::lock_guard<std::mutex> g(reg.guard);
    wait_counts sum;
    for (const carrier_counts* c : reg.all) {
      sum.yields += c->yields.load(std::memory_order_relaxed);
      sum.suspends += c->suspends.load(std::memory_order_relaxed);
      sum.resumes += c->resumes.load(std::memory_order_relaxed);
    }
    return sum;
  }

  // Call only while no counted LT runs.
  static void reset() {
    registry& reg = the_registry();
    std::lock_guard<std::mutex> g(reg.guard);
    for (carrier_counts* c : reg.all) {
      c->yields.store(0, std::memory_order_relaxed);
      c->suspends.store(0, std::memory_order_relaxed);
      c->resumes.store(0, std::memory_order_relaxed);
    }
  }

 private:
  struct carrier_counts {
    std::atomic<std::uint64_t> yields{0};    // written by one carrier, read by totals()
    std::atomic<std::uint64_t> suspends{0};  // same
    std::atomic<std::uint64_t> resumes{0};   // same
  };
  struct registry {
    std::mutex guard;
    std::vector<carrier_counts*> all;  // never freed: counts outlive threads
  };

  static registry& the_registry() {
    static registry* reg = new registry{};
    return *reg;
  }

  // Not inlined: must resolve the carrier running the caller now (DESIGN.md 7).
  FIBERSYNC_CARRIER_LOCAL static carrier_counts& local() {
    thread_local carrier_counts* mine = [] {
      auto* c = new carrier_counts{};
      registry& reg = the_registry();
      std::lock_guard<std::mutex> g(reg.guard);
      reg.all.push_back(c);
      return c;
    }();
    return *mine;
  }

  static void bump(std::atomic<std::uint64_t> carrier_counts::*field) {
    std::atomic<std::uint64_t>& c = local().*field;
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

}  // namespace fibersync
