// Every mutex on os_thread_runtime (also built under TSan and ASan).
#include <fibersync/fibersync.hpp>

#include "suites/mutex_suite.hpp"

namespace fibersync::test {
namespace {
using R = os_thread_runtime;
using all_mutexes = ::testing::Types<mutex_case<ttas_mutex, R>, mutex_case<ticket_mutex, R>,
                                     mutex_case<mcs_mutex, R>, mutex_case<clh_mutex, R>,
                                     mutex_case<adaptive_mutex, R>>;
using fifo_mutexes = ::testing::Types<mutex_case<ticket_mutex, R>, mutex_case<mcs_mutex, R>, mutex_case<clh_mutex, R>>;
}  // namespace
INSTANTIATE_TYPED_TEST_SUITE_P(os_threads, mutex_suite, all_mutexes);
INSTANTIATE_TYPED_TEST_SUITE_P(os_threads, fifo_suite, fifo_mutexes);
}  // namespace fibersync::test
