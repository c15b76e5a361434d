// cache_line.hpp: the cache-line size used for padding against false sharing,
// and a hint to fetch a line for writing.
#pragma once

#include <cstddef>

namespace fibersync::detail {

// 64 bytes on x86-64 and most Arm cores. std::hardware_destructive_interference_size
// is avoided because GCC warns that its value may differ between translation
// units compiled with different -mtune flags (an ABI hazard for a header-only
// library); adjacent-line prefetch makes 128 the safer choice on Intel.
inline constexpr std::size_t cache_line_size = 128;

// Asks the core to fetch the line holding p for writing (exclusive), ahead
// of a load that decides a store to it: where another core holds a copy
// (a waiter polling a lock word), the load can be served from a shared
// copy, and the store then has to ask for the line again; the hint asks
// for it in the state the store needs. Only a hint: it neither faults nor
// orders anything. x86-64: `prefetchw` (GCC's __builtin_prefetch emits it only
// with -mprfchw; Intel cores before Broadwell, which do not report it, run
// it as a no-op). Elsewhere the builtin (Arm: `prfm pstl1keep`).
inline void prefetch_for_write(const void* p) noexcept {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

}  // namespace fibersync::detail
