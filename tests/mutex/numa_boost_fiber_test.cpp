// The NUMA locks on boost_fiber_runtime, under the topologies listed in
// tests/CMakeLists.txt.
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/boost_fiber.hpp>

#include "suites/mutex_suite.hpp"

namespace fibersync::test {
namespace {
using R = boost_fiber_runtime;
using numa_mutexes = ::testing::Types<mutex_case<cna_mutex, R>, mutex_case<numa_mcs_mutex, R>,
                                      mutex_case<hmcs_mutex, R>>;
}  // namespace
INSTANTIATE_TYPED_TEST_SUITE_P(boost_fiber, mutex_suite, numa_mutexes);
INSTANTIATE_TYPED_TEST_SUITE_P(boost_fiber, fifo_suite, numa_mutexes);
}  // namespace fibersync::test
