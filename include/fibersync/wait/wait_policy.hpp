// wait_policy.hpp: the thresholds of the three-phase waiter, as a value.
//
// Every wait loop of every fibersync mutex goes through one `waiter`
// (wait/waiter.hpp), which escalates with the number of failed checks:
//   1. spin:    exponential backoff of cpu_relax(), capped at `max_backoff`
//               pauses per check;
//   2. yield:   every `yield_every`-th failed check gives the carrier to the
//               runtime's scheduler instead of spinning (this is what removes
//               the cooperative deadlock);
//   3. suspend: from the `suspend_after`-th failed check on, park the LT and
//               let the lock holder resume it at hand-over. Only reached where
//               the holder can name the waiter: it waits on a flag of its
//               own (MCS, CLH, HMCS, CNA, NUMA-MCS), or, in adaptive_mutex,
//               it moves from the shared word to a queued node of its own
//               at `advance`; on a shared word alone (TTAS, ticket) the
//               waiter stays in phases 1-2.
// A zero disables the phase: yield_every = 0 never yields (OS threads only),
// suspend_after = 0 never suspends.
#pragma once

#include <cstdint>

namespace fibersync {

struct wait_policy {
  // Where the numbers come from: measured with the hot-handover and
  // paper-coop presets on the project's 2-core x86-64 machine (2026-11); see
  // docs/tuning.md for the sweep and docs/BENCHMARKS.md for the results.
  struct defaults {
    // ~64 pauses is 2-4 us on current x86 (pause is 40-140 cycles): about one
    // short critical section, beyond which spinning only burns the core.
    static constexpr std::uint32_t max_backoff = 64;
    // Lightweight threads: yield after a few cheap checks; a yield costs about
    // one context switch (~50-150 ns), far less than a critical section.
    static constexpr std::uint32_t yield_every = 4;
    // Park after ~32 failed checks: by then the holder is clearly not about to
    // release, and a parked waiter no longer steals carrier time from the
    // holder or from useful LTs.
    static constexpr std::uint32_t suspend_after = 32;
  };

  std::uint32_t max_backoff = defaults::max_backoff;      // pauses per check, cap
  std::uint32_t yield_every = defaults::yield_every;      // 0: never yield
  std::uint32_t suspend_after = defaults::suspend_after;  // 0: never suspend

  constexpr wait_policy& with_max_backoff(std::uint32_t v) noexcept {
    max_backoff = v;
    return *this;
  }
  constexpr wait_policy& with_yield_every(std::uint32_t v) noexcept {
    yield_every = v;
    return *this;
  }
  constexpr wait_policy& with_suspend_after(std::uint32_t v) noexcept {
    suspend_after = v;
    return *this;
  }
  friend constexpr bool operator==(const wait_policy&, const wait_policy&) = default;
};

// The defaults of the fiber adapters (Boost.Fiber, Argobots, native): a
// waiting LT holds its carrier, so it yields after every failed check (the
// holder or useful LTs run instead) and spins only a few pauses between.
// It parks after 32 checks: parking sooner (16) left one carrier half idle,
// each hand-over then waking it through the kernel, and cost the FIFO locks
// 25-45% of hot-handover throughput on 2 carriers; waiters that stay ready a
// little longer keep both carriers running. The old 16/2/16 and three
// alternatives, measured side by side: docs/BENCHMARKS.md, "Fiber wait policy".
constexpr wait_policy fiber_wait_policy() noexcept {
  return wait_policy{}.with_max_backoff(4).with_yield_every(1).with_suspend_after(32);
}

// The policy a mutex uses when constructed without one: the adapter's
// `default_wait_policy()` when it has one, else the generic defaults.
template <class R>
constexpr wait_policy default_wait_policy() noexcept {
  if constexpr (requires { R::default_wait_policy(); }) {
    return R::default_wait_policy();
  } else {
    return wait_policy{};
  }
}

}  // namespace fibersync
