#include <fibersync/runtime/os_thread.hpp>

#include "runtime/permit_suite.hpp"

namespace fibersync::test {
INSTANTIATE_TYPED_TEST_SUITE_P(os_threads, permit_suite, ::testing::Types<os_thread_runtime>);
}
