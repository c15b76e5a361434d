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
// of a load that decides a store to it. Where another core has just read
// the line (a waiter polling a lock word), the load alone finds it shared,
// and the store after it then needs a second round trip to take it; with
// the hint the core asks once. Only a hint: it neither faults nor orders
// anything. x86-64: `prefetchw` (GCC's __builtin_prefetch emits it only
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
