#include "server/timer_queue.h"

#include <vector>

namespace kt::server {

TimerQueue::TimerQueue() : thread_([this] { Run(); }) {}

TimerQueue::~TimerQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    timers_.clear();
    by_id_.clear();
  }
  cv_.notify_all();
  thread_.join();
}

uint64_t TimerQueue::At(Clock::time_point when, std::function<void()> fn) {
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
    timers_.emplace(when, std::make_pair(id, std::move(fn)));
    by_id_.emplace(id, when);
  }
  cv_.notify_all();
  return id;
}

void TimerQueue::Cancel(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  auto [begin, end] = timers_.equal_range(it->second);
  for (auto t = begin; t != end; ++t) {
    if (t->second.first == id) {
      timers_.erase(t);
      break;
    }
  }
  by_id_.erase(it);
}

void TimerQueue::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (timers_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto first = timers_.begin();
    if (first->first > Clock::now()) {
      // A copy: Cancel may erase the entry while this thread waits.
      const Clock::time_point when = first->first;
      cv_.wait_until(lock, when);
      continue;
    }
    std::function<void()> fn = std::move(first->second.second);
    by_id_.erase(first->second.first);
    timers_.erase(first);
    lock.unlock();
    fn();
    lock.lock();
  }
}

}  // namespace kt::server
