// os_thread.hpp: os_thread_runtime, the adapter for plain OS threads.
//
// Every std::thread is its own "lightweight thread" and its own carrier.
//   yield      sched_yield()
//   suspend    wait on a per-thread permit word with std::atomic::wait (a futex
//              on Linux) until it is set, then clear it
//   resume     set the permit and notify_one; callable from any thread
//   carrier    a process-wide index given to each thread on first use
//   cpu        sched_getcpu(): the processor the kernel runs the caller on
// The permit lives in a thread_local, so a handle is valid while its thread
// lives; the hand-over handshake (wait/handover.hpp) guarantees that a
// resumed thread is still inside suspend() when resume() is called.
// libstdc++'s std::atomic::wait (GCC 12) spins 12 pauses and then calls
// sched_yield() 4 times before it sleeps, so every suspend() here begins
// with 4 yields that no wait policy chose and no counter shows. The policy
// below was tuned with them: the queue locks' hand-over catches many a
// "parked" waiter during those yields, before it sleeps. Calling the futex
// directly was measured (session 10, docs/runtimes.md "Known quirks"): a
// lock that parks at once gained 1.6x under high contention, but mcs, clh,
// cna, hmcs and numa_mcs lost a quarter to a third in hot-handover with the
// policy below; with suspend_after 16 they kept their throughput (session
// 11, same place).
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <string_view>

#include "fibersync/detail/carrier_local.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/wait_policy.hpp"

namespace fibersync {

struct os_thread_runtime {
  struct permit {
    std::atomic<std::uint32_t> word{0};  // 1: a resume is pending. Set by resume(), cleared by suspend()
    unsigned carrier_index = 0;
  };
  using handle = permit*;

  static constexpr std::string_view name = "os_threads";

  // Park after about one futex round trip (8 checks, ~700 pauses, 2 yields).
  // A longer spin (it was 128/64/256, ~1 ms) collapses every queue lock once
  // threads outnumber cores and the holder can lose its core (a yield or a
  // preemption inside the critical section): the spinners then own the cores
  // until their next yield. high-contention, 4-64 threads on 2 cores: mcs went
  // from 2 to 48-68 acq/ms; the price is hot-handover at 16-64 threads, where
  // each hand-over to a parked waiter costs a futex wake (mcs 220 -> 75).
  // Sweep and numbers: docs/BENCHMARKS.md, "OS-thread wait policy".
  static constexpr wait_policy default_wait_policy() noexcept {
    return wait_policy{}.with_max_backoff(64).with_yield_every(4).with_suspend_after(8);
  }
  // The kernel runs another thread on a core whose thread blocks.
  static constexpr bool idle_carriers_steal = true;
  // The kernel time-slices threads: one that yields may wait out others'
  // slices before it runs again (runtime/concept.hpp).
  static constexpr bool preemptive = true;

  static handle current() noexcept { return self(); }

  static void yield() noexcept { ::sched_yield(); }

  static void suspend() noexcept {
    permit* p = self();
    // acquire: pairs with the release exchange in resume(), so everything the
    // resumer wrote before resuming is visible after we return.
    while (p->word.exchange(0, std::memory_order_acquire) == 0) {
      p->word.wait(0, std::memory_order_relaxed);
    }
  }

  static void resume(handle h) noexcept {
    // release: pairs with the acquire exchange in suspend(). Only a 0 -> 1
    // transition can have a sleeper to wake.
    if (h->word.exchange(1, std::memory_order_release) == 0) h->word.notify_one();
  }

  static unsigned carrier() noexcept { return self()->carrier_index; }
  // The CPU the kernel runs us on now (the vDSO's getcpu: 4 ns on our
  // machine), -1 if unknown.
  static int cpu() noexcept { return ::sched_getcpu(); }

 private:
  // Not inlined so that no caller can cache the thread_local's address across
  // a suspension point (DESIGN.md section 7; harmless for OS threads, kept for
  // uniformity with the fiber adapters).
  FIBERSYNC_CARRIER_LOCAL static permit* self() noexcept {
    static std::atomic<unsigned> next_index{0};
    thread_local permit state{{0}, next_index.fetch_add(1, std::memory_order_relaxed)};
    return &state;
  }
};

static_assert(runtime<os_thread_runtime>);

}  // namespace fibersync
