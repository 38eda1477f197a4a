#include "controllers/mailbox.h"

#include <utility>

namespace kt::controllers {

void Mailbox::Post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    inbox_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

void Mailbox::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    informer_pending_ = true;
  }
  cv_.notify_one();
}

bool Mailbox::Take(std::deque<std::function<void()>>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return false;
  out->swap(inbox_);
  informer_pending_ = false;
  return true;
}

bool Mailbox::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stopping_ || informer_pending_ || !inbox_.empty(); });
  return !stopping_;
}

bool Mailbox::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    stopping_ = true;
    inbox_.clear();
  }
  cv_.notify_all();
  return true;
}

}  // namespace kt::controllers
