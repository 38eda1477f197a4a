#include "client/clock.h"

#include "core/thread_name.h"

namespace kt::client {

namespace {

class RealClock : public Clock {
 public:
  RealClock()
      : thread_([this] {
          core::NameBackgroundThread("kt-clock");
          Run();
        }) {}

  ~RealClock() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      timers_.clear();
      by_id_.clear();
    }
    cv_.notify_all();
    thread_.join();
  }

  Time Now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  }

  TimerId AfterFunc(Duration delay, std::function<void()> fn) override {
    return Add(std::chrono::steady_clock::now() + delay, std::move(fn));
  }

  TimerId At(Time when, std::function<void()> fn) override {
    return AfterFunc(when - Now(), std::move(fn));
  }

  bool Cancel(TimerId id) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return false;
    timers_.erase(Key{it->second, id});
    by_id_.erase(it);
    return true;
  }

 private:
  using Steady = std::chrono::steady_clock::time_point;
  struct Key {
    Steady when;
    uint64_t seq;
    bool operator<(const Key& o) const { return when != o.when ? when < o.when : seq < o.seq; }
  };

  TimerId Add(Steady when, std::function<void()> fn) {
    TimerId id;
    bool first;
    {
      std::lock_guard<std::mutex> lock(mu_);
      id = next_id_++;
      auto it = timers_.emplace(Key{when, id}, std::move(fn)).first;
      by_id_.emplace(id, when);
      first = it == timers_.begin();
    }
    if (first) cv_.notify_one();
    return id;
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (timers_.empty()) {
        cv_.wait(lock);
        continue;
      }
      auto first = timers_.begin();
      if (first->first.when > std::chrono::steady_clock::now()) {
        const Steady when = first->first.when;  // the entry may go while this thread waits
        cv_.wait_until(lock, when);
        continue;
      }
      std::function<void()> fn = std::move(first->second);
      by_id_.erase(first->first.seq);
      timers_.erase(first);
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::function<void()>> timers_;  // guarded by mu_
  std::unordered_map<TimerId, Steady> by_id_;    // guarded by mu_
  uint64_t next_id_ = 1;                         // guarded by mu_
  bool stop_ = false;                            // guarded by mu_
  std::thread thread_;
};

}  // namespace

std::unique_ptr<Clock> NewRealClock() { return std::make_unique<RealClock>(); }

SimulatedClock::SimulatedClock(Time start) : now_(start) {}

Time SimulatedClock::Now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

TimerId SimulatedClock::AfterFunc(Duration delay, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{now_ + std::max(delay, Duration::zero()), next_seq_++};
  timers_.emplace(key, std::move(fn));
  by_id_.emplace(key.seq, key);
  return key.seq;
}

TimerId SimulatedClock::At(Time when, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{std::max(when, now_), next_seq_++};
  timers_.emplace(key, std::move(fn));
  by_id_.emplace(key.seq, key);
  return key.seq;
}

bool SimulatedClock::Cancel(TimerId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return false;
  timers_.erase(it->second);
  by_id_.erase(it);
  return true;
}

size_t SimulatedClock::Advance(Duration d) { return AdvanceTo(Now() + d); }

size_t SimulatedClock::AdvanceTo(Time t) {
  std::lock_guard<std::mutex> advancing(advance_mu_);
  size_t fired = 0;
  for (;;) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto first = timers_.begin();
      if (first == timers_.end() || first->first.when > t) {
        if (t > now_) now_ = t;
        return fired;
      }
      if (first->first.when > now_) now_ = first->first.when;
      fn = std::move(first->second);
      by_id_.erase(first->first.seq);
      timers_.erase(first);
    }
    fn();
    ++fired;
  }
}

bool SimulatedClock::Step() {
  Time next;
  if (!NextDeadline(&next)) return false;
  AdvanceTo(next);
  return true;
}

size_t SimulatedClock::PendingTimers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timers_.size();
}

bool SimulatedClock::NextDeadline(Time* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (timers_.empty()) return false;
  *out = timers_.begin()->first.when;
  return true;
}

}  // namespace kt::client
