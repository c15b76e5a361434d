// fibersync.hpp: every fibersync mutex and the OS-thread runtime adapter.
//
// Fiber runtimes are brought in by their own adapter headers, for example
// <fibersync/runtime/boost_fiber.hpp>, so that a program pays only for the
// runtimes it uses.
#pragma once

#include "fibersync/runtime/concept.hpp"
#include "fibersync/runtime/os_thread.hpp"
#include "fibersync/topology/topology.hpp"
#include "fibersync/wait/handover.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

#include "fibersync/mutex/adaptive.hpp"
#include "fibersync/mutex/clh.hpp"
#include "fibersync/mutex/cna.hpp"
#include "fibersync/mutex/hmcs.hpp"
#include "fibersync/mutex/mcs.hpp"
#include "fibersync/mutex/numa_mcs.hpp"
#include "fibersync/mutex/ticket.hpp"
#include "fibersync/mutex/ttas.hpp"
