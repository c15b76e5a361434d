// registry.cpp: the process-wide runtime registry.
#include "fibersync/bench/registry.hpp"

#include <algorithm>

namespace fibersync::bench {

registry& registry::instance() {
  static registry* reg = [] {
    auto* r = new registry;
    register_os_threads(*r);
#if FIBERSYNC_BENCH_WITH_BOOST_FIBER
    register_boost_fiber(*r);
#endif
#if FIBERSYNC_BENCH_WITH_NATIVE
    register_native(*r);
#endif
#if FIBERSYNC_BENCH_WITH_ARGOBOTS
    register_argobots(*r);
#endif
    return r;
  }();
  return *reg;
}

void registry::add(std::unique_ptr<runtime_driver> driver) {
  auto it = std::find_if(drivers_.begin(), drivers_.end(), [&](const auto& d) { return d->name() == driver->name(); });
  if (it != drivers_.end()) *it = std::move(driver);
  else drivers_.push_back(std::move(driver));
}

const runtime_driver* registry::find(std::string_view name) const {
  for (const auto& d : drivers_)
    if (d->name() == name) return d.get();
  return nullptr;
}

std::vector<const runtime_driver*> registry::drivers() const {
  std::vector<const runtime_driver*> v;
  for (const auto& d : drivers_) v.push_back(d.get());
  return v;
}

}  // namespace fibersync::bench
