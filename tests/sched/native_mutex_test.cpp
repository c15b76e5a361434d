// Every mutex and the permit suite on native_runtime (fibersync::sched).
#include <fibersync/fibersync.hpp>

#include "sched/native_support.hpp"
#include "runtime/permit_suite.hpp"
#include "suites/mutex_suite.hpp"

namespace fibersync::test {
namespace {
using R = native_runtime;
using all_mutexes = ::testing::Types<mutex_case<ttas_mutex, R>, mutex_case<ticket_mutex, R>,
                                     mutex_case<mcs_mutex, R>, mutex_case<clh_mutex, R>,
                                     mutex_case<adaptive_mutex, R>>;
using fifo_mutexes = ::testing::Types<mutex_case<ticket_mutex, R>, mutex_case<mcs_mutex, R>, mutex_case<clh_mutex, R>>;
}  // namespace
INSTANTIATE_TYPED_TEST_SUITE_P(native, mutex_suite, all_mutexes);
INSTANTIATE_TYPED_TEST_SUITE_P(native, fifo_suite, fifo_mutexes);
INSTANTIATE_TYPED_TEST_SUITE_P(native, permit_suite, ::testing::Types<native_runtime>);
}  // namespace fibersync::test
