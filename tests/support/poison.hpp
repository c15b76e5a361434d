// poison.hpp: mark memory that must no longer be touched. Under
// AddressSanitizer every later read or write of it is reported; elsewhere
// these do nothing (tests check a fill pattern instead).
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace fibersync::test {

inline void poison_memory([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) noexcept {
#if defined(__SANITIZE_ADDRESS__)
  __asan_poison_memory_region(p, n);
#endif
}

inline void unpoison_memory([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) noexcept {
#if defined(__SANITIZE_ADDRESS__)
  __asan_unpoison_memory_region(p, n);
#endif
}

}  // namespace fibersync::test
