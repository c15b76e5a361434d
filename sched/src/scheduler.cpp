// scheduler.cpp: carriers, ready queues, stealing, switching, permits, join.
// See scheduler.hpp for the design overview and the permit state machine.
#include "internal.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cassert>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fibersync::sched {

namespace detail {

namespace {
thread_local carrier* tls_carrier = nullptr;
thread_local uthread* tls_current = nullptr;
}  // namespace

carrier* current_carrier() noexcept { return tls_carrier; }
uthread* current_uthread() noexcept { return tls_current; }

long futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, long timeout_ns) {
  timespec ts{timeout_ns / 1000000000L, timeout_ns % 1000000000L};
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected,
                 timeout_ns > 0 ? &ts : nullptr, nullptr, 0);
}
void futex_wake(std::atomic<std::uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

void uqueue::push(uthread* t) noexcept {
  t->next = nullptr;
  if (tail == nullptr) {
    head = tail = t;
  } else {
    tail->next = t;
    tail = t;
  }
  ++size;
}
uthread* uqueue::pop() noexcept {
  uthread* t = head;
  if (t != nullptr) {
    head = t->next;
    if (head == nullptr) tail = nullptr;
    t->next = nullptr;
    --size;
  }
  return t;
}

void switch_out(action what) {
  uthread* t = current_uthread();
  carrier* c = current_carrier();
  t->pending = what;
  t->stack_hint = static_cast<const char*>(__builtin_frame_address(0));
  boost::context::fiber back = std::move(c->main).resume();
  // Possibly another carrier now: read the accessor again (DESIGN.md 7).
  current_carrier()->main = std::move(back);
}

boost::context::stack_context pooled_stack::allocate() {
  s_->stack_lock.lock();
  if (!s_->stack_pool.empty()) {
    boost::context::stack_context sctx = s_->stack_pool.back();
    s_->stack_pool.pop_back();
    s_->stack_lock.unlock();
    return sctx;
  }
  s_->stack_lock.unlock();
  return boost::context::protected_fixedsize_stack(size_).allocate();
}

void pooled_stack::deallocate(boost::context::stack_context& sctx) noexcept {
  s_->stack_lock.lock();
  try {
    s_->stack_pool.push_back(sctx);
  } catch (...) {  // no memory for the pool entry: unmap instead
    s_->stack_lock.unlock();
    boost::context::protected_fixedsize_stack(size_).deallocate(sctx);
    return;
  }
  s_->stack_lock.unlock();
}

sched_impl::~sched_impl() {
  for (auto& sctx : stack_pool) boost::context::protected_fixedsize_stack(options.stack_size).deallocate(sctx);
}

// by_yield: t is the uthread c just ran, which c runs again at once if it
// is alone; thieves wait before taking it and no sleeping carrier is woken
// for it (see find_work).
void sched_impl::push_ready(carrier& c, uthread* t, bool by_yield) {
  c.lock.lock();
  c.ready.push(t);
  const std::size_t size = c.ready.size;
  c.ready_size.store(size, std::memory_order_relaxed);
  c.last_push_was_yield.store(by_yield, std::memory_order_relaxed);
  c.lock.unlock();
  // seq_cst fence: Dekker pair with the fence in run_carrier's sleep path
  // (sleeping=true; fence; re-check queues).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (c.sleeping.load(std::memory_order_relaxed)) {
    wake(c);
  } else if ((!by_yield || size > 1) && sleepers.load(std::memory_order_relaxed) != 0 && options.stealing) {
    wake_any();
  }
}

void sched_impl::push_ready_batch(carrier& c, uqueue q) {
  if (q.empty()) return;
  c.lock.lock();
  if (c.ready.empty()) {
    c.ready = q;
  } else {
    c.ready.tail->next = q.head;
    c.ready.tail = q.tail;
    c.ready.size += q.size;
  }
  c.ready_size.store(c.ready.size, std::memory_order_relaxed);
  c.last_push_was_yield.store(false, std::memory_order_relaxed);
  c.lock.unlock();
  std::atomic_thread_fence(std::memory_order_seq_cst);  // as in push_ready
  if (c.sleeping.load(std::memory_order_relaxed)) {
    wake(c);
  } else if (sleepers.load(std::memory_order_relaxed) != 0 && options.stealing) {
    wake_any();
  }
}

void sched_impl::make_ready(uthread* t) { push_ready(*t->home, t); }

void sched_impl::wake(carrier& c) {
  c.wake_seq.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(&c.wake_seq, 1);
}

void sched_impl::wake_any() {
  for (auto& c : carriers) {
    if (c->sleeping.load(std::memory_order_relaxed)) {
      wake(*c);
      return;
    }
  }
}

void sched_impl::drain_completions(carrier& c) {
  std::uint64_t v;
  // The kernel side of A0: consume the notifications the setters wrote.
  [[maybe_unused]] ssize_t n = ::read(completion_fd, &v, sizeof v);
  uqueue taken;
  {
    std::lock_guard<std::mutex> g(completion_mutex);
    taken = completions;
    completions = uqueue{};
    completions_pending.store(false, std::memory_order_relaxed);
  }
  push_ready_batch(c, taken);
}

void sched_impl::scan_blocked(carrier& c) {
  uqueue mine;
  blocked_lock.lock();
  uthread* prev = nullptr;
  for (uthread* t = blocked.head; t != nullptr;) {
    uthread* nx = t->next;
    if (t->home == &c && t->blocking_on->released_or_register(c, t->block_gen)) {
      if (prev == nullptr) blocked.head = nx; else prev->next = nx;
      if (blocked.tail == t) blocked.tail = prev;
      --blocked.size;
      mine.push(t);
    } else {
      prev = t;
    }
    t = nx;
  }
  blocked_lock.unlock();
  push_ready_batch(c, mine);
}

// Called with the ready queue locked, so the queued uthreads cannot run or
// finish meanwhile. With thousands of uthreads, switching into one is
// dominated by cache and TLB misses on its stack and record; while the
// uthread just popped runs, bring in the stack of the one that runs after
// it and the record of the one after that (this record was prefetched at
// the previous pop, so reading it here is usually a hit).
static void prefetch_next(const uthread* next) noexcept {
  if (next == nullptr) return;
  if (next->next != nullptr) __builtin_prefetch(next->next);
  if (const char* sp = next->stack_hint) {
    for (int off = -256; off < 320; off += 64) __builtin_prefetch(sp + off);
  }
}

uthread* sched_impl::find_work(carrier& c) {
  // seq_cst: the scan that follows may rely on it (event_a1: released_or_register).
  if (c.scan_requested.load(std::memory_order_relaxed) && c.scan_requested.exchange(false, std::memory_order_seq_cst)) {
    scan_blocked(c);
  }
  if (completions_pending.load(std::memory_order_relaxed)) drain_completions(c);
  if (c.ready_size.load(std::memory_order_relaxed) != 0) {
    c.lock.lock();
    uthread* t = c.ready.pop();
    c.ready_size.store(c.ready.size, std::memory_order_relaxed);
    prefetch_next(c.ready.head);
    c.lock.unlock();
    if (t != nullptr) return t;
  }
  if (!options.stealing) return nullptr;
  const std::size_t n = carriers.size();
  for (std::size_t i = 1; i < n; ++i) {
    carrier& v = *carriers[(c.index + i) % n];
    const std::size_t size = v.ready_size.load(std::memory_order_relaxed);
    // A lone ready uthread that was pushed by a yield is, most often, the
    // one that yielded: its carrier is on its way back to its loop and takes
    // it within ~100 ns, with its cache lines still there. Take it only once
    // we have found that carrier's queue non-empty steal_patience looks in a
    // row (a few microseconds): then the carrier is busy with a uthread that
    // does not yield, or takes turns between several. Go's scheduler waits
    // ~3 us before it steals a busy P's runnext for the same reason.
    // Stealing at once moved a lone yielding uthread to the other core at
    // 37-52% of its yields (docs/sched.md). A lone uthread
    // that was resumed (a lock handed to it, say) is taken at once: its
    // carrier may be busy for long.
    std::uint32_t& looks = c.nonempty_looks[v.index];
    if (size == 0) {
      looks = 0;
      continue;
    }
    if (size == 1 && v.last_push_was_yield.load(std::memory_order_relaxed) && ++looks < steal_patience) continue;
    looks = 0;
    if (!v.lock.try_lock()) continue;
    uthread* t = v.ready.pop();
    v.ready_size.store(v.ready.size, std::memory_order_relaxed);
    v.lock.unlock();
    if (t != nullptr) {
      steals.fetch_add(1, std::memory_order_relaxed);
      return t;
    }
  }
  return nullptr;
}

void sched_impl::finished(uthread* t) {
  // live first: a joiner that returns sees live() without this uthread.
  // Safe: nothing below needs the scheduler to stay up beyond this carrier's
  // loop, and the destructor joins the carriers before freeing anything.
  if (live.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    live_epoch.fetch_add(1, std::memory_order_release);
    futex_wake(&live_epoch, INT32_MAX);
  }
  const std::uintptr_t old = t->join_word.exchange(uthread::k_join_done, std::memory_order_acq_rel);
  if (old == uthread::k_join_os) {
    // Our own 32-bit futex: libstdc++ 12's proxied wait on a 64-bit atomic
    // was seen to miss this notification.
    t->join_futex.store(1, std::memory_order_release);
    futex_wake(&t->join_futex, INT32_MAX);
  } else if (old > uthread::k_join_done) {
    resume(reinterpret_cast<uthread*>(old));
  }
  t->release_ref();
}

void sched_impl::run(carrier& c, uthread* t) {
  for (;;) {
    tls_current = t;
    t->home = &c;
    c.runs.store(c.runs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    t->ctx = std::move(t->ctx).resume();
    tls_current = nullptr;
    const action a = t->pending;
    t->pending = action::none;
    switch (a) {
      case action::yield:
        push_ready(c, t, /*by_yield=*/true);
        return;
      case action::park: {
        std::uint32_t e = uthread::k_empty;
        // acq_rel: publishes the saved context (INV2) to the resumer's CAS.
        if (t->permit.compare_exchange_strong(e, uthread::k_parked, std::memory_order_acq_rel)) return;
        t->permit.store(uthread::k_empty, std::memory_order_relaxed);  // a resume came first: consume it
        continue;
      }
      case action::block:
        if (t->blocking_on->enqueue_blocked(c, t)) return;
        continue;  // the event was set meanwhile: run it again
      case action::finished:
        finished(t);
        return;
      case action::none:
        return;
    }
  }
}

void sched_impl::run_carrier(carrier& c) {
  tls_carrier = &c;
  if (!options.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(options.cpus[c.index % options.cpus.size()], &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  unsigned idle = 0;
  for (;;) {
    if (uthread* t = find_work(c)) {
      idle = 0;
      run(c, t);
      continue;
    }
    if (stop.load(std::memory_order_acquire)) break;
    if (++idle < options.idle_spin) {
      (cpu_relax)();
      continue;
    }
    idle = 0;
    const std::uint32_t seq = c.wake_seq.load(std::memory_order_seq_cst);
    c.sleeping.store(true, std::memory_order_relaxed);
    sleepers.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with push_ready's fence
    bool work = c.ready_size.load(std::memory_order_relaxed) != 0 || c.scan_requested.load(std::memory_order_relaxed) ||
                completions_pending.load(std::memory_order_relaxed) || stop.load(std::memory_order_relaxed);
    if (options.stealing) {
      for (auto& o : carriers) work = work || o->ready_size.load(std::memory_order_relaxed) != 0;
    }
    if (!work) {
      sleeps.fetch_add(1, std::memory_order_relaxed);
      futex_wait(&c.wake_seq, seq, 20'000'000);  // 20 ms cap: a safety net only
    }
    sleepers.fetch_sub(1, std::memory_order_relaxed);
    c.sleeping.store(false, std::memory_order_relaxed);
  }
  tls_carrier = nullptr;
}

}  // namespace detail

using detail::sched_impl;

scheduler::scheduler(const scheduler_options& options) : impl_(std::make_unique<sched_impl>()) {
  if (options.carriers == 0 || options.carriers > detail::max_carriers) {
    throw std::invalid_argument("carriers must be in 1.." + std::to_string(detail::max_carriers));
  }
  impl_->options = options;
  impl_->completion_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  for (unsigned k = 0; k < options.carriers; ++k) {
    auto c = std::make_unique<detail::carrier>();
    c->index = k;
    c->owner = impl_.get();
    impl_->carriers.push_back(std::move(c));
  }
  for (auto& c : impl_->carriers) {
    detail::carrier* cp = c.get();
    cp->thread = std::thread([this, cp] { impl_->run_carrier(*cp); });
  }
}

scheduler::~scheduler() {
  wait_idle();
  impl_->stop.store(true, std::memory_order_release);
  for (auto& c : impl_->carriers) impl_->wake(*c);
  for (auto& c : impl_->carriers) c->thread.join();
  if (impl_->completion_fd >= 0) ::close(impl_->completion_fd);
}

void scheduler::wait_idle() {
  for (;;) {
    const std::uint32_t epoch = impl_->live_epoch.load(std::memory_order_acquire);
    if (impl_->live.load(std::memory_order_acquire) == 0) return;
    detail::futex_wait(&impl_->live_epoch, epoch, 50'000'000);
  }
}

unsigned scheduler::carriers() const noexcept { return static_cast<unsigned>(impl_->carriers.size()); }
std::size_t scheduler::live() const noexcept { return impl_->live.load(std::memory_order_relaxed); }

scheduler_stats scheduler::stats() const {
  scheduler_stats s;
  s.steals = impl_->steals.load(std::memory_order_relaxed);
  s.sleeps = impl_->sleeps.load(std::memory_order_relaxed);
  for (auto& c : impl_->carriers) s.runs_per_carrier.push_back(c->runs.load(std::memory_order_relaxed));
  return s;
}

task scheduler::spawn(std::function<void()> fn) {
  detail::carrier* c = detail::current_carrier();
  unsigned k;
  if (c != nullptr && c->owner == impl_.get()) {
    k = c->index;
  } else {
    k = impl_->next_spawn.fetch_add(1, std::memory_order_relaxed) % carriers();
  }
  return spawn_on(k, std::move(fn));
}

task scheduler::spawn_on(unsigned k, std::function<void()> fn) {
  auto* t = new uthread;
  t->sched = impl_.get();
  t->fn = std::move(fn);
  t->ctx = boost::context::fiber(std::allocator_arg, detail::pooled_stack(*impl_, impl_->options.stack_size),
                                 [t](boost::context::fiber&& caller) {
                                   detail::current_carrier()->main = std::move(caller);
                                   try {
                                     t->fn();
                                   } catch (const boost::context::detail::forced_unwind&) {
                                     throw;
                                   } catch (...) {
                                     t->error = std::current_exception();
                                   }
                                   t->fn = nullptr;
                                   t->pending = detail::action::finished;
                                   return std::move(detail::current_carrier()->main);
                                 });
  impl_->live.fetch_add(1, std::memory_order_relaxed);
  detail::carrier& c = *impl_->carriers[k % carriers()];
  t->home = &c;
  impl_->push_ready(c, t);
  return task(t);
}

task& task::operator=(task&& o) noexcept {
  if (this != &o) {
    if (t_ != nullptr) detach();
    t_ = o.t_;
    o.t_ = nullptr;
  }
  return *this;
}

void task::detach() {
  uthread* t = t_;
  t_ = nullptr;
  if (t != nullptr) t->release_ref();
}

void task::join() {
  uthread* t = t_;
  if (t == nullptr) throw std::logic_error("task::join: not joinable");
  std::uintptr_t expected = uthread::k_join_none;
  if (uthread* self = detail::current_uthread()) {
    if (t->join_word.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(self), std::memory_order_acq_rel)) {
      // The finisher calls resume(self) exactly once after publishing
      // k_join_done, so one suspend consumes it.
      do this_thread::suspend();
      while (t->join_word.load(std::memory_order_acquire) != uthread::k_join_done);
    }
  } else {
    t->join_word.compare_exchange_strong(expected, uthread::k_join_os, std::memory_order_acq_rel);
    while (t->join_word.load(std::memory_order_acquire) != uthread::k_join_done) {
      detail::futex_wait(&t->join_futex, 0, 50'000'000);
    }
  }
  std::exception_ptr error = t->error;
  t_ = nullptr;
  t->release_ref();
  if (error) std::rethrow_exception(error);
}

void resume(uthread* t) {
  std::uint32_t s = t->permit.load(std::memory_order_acquire);
  for (;;) {
    if (s == uthread::k_permit) return;  // idempotent
    if (s == uthread::k_empty) {
      // release: pairs with the acquire CAS in suspend() that consumes it.
      if (t->permit.compare_exchange_weak(s, uthread::k_permit, std::memory_order_release, std::memory_order_acquire)) return;
      continue;
    }
    // k_parked (INV1: only this CAS ends a park).
    if (t->permit.compare_exchange_weak(s, uthread::k_empty, std::memory_order_acq_rel, std::memory_order_acquire)) {
      t->sched->make_ready(t);
      return;
    }
  }
}

namespace this_thread {
uthread* self() noexcept { return detail::current_uthread(); }
bool in_uthread() noexcept { return detail::current_uthread() != nullptr; }
unsigned carrier() noexcept {
  detail::carrier* c = detail::current_carrier();
  return c != nullptr ? c->index : 0;
}

unsigned carrier_id() noexcept {
  static std::atomic<unsigned> next{0};
  thread_local const unsigned id = next.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void yield() {
  detail::carrier* c = detail::current_carrier();
  if (c == nullptr || detail::current_uthread() == nullptr) {
    ::sched_yield();
    return;
  }
  detail::switch_out(detail::action::yield);
}

void suspend() {
  uthread* t = detail::current_uthread();
  assert(t != nullptr && "suspend() outside a uthread");
  std::uint32_t p = uthread::k_permit;
  // acquire: pairs with the release in resume() that left the permit.
  if (t->permit.compare_exchange_strong(p, uthread::k_empty, std::memory_order_acquire)) return;
  detail::switch_out(detail::action::park);
}
}  // namespace this_thread

}  // namespace fibersync::sched
