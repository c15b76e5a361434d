// lifetime.hpp: the lifetime rule of std::mutex and POSIX mutexes, as a check
// any mutex test can run: the LT that unlocks a mutex last may destroy it at
// once, even while the LTs that held it before are still returning from
// their unlock().
//
// Every LT takes each of many mutexes `rounds` times; the last holder
// destroys it and fills its storage with a pattern. An unlock() that touches
// the mutex after it released it writes into the pattern, or (under
// AddressSanitizer, where the storage is also poisoned) reads or writes
// poisoned memory; under ThreadSanitizer its access races with the fill.
// All LTs gather at a mutex before any takes it and the holder yields, so
// queues are long, waiters park, and unlock() goes through its wake and
// hand-off paths. Such a race needs the releasing LT to stall inside
// unlock(), so a pass is evidence, not proof.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

#include <fibersync/runtime/counting.hpp>

#include "support/poison.hpp"
#include "support/runtimes.hpp"
#include "support/watchdog.hpp"

namespace fibersync::test {

// R is a counting_runtime (for the report of suspends); M is constructed
// from `args` for every mutex.
template <class R, class M, class... Args>
void expect_last_holder_may_destroy(unsigned mutexes, const Args&... args) {
  using namespace std::chrono_literals;
  struct slot {
    watched_storage<M> storage;
    unsigned takers = 0;  // under the slot's mutex
    std::atomic<unsigned> arrived{0};
  };
  const unsigned lts = 16;
  const unsigned rounds = 4;  // per LT and mutex
  std::vector<slot> slots(mutexes);
  for (slot& s : slots) s.storage.construct(args...);
  R::reset();
  watchdog dog("destroy after the last unlock", 300s);
  run_lts<R>(2, lts, [&](unsigned) {
    for (slot& s : slots) {
      M& m = s.storage.object();
      s.arrived.fetch_add(1, std::memory_order_relaxed);
      while (s.arrived.load(std::memory_order_relaxed) < lts) R::yield();
      for (unsigned round = 0; round < rounds; ++round) {
        m.lock();
        const bool last = ++s.takers == lts * rounds;
        if (!last) {
          R::yield();  // the others queue up (and park) behind us
          R::yield();
        }
        m.unlock();
        if (last) s.storage.destroy();
      }
    }
  });
  unsigned touched = 0;
  for (slot& s : slots) {
    if (!s.storage.untouched()) ++touched;
  }
  EXPECT_EQ(touched, 0u) << "unlock() wrote into a mutex its last holder had destroyed";
  const wait_counts counts = R::totals();
  std::printf("[ info     ] %u acquisitions, %llu suspends, %llu yields\n", lts * rounds * mutexes,
              static_cast<unsigned long long>(counts.suspends), static_cast<unsigned long long>(counts.yields));
}

}  // namespace fibersync::test
