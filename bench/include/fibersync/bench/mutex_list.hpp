// mutex_list.hpp: every fibersync mutex the harness knows, one line each.
//
// Adding a mutex to every runtime = one line in add_fibersync_mutexes(); to a
// single runtime = one add_mutex<>() line in its registration file.
#pragma once

#include "fibersync/bench/driver.hpp"
#include "fibersync/fibersync.hpp"
#include "fibersync/bench/trace.hpp"

namespace fibersync::bench {

template <class Traits>
void add_fibersync_mutexes(basic_driver<Traits>& d) {
  // counting_runtime<R> (yields/suspends per acquisition) plus --trace records.
  using C = trace::traced_runtime<Traits>;
  d.template add_mutex<ttas_mutex<C>>("ttas", true);
  d.template add_mutex<ticket_mutex<C>>("ticket", true);
  d.template add_mutex<mcs_mutex<C>>("mcs", true);
  d.template add_mutex<clh_mutex<C>>("clh", true);
  d.template add_mutex<cna_mutex<C>>("cna", true);
  d.template add_mutex<numa_mcs_mutex<C>>("numa_mcs", true);
  d.template add_mutex<hmcs_mutex<C>>("hmcs", true);
  d.template add_mutex<adaptive_mutex<C>>("adaptive", true);
}

}  // namespace fibersync::bench
