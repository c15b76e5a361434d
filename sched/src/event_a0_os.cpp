// event_a0_os.cpp: A0, waits and wakes mediated by the OS (seed figure 1).
//
// The waiter list of the event lives under an OS mutex (std::mutex: a futex
// under contention), set() writes the scheduler's eventfd (a system call)
// after queuing the released uthreads on the one process-wide completion
// list; carriers read the eventfd and drain the list into their own ready
// queues (sched_impl::drain_completions).
#include <unistd.h>

#include "events.hpp"

namespace fibersync::sched::detail {
namespace {

class event_a0 final : public event_impl {
 public:
  explicit event_a0(sched_impl& s) : s_(s) {}

  void wait() override {
    const std::uint64_t w = word_.load(std::memory_order_acquire);  // acquire: pairs with set()'s release
    if (w & k_set_bit) return;
    uthread* t = current_uthread();
    t->block_gen = generation(w);
    t->blocking_on = this;
    switch_out(action::block);
  }

  bool enqueue_blocked(carrier&, uthread* t) override {
    std::lock_guard<std::mutex> g(m_);
    if (generation(word_.load(std::memory_order_relaxed)) != t->block_gen) return false;  // set() overtook the waiter
    waiters_.push(t);
    return true;
  }

  void set() override {
    uqueue released;
    {
      std::lock_guard<std::mutex> g(m_);
      const std::uint64_t w = word_.load(std::memory_order_relaxed);
      if (w & k_set_bit) return;
      word_.store(((generation(w) + 1) << 1) | k_set_bit, std::memory_order_release);
      released = waiters_;
      waiters_ = uqueue{};
    }
    if (released.empty()) return;
    {
      std::lock_guard<std::mutex> g(s_.completion_mutex);
      if (s_.completions.empty()) {
        s_.completions = released;
      } else {
        s_.completions.tail->next = released.head;
        s_.completions.tail = released.tail;
        s_.completions.size += released.size;
      }
      s_.completions_pending.store(true, std::memory_order_relaxed);
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(s_.completion_fd, &one, sizeof one);  // the kernel round trip
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the sleep path's fence
    if (s_.sleepers.load(std::memory_order_relaxed) != 0) s_.wake_any();
  }

  void reset() override {
    std::lock_guard<std::mutex> g(m_);
    word_.fetch_and(~k_set_bit, std::memory_order_relaxed);
  }

  bool is_set() const noexcept override { return word_.load(std::memory_order_acquire) & k_set_bit; }

 private:
  sched_impl& s_;
  std::atomic<std::uint64_t> word_{0};  // written under m_, read lock-free by wait()/is_set()
  std::mutex m_;                         // guards waiters_ and transitions of word_
  uqueue waiters_;
};

}  // namespace

std::unique_ptr<event_impl> make_event_a0(sched_impl& s) { return std::make_unique<event_a0>(s); }

}  // namespace fibersync::sched::detail
