// Every mutex on argobots_runtime (ULTs on execution streams). ctest runs it
// twice: one pool per execution stream, and one shared pool.
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/argobots.hpp>

#include "suites/mutex_suite.hpp"

namespace fibersync::test {
namespace {
using R = argobots_runtime;
using all_mutexes = ::testing::Types<mutex_case<ttas_mutex, R>, mutex_case<ticket_mutex, R>,
                                     mutex_case<mcs_mutex, R>, mutex_case<clh_mutex, R>,
                                     mutex_case<adaptive_mutex, R>>;
using fifo_mutexes = ::testing::Types<mutex_case<ticket_mutex, R>, mutex_case<mcs_mutex, R>, mutex_case<clh_mutex, R>>;
}  // namespace
INSTANTIATE_TYPED_TEST_SUITE_P(argobots, mutex_suite, all_mutexes);
INSTANTIATE_TYPED_TEST_SUITE_P(argobots, fifo_suite, fifo_mutexes);
}  // namespace fibersync::test
