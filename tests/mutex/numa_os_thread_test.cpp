// The NUMA locks on os_thread_runtime. ctest runs this binary under several
// FIBERSYNC_TOPOLOGY values (tests/CMakeLists.txt): flat (where both locks
// must also be FIFO) and a virtual 2-node machine.
#include <fibersync/fibersync.hpp>

#include "suites/mutex_suite.hpp"

namespace fibersync::test {
namespace {
using R = os_thread_runtime;
using numa_mutexes = ::testing::Types<mutex_case<cna_mutex, R>, mutex_case<numa_mcs_mutex, R>,
                                      mutex_case<hmcs_mutex, R>>;
}  // namespace
INSTANTIATE_TYPED_TEST_SUITE_P(os_threads, mutex_suite, numa_mutexes);
INSTANTIATE_TYPED_TEST_SUITE_P(os_threads, fifo_suite, numa_mutexes);
}  // namespace fibersync::test
