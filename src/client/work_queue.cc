#include "client/work_queue.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kt::client {

struct WorkQueue::State {
  struct Waiting {
    Time ready;
    TimerId timer;
    uint64_t generation;
  };

  void AddLocked(const std::string& key) {
    if (shutting_down) return;
    if (!dirty.insert(key).second) return;
    if (processing.count(key)) return;  // queued again by Done
    queue.push_back(key);
    cv.notify_one();
  }
  void TakeLocked(std::string* key) {
    *key = std::move(queue.front());
    queue.pop_front();
    processing.insert(*key);
    dirty.erase(*key);
  }

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> queue;                     // guarded by mu
  std::unordered_set<std::string> dirty;             // queued or to queue again; guarded by mu
  std::unordered_set<std::string> processing;        // guarded by mu
  std::unordered_map<std::string, Waiting> waiting;  // guarded by mu
  uint64_t next_generation = 1;                      // guarded by mu
  bool shutting_down = false;                        // guarded by mu
};

WorkQueue::WorkQueue(Clock* clock, std::unique_ptr<RateLimiter> limiter)
    : clock_(clock), limiter_(std::move(limiter)), state_(std::make_shared<State>()) {}

WorkQueue::~WorkQueue() {
  ShutDown();
  std::vector<TimerId> timers;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    for (const auto& [key, w] : state_->waiting) timers.push_back(w.timer);
    state_->waiting.clear();
  }
  for (TimerId t : timers) clock_->Cancel(t);
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  if (delay <= Duration::zero()) return Add(key);
  const Time ready = clock_->Now() + delay;
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.shutting_down) return;
  auto it = s.waiting.find(key);
  if (it != s.waiting.end()) {
    if (it->second.ready <= ready) return;  // already due sooner
    clock_->Cancel(it->second.timer);
    s.waiting.erase(it);
  }
  // A replaced timer that had already started (Cancel could not stop it) finds a newer
  // generation under the key and does nothing.
  const uint64_t generation = s.next_generation++;
  TimerId id = clock_->At(ready, [weak = std::weak_ptr<State>(state_), key, generation] {
    std::shared_ptr<State> s = weak.lock();
    if (!s) return;
    std::lock_guard<std::mutex> lock(s->mu);
    auto w = s->waiting.find(key);
    if (w == s->waiting.end() || w->second.generation != generation) return;
    s->waiting.erase(w);
    s->AddLocked(key);
  });
  s.waiting[key] = State::Waiting{ready, id, generation};
}

void WorkQueue::AddRateLimited(const std::string& key) {
  AddAfter(key, limiter_ ? limiter_->When(key) : Duration::zero());
}

void WorkQueue::Forget(const std::string& key) {
  if (limiter_) limiter_->Forget(key);
}

int WorkQueue::NumRequeues(const std::string& key) {
  return limiter_ ? limiter_->NumRequeues(key) : 0;
}

bool WorkQueue::Get(std::string* key) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  s.cv.wait(lock, [&] { return !s.queue.empty() || s.shutting_down; });
  if (s.queue.empty()) return false;
  s.TakeLocked(key);
  return true;
}

bool WorkQueue::TryGet(std::string* key) {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->queue.empty()) return false;
  state_->TakeLocked(key);
  return true;
}

void WorkQueue::Done(const std::string& key) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  s.processing.erase(key);
  if (s.dirty.count(key)) {
    s.queue.push_back(key);
    s.cv.notify_one();
  }
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->shutting_down = true;
  state_->cv.notify_all();
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->shutting_down;
}

size_t WorkQueue::Len() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->queue.size();
}

size_t WorkQueue::Waiting() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->waiting.size();
}

}  // namespace kt::client
