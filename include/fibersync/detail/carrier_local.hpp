// carrier_local.hpp: FIBERSYNC_CARRIER_LOCAL, the attribute of every function
// that returns carrier-local (thread_local) state.
//
// An LT can migrate to another carrier across any yield or suspension. If a
// caller inlined the thread_local access, or if the compiler proved the
// accessor `const`/`pure` and reused one call's result after a yield, the LT
// would go on using the *previous* carrier's state: two carriers would then
// race on one free list or counter (DESIGN.md section 7). `noinline` alone
// is not enough: GCC still infers `const` for a noinline function through
// IPA and merges two calls around an inlined yield. `noipa` forbids both.
// (Seen here: MCS on Boost.Fiber lost a hand-over once in ~5 runs of the
// lost-wake-up stress test until the node pool's accessor had it.)
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#define FIBERSYNC_CARRIER_LOCAL [[gnu::noinline, gnu::noipa]]
#else
#define FIBERSYNC_CARRIER_LOCAL [[gnu::noinline]] __attribute__((optnone))
#endif
