// cpu_relax.hpp: the spin-loop hint used by the spin phase of every waiter.
#pragma once

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

}  // namespace fibersync
