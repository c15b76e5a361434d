// Compile-time contract of DESIGN.md section 3: every mutex x every in-tree
// runtime is default-constructible, constructible from a wait_policy,
// non-copyable, non-movable and Lockable; every adapter models `runtime`.
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/counting.hpp>
#include <gtest/gtest.h>

#include <concepts>
#include <mutex>
#include <type_traits>
#ifdef FIBERSYNC_TEST_BOOST_FIBER
#include <fibersync/runtime/boost_fiber.hpp>
#endif
#ifdef FIBERSYNC_TEST_ARGOBOTS
#include <fibersync/runtime/argobots.hpp>
#endif

namespace fibersync::test {
namespace {

template <class M>
concept lockable = requires(M m) {
  m.lock();
  { m.try_lock() } -> std::same_as<bool>;
  m.unlock();
};

template <class M>
constexpr bool meets_contract() {
  return lockable<M> && std::is_default_constructible_v<M> && std::is_constructible_v<M, const wait_policy&> &&
         !std::is_copy_constructible_v<M> && !std::is_copy_assignable_v<M> && !std::is_move_constructible_v<M>;
}

template <class R>
constexpr bool all_mutexes_meet_contract() {
  static_assert(runtime<R>);
  static_assert(meets_contract<ttas_mutex<R>>());
  static_assert(meets_contract<ticket_mutex<R>>());
  static_assert(meets_contract<mcs_mutex<R>>());
  static_assert(meets_contract<clh_mutex<R>>());
  static_assert(meets_contract<cna_mutex<R>>());
  static_assert(meets_contract<numa_mcs_mutex<R>>());
  static_assert(meets_contract<hmcs_mutex<R>>());
  static_assert(meets_contract<adaptive_mutex<R>>());
  return true;
}

static_assert(all_mutexes_meet_contract<os_thread_runtime>());
static_assert(all_mutexes_meet_contract<counting_runtime<os_thread_runtime>>());
#ifdef FIBERSYNC_TEST_BOOST_FIBER
static_assert(all_mutexes_meet_contract<boost_fiber_runtime>());
#endif
#ifdef FIBERSYNC_TEST_ARGOBOTS
static_assert(all_mutexes_meet_contract<argobots_runtime>());
#endif

TEST(contract, std_lock_guard_and_scoped_lock_instantiate_and_work) {
  ttas_mutex<os_thread_runtime> a;
  mcs_mutex<os_thread_runtime> b;
  clh_mutex<os_thread_runtime> c;
  ticket_mutex<os_thread_runtime> d;
  {
    std::scoped_lock all(a, b, c, d);
    EXPECT_FALSE(a.try_lock());
    EXPECT_FALSE(b.try_lock());
    EXPECT_FALSE(c.try_lock());
    EXPECT_FALSE(d.try_lock());
  }
  std::lock_guard<mcs_mutex<os_thread_runtime>> g(b);
  EXPECT_TRUE(a.try_lock());
  a.unlock();
}

}  // namespace
}  // namespace fibersync::test
