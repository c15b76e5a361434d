// argobots.hpp: argobots_runtime, the adapter for Argobots ULTs (optional).
//   yield    ABT_thread_yield();  carrier: index of the OS thread, on first use
//   suspend  announce `parked` on the ULT's own permit, then ABT_self_suspend()
//   resume   leave a permit, or wake a parked ULT with ABT_thread_resume()
// Why: Argobots forgets a resume that comes early (ABT_thread_resume on a ULT
// not yet BLOCKED fails in 1.x, is undefined in 2.0), and a ULT that announced
// its park stays RUNNING until ABT_self_suspend() has switched away.
// Permit state machine (ABT_key data of each ULT, freed with the ULT):
//   running -resume-> permit -suspend-> running     (the early resume is kept)
//   running -suspend-> parked -resume-> running, then ABT_thread_resume
// Invariants: only the owner leaves `running` and consumes `permit`; only a
// resumer leaves `parked` (CAS), so each park is woken exactly once, and it
// calls ABT_thread_resume only once ABT_thread_get_state() says BLOCKED, which
// Argobots stores after the switch saved the ULT. Waiting points: the ULT in
// ABT_self_suspend(); that resumer briefly (spin, then sched_yield), never on
// the target's own carrier, where the target has already switched away.
#pragma once

#include <abt.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fibersync/detail/carrier_local.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/cpu_relax.hpp"
#include "fibersync/wait/wait_policy.hpp"

namespace fibersync {

struct argobots_runtime {
  enum class state : unsigned { running, permit, parked };
  struct permit {
    std::atomic<state> st{state::running};
    ABT_thread thread = ABT_THREAD_NULL;  // the ULT this permit belongs to
  };
  using handle = permit*;

  // What one resume() did (the tests check that every path is exercised).
  enum class resume_path { permit_left, permit_already_set, woke_blocked, woke_after_wait };

  static constexpr std::string_view name = "argobots";

  // Like Boost.Fiber: a waiting ULT holds its execution stream.
  static constexpr wait_policy default_wait_policy() noexcept {
    return fiber_wait_policy();
  }
  // By default every execution stream has its own pool and ULTs never
  // migrate (argobots_executor.hpp): an idle stream has nothing to run.
  static constexpr bool idle_carriers_steal = false;

  // Must be called from a ULT.
  static handle current() { return self(); }

  static void yield() {
    if (ABT_thread_yield() != ABT_SUCCESS) sched_yield();  // not a ULT: yield the OS thread
  }

  // Must be called from a ULT.
  static void suspend() {
    permit* p = self();
    state s = state::permit;
    if (p->st.compare_exchange_strong(s, state::running, std::memory_order_acquire)) return;  // early resume
    s = state::running;
    if (!p->st.compare_exchange_strong(s, state::parked, std::memory_order_acq_rel)) {
      // Only a resumer changes the state meanwhile, and only running -> permit.
      p->st.store(state::running, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      return;
    }
    // Until ABT_self_suspend() has switched away, a resumer waits for BLOCKED.
    check(ABT_self_suspend(), "ABT_self_suspend");
    // The resumer set running before it called ABT_thread_resume().
  }

  static void resume(handle h) { (void)resume_traced(h); }

  static resume_path resume_traced(handle h) {
    state s = h->st.load(std::memory_order_relaxed);
    for (;;) {
      if (s == state::permit) return resume_path::permit_already_set;
      const state next = s == state::running ? state::permit : state::running;
      if (h->st.compare_exchange_weak(s, next, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
    }
    if (s == state::running) return resume_path::permit_left;
    // s was parked and we own the wake-up. The ULT cannot finish (nor park
    // again) before our ABT_thread_resume, so h and h->thread stay valid.
    const ABT_thread target = h->thread;
    bool waited = false;
    for (unsigned spins = 0;; ++spins) {
      ABT_thread_state ts;
      check(ABT_thread_get_state(target, &ts), "ABT_thread_get_state");
      if (ts == ABT_THREAD_STATE_BLOCKED) break;
      waited = true;
      if (spins < 64) {
        cpu_relax();
      } else {
        sched_yield();  // the target's OS thread may need this core to finish its switch
      }
    }
    check(ABT_thread_resume(target), "ABT_thread_resume");
    return waited ? resume_path::woke_after_wait : resume_path::woke_blocked;
  }

  static unsigned carrier() noexcept { return carrier_index(); }

 private:
  static void check(int rc, const char* what) {
    if (rc != ABT_SUCCESS) {
      std::fprintf(stderr, "fibersync::argobots_runtime: %s failed (Argobots error %d)\n", what, rc);
      std::abort();
    }
  }

  static void free_permit(void* p) { delete static_cast<permit*>(p); }

  // The permit is ULT-specific data (an ABT_key), created on the ULT's first
  // current() and freed by Argobots when the ULT is freed. The key outlives
  // ABT_finalize, so one key serves every ABT_init of the process.
  static ABT_key key() {
    static const ABT_key k = [] {
      ABT_key made = ABT_KEY_NULL;
      check(ABT_key_create(&free_permit, &made), "ABT_key_create");
      return made;
    }();
    return k;
  }

  FIBERSYNC_CARRIER_LOCAL static permit* self() {
    const ABT_key k = key();
    void* v = nullptr;
    check(ABT_key_get(k, &v), "ABT_key_get (current() and suspend() need a ULT)");
    if (v != nullptr) return static_cast<permit*>(v);
    permit* p = new permit{};
    check(ABT_self_get_thread(&p->thread), "ABT_self_get_thread (current() and suspend() need a ULT)");
    check(ABT_key_set(k, p), "ABT_key_set");
    return p;
  }

  // Not inlined: a ULT can migrate to another execution stream across any
  // yield (shared pool), and an inlined thread_local address could be kept
  // from before (DESIGN.md 7).
  FIBERSYNC_CARRIER_LOCAL static unsigned carrier_index() noexcept {
    static std::atomic<unsigned> next{0};
    thread_local const unsigned index = next.fetch_add(1, std::memory_order_relaxed);
    return index;
  }
};

static_assert(runtime<argobots_runtime>);

}  // namespace fibersync
