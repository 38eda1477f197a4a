#include "controllers/daemonset/expectations.h"

#include <algorithm>

namespace kt::controllers::daemonset {

bool ControllerExpectations::SatisfiedExpectations(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = expectations_.find(key);
  if (it == expectations_.end()) return true;
  const Expectation& e = it->second;
  if (e.adds <= 0 && e.deletes <= 0) return true;
  return clock_->Now() - e.timestamp > kExpectationsTimeout;
}

void ControllerExpectations::SetExpectations(const std::string& key, int64_t adds,
                                             int64_t deletes) {
  std::lock_guard<std::mutex> lock(mu_);
  expectations_[key] = Expectation{adds, deletes, clock_->Now()};
}

void ControllerExpectations::LowerExpectations(const std::string& key, int64_t adds,
                                               int64_t deletes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = expectations_.find(key);
  if (it == expectations_.end()) return;
  it->second.adds -= adds;
  it->second.deletes -= deletes;
}

void ControllerExpectations::DeleteExpectations(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  expectations_.erase(key);
}

bool Backoff::IsInBackOffSinceUpdate(const std::string& key, client::Time now) const {
  auto it = entries_.find(key);
  if (it == entries_.end() || Expired(it->second, now)) return false;
  return now - it->second.last_update < it->second.backoff;
}

void Backoff::Next(const std::string& key, client::Time now) {
  auto it = entries_.find(key);
  if (it == entries_.end() || Expired(it->second, now)) {
    entries_[key] = Entry{initial_, now};
    return;
  }
  it->second.backoff = std::min(it->second.backoff * 2, max_);
  it->second.last_update = now;
}

client::Duration Backoff::Get(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? client::Duration::zero() : it->second.backoff;
}

void Backoff::GC(client::Time now) {
  std::erase_if(entries_, [&](const auto& kv) { return Expired(kv.second, now); });
}

}  // namespace kt::controllers::daemonset
