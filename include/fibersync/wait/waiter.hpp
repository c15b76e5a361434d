// waiter.hpp: the single code path through which every fibersync mutex waits.
//
// A `waiter` counts the failed checks of one wait and decides what the next
// failure costs: a capped exponential spin, a yield every `yield_every`
// failures, and from `suspend_after` failures on the answer `advance`, which
// tells a queue lock to park the LT (wait/handover.hpp does that part). A lock
// whose waiters wait only on a shared word (TTAS, ticket) never suspends:
// nobody would know whom to resume, so it calls `wait_until(...,
// may_suspend=false)`. adaptive_mutex's waiters compete on its word and, at
// `advance`, queue a node of their own and park there.
#pragma once

#include <algorithm>
#include <cstdint>

#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/cpu_relax.hpp"
#include "fibersync/wait/wait_policy.hpp"

namespace fibersync {

enum class wait_result {
  acquired,  // the awaited condition holds
  advance,   // suspension threshold reached: the caller should park
};

template <runtime R>
class waiter {
 public:
  explicit constexpr waiter(const wait_policy& policy) noexcept : policy_(policy) {}

  // The most pauses one failed check spins, whatever the policy asks.
  static constexpr std::uint32_t longest_backoff_shift = 16;
  static constexpr std::uint32_t longest_backoff_cap = std::uint32_t{1} << longest_backoff_shift;
  static constexpr std::uint32_t longest_backoff(const wait_policy& policy) noexcept {
    return std::min(policy.max_backoff, longest_backoff_cap);
  }

  // Records one failed check and pays for it with a spin or a yield.
  // Returns true once the caller should stop spinning and suspend.
  bool on_failure(bool may_suspend) noexcept {
    ++failures_;
    if (may_suspend && policy_.suspend_after != 0 && failures_ >= policy_.suspend_after) {
      return true;
    }
    if (policy_.yield_every != 0 && failures_ % policy_.yield_every == 0) {
      R::yield();
      return false;
    }
    const std::uint32_t shift = std::min(failures_, longest_backoff_shift);
    const std::uint32_t pauses = std::min(std::uint32_t{1} << shift, longest_backoff(policy_));
    for (std::uint32_t i = 0; i < pauses; ++i) (cpu_relax)();
    return false;
  }

  // Waits until done() holds. Without may_suspend it never returns `advance`.
  template <class Done>
  wait_result wait_until(Done&& done, bool may_suspend) noexcept {
    while (!done()) {
      if (on_failure(may_suspend)) return wait_result::advance;
    }
    return wait_result::acquired;
  }

  std::uint32_t failures() const noexcept { return failures_; }

 private:
  wait_policy policy_;
  std::uint32_t failures_ = 0;
};

// Spin-then-yield wait for a condition on shared state; never suspends.
template <runtime R, class Done>
void spin_yield_until(const wait_policy& policy, Done&& done) noexcept {
  waiter<R> w(policy);
  w.wait_until(static_cast<Done&&>(done), /*may_suspend=*/false);
}

}  // namespace fibersync
