// argobots_runtime: the permit suite every adapter passes, plus the cases
// that Argobots itself gets wrong without the adapter's permit (see the state
// machine in runtime/argobots.hpp): a resume issued while the target still
// runs, a resume from a plain OS thread, and many rounds of resume racing
// with suspend, each path of resume() counted so the test proves it ran.
#include <fibersync/runtime/argobots.hpp>
#include <fibersync/runtime/argobots_executor.hpp>

#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "runtime/permit_suite.hpp"

namespace fibersync::test {
INSTANTIATE_TYPED_TEST_SUITE_P(argobots, permit_suite, ::testing::Types<argobots_runtime>);

namespace {
using R = argobots_runtime;
using path = R::resume_path;

// One pool per execution stream: LT i runs on stream i % carriers, always.
void run_pinned(unsigned carriers, unsigned lts, const lt_body& body) {
  executor_options o;
  o.carriers = carriers;
  o.shared_pool = false;
  run_lts_on_argobots(o, lts, body);
}

bool woke(path p) { return p == path::woke_blocked || p == path::woke_after_wait; }
}  // namespace

TEST(argobots_permit, resume_while_target_still_runs_then_suspend_returns_at_once) {
  watchdog dog("resume before suspend", 60s);
  std::atomic<R::handle> target{};
  std::atomic<bool> resumed{false}, returned{false};
  std::atomic<int> result{-1};
  run_pinned(2, 2, [&](unsigned i) {
    if (i == 0) {
      target = R::current();
      while (!resumed.load()) cpu_relax();  // still running, never yields: the resume must be kept
      R::suspend();                         // must return at once
      returned = true;
    } else {
      while (target.load() == nullptr) R::yield();
      result = static_cast<int>(R::resume_traced(target.load()));
      resumed = true;
    }
  });
  EXPECT_EQ(result.load(), static_cast<int>(path::permit_left));
  EXPECT_TRUE(returned.load());
}

TEST(argobots_permit, resume_from_foreign_os_thread_early_and_while_parked) {
  watchdog dog("foreign resume", 60s);
  std::atomic<R::handle> target{};
  std::atomic<bool> early_done{false};
  std::atomic<int> early{-1}, late{-1};
  std::atomic<int> phase{0};
  std::thread foreign([&] {
    while (target.load() == nullptr) std::this_thread::sleep_for(1ms);
    early = static_cast<int>(R::resume_traced(target.load()));  // target is spinning: a permit
    early_done = true;
    while (target.load()->st.load() != R::state::parked) std::this_thread::yield();
    std::this_thread::sleep_for(20ms);  // let it really block
    late = static_cast<int>(R::resume_traced(target.load()));
  });
  run_pinned(1, 1, [&](unsigned) {
    target = R::current();
    while (!early_done.load()) cpu_relax();
    R::suspend();  // consumes the early permit
    phase = 1;
    R::suspend();  // parks until the second resume
    phase = 2;
  });
  foreign.join();
  EXPECT_EQ(early.load(), static_cast<int>(path::permit_left));
  EXPECT_TRUE(woke(static_cast<path>(late.load()))) << late.load();
  EXPECT_EQ(phase.load(), 2);
}

// Round r: the target announces r and suspends; one resumer (even rounds: an
// LT on the other execution stream, odd rounds: a plain OS thread) resumes it
// after a random delay, so the resume lands before the park, between the park
// and BLOCKED, or after BLOCKED. No round may hang (watchdog) and no suspend
// may return before its round's resume was issued.
TEST(argobots_permit, racing_resume_and_suspend_many_rounds) {
  const unsigned rounds = std::max(1000u, static_cast<unsigned>(5000 * stress_scale()));
  watchdog dog("racing resume/suspend", 240s);
  std::atomic<R::handle> target{};
  std::atomic<unsigned> round{~0u}, issued{0}, early_returns{0};
  std::atomic<unsigned> counts[4] = {0, 0, 0, 0};
  std::atomic<R::state> final_state{R::state::parked};
  auto resumer = [&](unsigned parity, auto&& wait) {
    std::minstd_rand rng(parity + 1);
    for (unsigned r = parity; r < rounds; r += 2) {
      while (round.load() != r) wait();
      const unsigned delay = rng() % 800;
      for (unsigned k = delay < 400 ? 0 : delay - 400; k > 0; --k) cpu_relax();  // half: none
      issued.store(r + 1);
      counts[static_cast<int>(R::resume_traced(target.load()))].fetch_add(1);
    }
  };
  std::thread foreign([&] { resumer(1, [] { cpu_relax(); }); });
  run_pinned(2, 2, [&](unsigned i) {
    if (i == 0) {
      target = R::current();
      std::minstd_rand rng(7);
      for (unsigned r = 0; r < rounds; ++r) {
        round.store(r);
        for (unsigned k = rng() % 300; k > 0; --k) cpu_relax();  // sometimes the resume comes first
        R::suspend();
        if (issued.load() < r + 1) early_returns.fetch_add(1);
      }
      final_state = R::current()->st.load();  // every resume consumed: no permit left over
    } else {
      while (target.load() == nullptr) R::yield();
      resumer(0, [] { R::yield(); });
    }
  });
  foreign.join();
  EXPECT_EQ(early_returns.load(), 0u) << "suspend returned without a resume";
  EXPECT_EQ(final_state.load(), R::state::running);
  const unsigned permit_left = counts[static_cast<int>(path::permit_left)].load();
  const unsigned woke_blocked = counts[static_cast<int>(path::woke_blocked)].load();
  const unsigned woke_after_wait = counts[static_cast<int>(path::woke_after_wait)].load();
  EXPECT_EQ(counts[static_cast<int>(path::permit_already_set)].load(), 0u) << "one resume per round";
  EXPECT_EQ(permit_left + woke_blocked + woke_after_wait, rounds);
  EXPECT_GT(permit_left, 0u) << "no resume landed before the park: the early path was not exercised";
  EXPECT_GT(woke_blocked + woke_after_wait, 0u) << "no resume found the ULT parked";
  std::printf("[ info     ] %u rounds: %u permits left early, %u woke a BLOCKED ULT, %u waited for BLOCKED\n",
              rounds, permit_left, woke_blocked, woke_after_wait);
}

TEST(argobots_executor, bad_configurations_throw) {
  executor_options o;
  o.carriers = 0;
  EXPECT_THROW(run_lts_on_argobots(o, 1, [](unsigned) {}), executor_error);
  EXPECT_THROW(spawn_and_join_on_argobots(1, [](unsigned) {}), executor_error);
}

TEST(argobots_executor, every_lt_runs_once_on_the_requested_streams_both_pool_modes) {
  watchdog dog("executor", 60s);
  for (const bool shared : {false, true}) {
    executor_options o;
    o.carriers = 2;
    o.shared_pool = shared;
    std::vector<std::atomic<unsigned>> runs(16);
    std::atomic<unsigned> spawned{0};
    std::mutex carriers_guard;
    std::set<unsigned> carriers;
    run_lts_on_argobots(o, 16, [&](unsigned i) {
      runs[i].fetch_add(1);
      {
        std::lock_guard<std::mutex> g(carriers_guard);
        carriers.insert(R::carrier());
      }
      spawn_and_join_on_argobots(3, [&](unsigned) { spawned.fetch_add(1); });
    });
    for (auto& n : runs) EXPECT_EQ(n.load(), 1u) << "shared=" << shared;
    EXPECT_EQ(spawned.load(), 48u) << "shared=" << shared;
    if (!shared) {
      EXPECT_EQ(carriers.size(), 2u) << "per-stream pools: LT i runs on stream i % 2";
    }
    EXPECT_LE(carriers.size(), 2u) << "shared=" << shared;
  }
}

TEST(argobots_executor, exception_in_an_lt_is_rethrown_after_all_finished) {
  std::atomic<unsigned> finished{0};
  executor_options o;
  o.carriers = 2;
  EXPECT_THROW(run_lts_on_argobots(o, 4,
                                   [&](unsigned i) {
                                     finished.fetch_add(1);
                                     if (i == 2) throw std::runtime_error("boom");
                                   }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 4u);
}

}  // namespace fibersync::test
