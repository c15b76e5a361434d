// adaptive_access.hpp: the tests' way into adaptive_mutex's counted hold.
//
// A hold begun on an idle adaptive_mutex is a fast one: its unlock() is a
// store, and a waiter that arrives during it competes uncounted and never
// parks (docs/ADAPTIVE.md, finding 27). Tests of what waiters do while
// counted (park, be woken, be handed the lock) open their scenario with a
// counted hold instead, the kind every hold begun past waiters is.
#pragma once

#include <fibersync/mutex/adaptive.hpp>

namespace fibersync::detail {
struct adaptive_mutex_access {
  template <class M>
  static void lock_not_fast(M& m) {
    m.lock_not_fast();
  }
  // Uncontended acquisitions after which a mutex forgets its sampled holds.
  template <class M>
  static constexpr auto forget_holds_after = M::forget_holds_after;
  // Carrier slots of the awake counts (where idle carriers do not steal).
  template <class M>
  static constexpr unsigned awake_carrier_slots = M::awake_counts::carrier_slots;
};
}  // namespace fibersync::detail

namespace fibersync::test {
// m.lock(), as a counted hold where m is an adaptive_mutex.
template <class M>
void lock_counted(M& m) {
  m.lock();
}
template <runtime R>
void lock_counted(adaptive_mutex<R>& m) {
  detail::adaptive_mutex_access::lock_not_fast(m);
}
// lock_counted(m) if `counted`, else m.lock() (on an idle adaptive_mutex a
// fast hold).
template <class M>
void lock_counted_if(bool counted, M& m) {
  if (counted) {
    lock_counted(m);
  } else {
    m.lock();
  }
}
}  // namespace fibersync::test
