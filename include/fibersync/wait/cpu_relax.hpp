// cpu_relax.hpp: the spin-loop hint used by the spin phase of every waiter.
#pragma once

#include <algorithm>
#include <chrono>

namespace fibersync {

// One pause of the spin phase: tells the core that this is a busy-wait loop
// (saves power, frees execution resources for the sibling hyper-thread and
// avoids the memory-order mis-speculation penalty when the loop exits).
// The name is parenthesised here and at every call because Boost.Fiber 1.74
// defines a function-like macro `cpu_relax()` (boost/fiber/detail/cpu_relax.hpp);
// `(cpu_relax)()` is never expanded by it, whatever the include order.
inline void(cpu_relax)() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  // `isb` stalls for tens of cycles, closer to x86 `pause` than `yield`, which
  // is a no-op on most Arm cores.
  asm volatile("isb" ::: "memory");
#else
  asm volatile("" ::: "memory");
#endif
}

// How long one (cpu_relax)() lasts on this machine, measured once per
// process at the first call (3 batches of 512 pauses: 20-110 us). x86
// `pause` takes from a few to ~140 cycles depending on the generation
// (13 ns on the 2-core Xeon of docs/BENCHMARKS.md session 22, 25 ns on the
// EPYC of sessions 1-20), so a spin meant to last some time cannot be a
// fixed count of pauses. The shortest batch counts: a preempted one only
// reads longer. At least 1 ns: a clock too coarse to see a batch reads 0,
// and a spin timed with it then counts 1 ns per pause (it lasts longer
// than meant, by the pause's true length, but ends).
inline std::chrono::duration<double, std::nano> pause_duration() noexcept {
  static const double ns_per_pause = [] {
    constexpr int batch = 512;
    double shortest = 0;
    for (int round = 0; round < 3; ++round) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i) (cpu_relax)();
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      if (round == 0 || ns < shortest) shortest = ns;
    }
    return std::max(shortest / batch, 1.0);
  }();
  return std::chrono::duration<double, std::nano>(ns_per_pause);
}

}  // namespace fibersync
