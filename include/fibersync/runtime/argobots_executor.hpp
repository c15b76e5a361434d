// argobots_executor.hpp: run N Argobots ULTs on C execution streams (optional).
//
// Each call is one Argobots session: ABT_init, C execution streams (the
// calling thread becomes the primary one and is carrier 0, plus C-1 secondary
// ones), the LTs as ULTs, join, ABT_finalize; so it can be called any number
// of times per process, but not inside a program that initialized Argobots
// itself (executor_error). Pools (options.shared_pool): one per execution
// stream, LT i in pool i % C and never migrating (default), or one pool that
// every stream pops from. options.idle_suspend: idle streams sleep in
// ABT_SCHED_BASIC_WAIT on ABT_POOL_FIFO_WAIT pools instead of polling
// ABT_SCHED_BASIC / ABT_POOL_FIFO. options.cpus pins stream k to
// cpus[k % size] (the calling thread too, until the call returns). The first exception thrown by a body is
// rethrown after every LT finished. spawn_and_join_on_argobots() lets an LT of
// a running session start and join more ULTs, spread over the session's pools.
#pragma once

#include <abt.h>
#include <pthread.h>
#include <sched.h>

#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "fibersync/runtime/executor.hpp"

namespace fibersync {

// Stack of each LT started by run_lts_on_argobots (Argobots' default is 16 KiB,
// too small for test assertions and the harness loop).
inline constexpr std::size_t argobots_lt_stack_bytes = 256 * 1024;

namespace detail {

// Restores the calling thread's cpu mask on scope exit.
class affinity_guard {
 public:
  affinity_guard() noexcept { saved_ok_ = pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) == 0; }
  ~affinity_guard() {
    if (saved_ok_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
  }
  affinity_guard(const affinity_guard&) = delete;
  affinity_guard& operator=(const affinity_guard&) = delete;

 private:
  cpu_set_t saved_{};
  bool saved_ok_ = false;
};

inline void abt_check(int rc, const char* what) {
  if (rc != ABT_SUCCESS) throw executor_error(std::string("Argobots: ") + what + " failed (error " + std::to_string(rc) + ")");
}

struct argobots_session {
  std::vector<ABT_xstream> streams;  // [0]: the primary execution stream
  std::vector<ABT_pool> pools;       // one per stream, or one shared
  std::mutex error_guard;
  std::exception_ptr first_error;
};

// The running session (one at a time: Argobots is process-wide).
inline argobots_session*& argobots_current_session() {
  static argobots_session* session = nullptr;
  return session;
}

struct argobots_call {
  const lt_body* body;
  unsigned index;
  argobots_session* session;
};

inline void argobots_trampoline(void* arg) {
  auto* call = static_cast<argobots_call*>(arg);
  try {
    (*call->body)(call->index);
  } catch (...) {
    std::lock_guard<std::mutex> g(call->session->error_guard);
    if (!call->session->first_error) call->session->first_error = std::current_exception();
  }
}

// Creates one ULT per call in pools[(first + i) % size] and joins them all.
inline void argobots_spawn_join(argobots_session& s, std::vector<argobots_call>& calls, std::size_t first,
                                ABT_thread_attr attr) {
  std::vector<ABT_thread> threads;
  threads.reserve(calls.size());
  int rc = ABT_SUCCESS;
  for (std::size_t i = 0; i < calls.size() && rc == ABT_SUCCESS; ++i) {
    ABT_thread t = ABT_THREAD_NULL;
    rc = ABT_thread_create(s.pools[(first + i) % s.pools.size()], &argobots_trampoline, &calls[i], attr, &t);
    if (rc == ABT_SUCCESS) threads.push_back(t);
  }
  for (ABT_thread& t : threads) abt_check(ABT_thread_free(&t), "ABT_thread_free");  // joins first
  abt_check(rc, "ABT_thread_create");
}

}  // namespace detail

inline void run_lts_on_argobots(const executor_options& options, unsigned lts, const lt_body& body) {
  if (options.carriers == 0) throw executor_error("carriers must be positive");
  if (ABT_initialized() == ABT_SUCCESS)
    throw executor_error(
        "Argobots is already initialized in this process: run_lts_on_argobots does ABT_init/ABT_finalize itself");
  detail::abt_check(ABT_init(0, nullptr), "ABT_init");
  detail::argobots_session s;
  ABT_thread_attr attr = ABT_THREAD_ATTR_NULL;
  std::exception_ptr setup_error;
  try {
    const unsigned carriers = options.carriers;
    const ABT_pool_kind kind = options.idle_suspend ? ABT_POOL_FIFO_WAIT : ABT_POOL_FIFO;
    const ABT_sched_predef sched = options.idle_suspend ? ABT_SCHED_BASIC_WAIT : ABT_SCHED_BASIC;
    const unsigned pool_count = options.shared_pool ? 1 : carriers;
    for (unsigned k = 0; k < pool_count; ++k) {
      ABT_pool p;
      detail::abt_check(ABT_pool_create_basic(kind, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &p), "ABT_pool_create_basic");
      s.pools.push_back(p);
    }
    auto pool_of = [&](unsigned k) { return s.pools[k % s.pools.size()]; };
    ABT_xstream primary;
    detail::abt_check(ABT_self_get_xstream(&primary), "ABT_self_get_xstream");
    s.streams.push_back(primary);
    // The primary runs carrier 0's pool first (BASIC_WAIT sleeps on the first
    // pool). This ULT (the primary ULT) moves to that pool; with a shared pool
    // it gets a private one, so it cannot be resumed on another stream: it must
    // join those streams and call ABT_finalize on the primary.
    ABT_pool primary_pools[2] = {pool_of(0), ABT_POOL_NULL};
    int primary_pool_count = 1;
    if (options.shared_pool) {
      detail::abt_check(ABT_pool_create_basic(kind, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &primary_pools[1]),
                        "ABT_pool_create_basic");
      primary_pool_count = 2;
    }
    detail::abt_check(ABT_xstream_set_main_sched_basic(primary, sched, primary_pool_count, primary_pools),
                      "ABT_xstream_set_main_sched_basic");
    if (options.shared_pool) detail::abt_check(ABT_self_set_associated_pool(primary_pools[1]), "ABT_self_set_associated_pool");
    // Pinning: a new stream's OS thread inherits the creating thread's cpu
    // mask, so each stream is created while we run on its cpu. (Argobots'
    // own ABT_xstream_set_cpubind fails unless it was built with affinity
    // support.) The primary stream is this thread: it keeps carrier 0's cpu
    // until the session ends, then gets its old mask back.
    detail::affinity_guard primary_affinity;
    for (unsigned k = 1; k < carriers; ++k) {
      detail::pin_current_thread(options, k);
      ABT_pool p = pool_of(k);
      ABT_xstream x;
      detail::abt_check(ABT_xstream_create_basic(sched, 1, &p, ABT_SCHED_CONFIG_NULL, &x), "ABT_xstream_create_basic");
      s.streams.push_back(x);
    }
    detail::pin_current_thread(options, 0);
    detail::abt_check(ABT_thread_attr_create(&attr), "ABT_thread_attr_create");
    detail::abt_check(ABT_thread_attr_set_stacksize(attr, argobots_lt_stack_bytes), "ABT_thread_attr_set_stacksize");
    std::vector<detail::argobots_call> calls;
    calls.reserve(lts);
    for (unsigned i = 0; i < lts; ++i) calls.push_back({&body, i, &s});
    detail::argobots_current_session() = &s;
    detail::argobots_spawn_join(s, calls, 0, attr);
  } catch (...) {
    setup_error = std::current_exception();
  }
  detail::argobots_current_session() = nullptr;
  if (attr != ABT_THREAD_ATTR_NULL) ABT_thread_attr_free(&attr);
  for (std::size_t k = 1; k < s.streams.size(); ++k) {
    ABT_xstream_join(s.streams[k]);
    ABT_xstream_free(&s.streams[k]);
  }
  ABT_finalize();  // frees the pools and the primary's scheduler
  if (setup_error) std::rethrow_exception(setup_error);
  if (s.first_error) std::rethrow_exception(s.first_error);
}

// From an LT of a running run_lts_on_argobots: run body(0..k-1) in k new ULTs
// (Argobots' default stack) and join them. They go round-robin over the
// session's pools starting at the caller's stream, so they can run in parallel.
inline void spawn_and_join_on_argobots(unsigned k, const lt_body& body) {
  detail::argobots_session* s = detail::argobots_current_session();
  if (s == nullptr) throw executor_error("spawn_and_join_on_argobots: no run_lts_on_argobots is running");
  ABT_xstream self;
  detail::abt_check(ABT_self_get_xstream(&self), "ABT_self_get_xstream");
  std::size_t first = 0;
  for (std::size_t i = 0; i < s->streams.size(); ++i)
    if (s->streams[i] == self) first = i;
  std::vector<detail::argobots_call> calls;
  calls.reserve(k);
  for (unsigned i = 0; i < k; ++i) calls.push_back({&body, i, s});
  detail::argobots_spawn_join(*s, calls, first, ABT_THREAD_ATTR_NULL);
}

}  // namespace fibersync
