// event.cpp: the architecture-neutral front end of sched::event.
#include "events.hpp"

#include <sched.h>

namespace fibersync::sched {

std::string_view to_string(arch a) noexcept {
  switch (a) {
    case arch::a0: return "A0";
    case arch::a1: return "A1";
    case arch::a2: return "A2";
  }
  return "?";
}

bool parse_arch(std::string_view s, arch& out) noexcept {
  if (s == "A0" || s == "a0") { out = arch::a0; return true; }
  if (s == "A1" || s == "a1") { out = arch::a1; return true; }
  if (s == "A2" || s == "a2") { out = arch::a2; return true; }
  return false;
}

event::event(scheduler& s, arch a, bool initially_set) : arch_(a) {
  switch (a) {
    case arch::a0: impl_ = detail::make_event_a0(s.impl()); break;
    case arch::a1: impl_ = detail::make_event_a1(s.impl()); break;
    case arch::a2: impl_ = detail::make_event_a2(s.impl()); break;
  }
  if (initially_set) impl_->set();
}

event::~event() = default;

void event::set() { impl_->set(); }
void event::reset() { impl_->reset(); }
bool event::is_set() const noexcept { return impl_->is_set(); }

void event::wait() {
  if (!this_thread::in_uthread()) {  // a plain OS thread: poll
    while (!impl_->is_set()) ::sched_yield();
    return;
  }
  impl_->wait();
}

}  // namespace fibersync::sched
