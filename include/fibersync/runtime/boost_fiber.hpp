// boost_fiber.hpp: boost_fiber_runtime, the adapter for Boost.Fiber.
//
//   yield      boost::this_fiber::yield()
//   suspend    park on a per-fiber permit: under the permit's spinlock, take a
//              pending resume or mark the fiber sleeping and
//              context::suspend(lock), which releases the lock only after the
//              fiber has left its carrier
//   resume     under the same spinlock, either schedule the sleeping context
//              (context::schedule works across carriers and from plain OS
//              threads) or leave a pending resume for the next suspend
//   carrier    index of the OS thread, given on first use
// Why not context::suspend() alone: a resume racing with a suspend that has
// not switched away yet would be lost or would schedule a running context
// (Boost.Fiber issue 109). The lock handed to suspend() closes that window.
// The permit lives in a fiber_specific_ptr, created on the fiber's first
// current() and freed when the fiber ends; a handle is valid while its fiber
// is parked, which is all the hand-over handshake needs.
#pragma once

#include <boost/fiber/context.hpp>
#include <boost/fiber/fss.hpp>
#include <boost/fiber/operations.hpp>

#include <atomic>
#include <mutex>
#include <string_view>

#include "fibersync/detail/carrier_local.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/wait_policy.hpp"

namespace fibersync {

struct boost_fiber_runtime {
  struct permit {
    boost::fibers::detail::spinlock lock;  // guards both flags below
    boost::fibers::context* context;       // the fiber this permit belongs to
    bool pending = false;                  // a resume arrived before the suspend
    bool sleeping = false;                 // the fiber is parked in suspend()
  };
  using handle = permit*;

  static constexpr std::string_view name = "boost_fiber";

  // A waiting fiber holds its carrier: see fiber_wait_policy().
  static constexpr wait_policy default_wait_policy() noexcept {
    return fiber_wait_policy();
  }
  // work_stealing steals only while a carrier is awake; an idle carrier
  // sleeps (idle_suspend) until a fiber is scheduled onto it, not when
  // another carrier's ready queue grows.
  static constexpr bool idle_carriers_steal = false;
  // But an awake carrier with nothing of its own to run steals, and the
  // fiber it stole stays with it (detached from the victim's scheduler).
  static constexpr bool busy_carriers_steal = true;

  static handle current() { return self(); }

  static void yield() { boost::this_fiber::yield(); }

  static void suspend() {
    permit* p = self();
    boost::fibers::detail::spinlock_lock lk{p->lock};
    if (p->pending) {
      p->pending = false;
      return;
    }
    p->sleeping = true;
    p->context->suspend(lk);  // releases lk once this fiber is off its carrier
  }

  static void resume(handle h) {
    boost::fibers::detail::spinlock_lock lk{h->lock};
    if (!h->sleeping) {
      h->pending = true;
      return;
    }
    h->sleeping = false;
    boost::fibers::context* target = h->context;
    lk.unlock();
    // The target stays parked (and alive) until this schedule(): nobody else
    // can see it sleeping any more.
    boost::fibers::context::active()->schedule(target);
  }

  static unsigned carrier() noexcept { return carrier_index(); }

 private:
  FIBERSYNC_CARRIER_LOCAL static permit* self() {
    static boost::fibers::fiber_specific_ptr<permit> slot;
    permit* p = slot.get();
    if (p == nullptr) {
      p = new permit{};
      p->context = boost::fibers::context::active();
      slot.reset(p);
    }
    return p;
  }

  // Not inlined: a fiber can migrate to another carrier across any yield, and
  // an inlined thread_local address could be kept from before (DESIGN.md 7).
  FIBERSYNC_CARRIER_LOCAL static unsigned carrier_index() noexcept {
    static std::atomic<unsigned> next{0};
    thread_local const unsigned index = next.fetch_add(1, std::memory_order_relaxed);
    return index;
  }
};

static_assert(runtime<boost_fiber_runtime>);

}  // namespace fibersync
