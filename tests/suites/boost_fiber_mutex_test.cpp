// Every mutex on boost_fiber_runtime. Each test runs in its own process
// (ctest entry per test): Boost.Fiber's work_stealing is once per process.
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/boost_fiber.hpp>

#include "suites/mutex_suite.hpp"

namespace fibersync::test {
namespace {
using R = boost_fiber_runtime;
using all_mutexes = ::testing::Types<mutex_case<ttas_mutex, R>, mutex_case<ticket_mutex, R>,
                                     mutex_case<mcs_mutex, R>, mutex_case<clh_mutex, R>,
                                     mutex_case<adaptive_mutex, R>>;
using fifo_mutexes = ::testing::Types<mutex_case<ticket_mutex, R>, mutex_case<mcs_mutex, R>, mutex_case<clh_mutex, R>>;
}  // namespace
INSTANTIATE_TYPED_TEST_SUITE_P(boost_fiber, mutex_suite, all_mutexes);
INSTANTIATE_TYPED_TEST_SUITE_P(boost_fiber, fifo_suite, fifo_mutexes);
}  // namespace fibersync::test
