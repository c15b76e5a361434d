// events.hpp: factories of the three event architectures (private).
#pragma once

#include <memory>

#include "internal.hpp"

namespace fibersync::sched::detail {
std::unique_ptr<event_impl> make_event_a0(sched_impl& s);
std::unique_ptr<event_impl> make_event_a1(sched_impl& s);
std::unique_ptr<event_impl> make_event_a2(sched_impl& s);

// A0 and A1 keep the state in one word: bit 0 = set, bits 1.. = generation,
// the number of unset->set transitions. A waiter records the generation it
// saw; it may go once the generation moved on (a set() happened after it
// decided to block), even if a reset() followed.
inline constexpr std::uint64_t k_set_bit = 1;
inline std::uint64_t generation(std::uint64_t w) noexcept { return w >> 1; }
}  // namespace fibersync::sched::detail
