// poison.hpp: memory that must no longer be touched. poison_memory() marks
// it for AddressSanitizer, which then reports every later read or write;
// elsewhere it does nothing, and watched_storage's fill pattern shows late
// writes instead.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <new>

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

// Room for one T that a test destroys in place and then watches: destroy()
// fills the bytes with a pattern and poisons them; untouched() says whether
// anything wrote into them since (call it once nothing may still run).
template <class T>
struct watched_storage {
  static constexpr unsigned char fill = 0xA5;
  alignas(T) unsigned char bytes[sizeof(T)];

  template <class... Args>
  T& construct(const Args&... args) {
    return *new (bytes) T(args...);
  }
  T& object() noexcept { return *std::launder(reinterpret_cast<T*>(bytes)); }
  void destroy() noexcept {
    object().~T();
    std::memset(bytes, fill, sizeof bytes);
    poison_memory(bytes, sizeof bytes);
  }
  bool untouched() noexcept {
    unpoison_memory(bytes, sizeof bytes);
    return std::all_of(std::begin(bytes), std::end(bytes), [](unsigned char b) { return b == fill; });
  }
};

}  // namespace fibersync::test
