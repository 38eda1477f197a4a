#include "client/loop.h"

#include <algorithm>

#include "core/thread_name.h"

namespace kt::client {

Loop::Loop(Clock* clock, Options options)
    : clock_(clock), options_(std::move(options)), inbox_(std::make_shared<Inbox>()) {}

Loop::~Loop() { Stop(); }

void Loop::Start() {
  thread_ = std::thread([this] {
    core::NameBackgroundThread(options_.name);
    Run();
  });
}

void Loop::Stop() {
  {
    std::lock_guard<std::mutex> lock(inbox_->mu);
    inbox_->stopping = true;
  }
  inbox_->cv.notify_all();
  if (thread_.joinable()) thread_.join();
  if (clock_timer_ != 0) clock_->Cancel(clock_timer_);
  clock_timer_ = 0;
}

void Loop::Post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(inbox_->mu);
    if (inbox_->stopping) return;
    inbox_->items.push_back(std::move(fn));
  }
  inbox_->cv.notify_one();
}

void Loop::Wake() {
  {
    std::lock_guard<std::mutex> lock(inbox_->mu);
    inbox_->woken = true;
  }
  inbox_->cv.notify_one();
}

Loop::TimerHandle Loop::At(Time when, std::function<void()> fn) {
  const TimerHandle handle = next_handle_++;
  timers_.emplace(handle, std::move(fn));
  heap_.push_back(Due{when, handle});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<Due>());
  Arm();
  return handle;
}

bool Loop::Cancel(TimerHandle handle) {
  // The heap entry stays until it reaches the top; it finds no timer then.
  return timers_.erase(handle) > 0;
}

void Loop::Arm() {
  while (!heap_.empty() && !timers_.contains(heap_.front().handle)) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Due>());
    heap_.pop_back();
  }
  if (heap_.empty()) return;
  const Time when = heap_.front().when;
  if (clock_timer_ != 0 && armed_for_ <= when) return;  // fires no later than needed
  if (clock_timer_ != 0) clock_->Cancel(clock_timer_);
  armed_for_ = when;
  const uint64_t generation = ++arm_generation_;
  clock_timer_ = clock_->At(when, [inbox = inbox_, generation] {
    {
      std::lock_guard<std::mutex> lock(inbox->mu);
      inbox->due = true;
      inbox->fired_generation = std::max(inbox->fired_generation, generation);
    }
    inbox->cv.notify_one();
  });
}

size_t Loop::FireDue() {
  size_t fired = 0;
  const Time now = clock_->Now();
  while (!heap_.empty() && heap_.front().when <= now) {
    const TimerHandle handle = heap_.front().handle;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Due>());
    heap_.pop_back();
    auto it = timers_.find(handle);
    if (it == timers_.end()) continue;
    std::function<void()> fn = std::move(it->second);
    timers_.erase(it);
    fn();
    ++fired;
  }
  return fired;
}

size_t Loop::Round() {
  std::deque<std::function<void()>> items;
  bool due = false;
  uint64_t fired = 0;
  {
    std::lock_guard<std::mutex> lock(inbox_->mu);
    if (inbox_->stopping) return 0;
    items.swap(inbox_->items);
    inbox_->woken = false;
    due = inbox_->due;
    inbox_->due = false;
    fired = inbox_->fired_generation;
  }
  // The clock's timer is spent once the one armed last has fired.
  if (due && fired == arm_generation_) clock_timer_ = 0;
  size_t done = options_.poll ? options_.poll() : 0;
  for (auto& fn : items) fn();
  done += items.size();
  done += FireDue();
  Arm();
  return done;
}

void Loop::Run() {
  for (;;) {
    if (Round() > 0) continue;
    std::unique_lock<std::mutex> lock(inbox_->mu);
    inbox_->cv.wait(lock, [&] {
      return inbox_->stopping || inbox_->woken || inbox_->due || !inbox_->items.empty();
    });
    if (inbox_->stopping) return;
  }
}

size_t Loop::RunPending() {
  size_t total = 0;
  for (size_t n; (n = Round()) > 0;) total += n;
  return total;
}

}  // namespace kt::client
