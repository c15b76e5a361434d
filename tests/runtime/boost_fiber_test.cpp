#include <fibersync/runtime/boost_fiber.hpp>

#include "runtime/permit_suite.hpp"

namespace fibersync::test {
INSTANTIATE_TYPED_TEST_SUITE_P(boost_fiber, permit_suite, ::testing::Types<boost_fiber_runtime>);
}
