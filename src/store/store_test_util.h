// Helpers for the store tests: a temporary directory and a watch recorder that tests wait on
// with a deadline (never a sleep).
#pragma once

#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "store/store.h"

namespace kt::store::testing {

// How long a test waits for something that should happen at once; only reached on failure.
inline constexpr std::chrono::seconds kDeadline{30};

// A directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/kt-store-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Collects a watch's responses. Create the recorder before the watch and destroy the watch
// first (declare the Watcher after the recorder).
class WatchRecorder {
 public:
  WatchCallback Callback() {
    return [this](WatchResponse response) {
      std::lock_guard lock(mu_);
      for (Event& e : response.events) events_.push_back(std::move(e));
      ++responses_;
      if (response.events.empty() && response.status.ok()) ++progress_only_;
      revision_ = response.revision;
      if (!response.status.ok()) end_ = response.status;
      cv_.notify_all();
    };
  }

  // Waits until every matching event up to `revision` has been delivered.
  bool WaitForRevision(Revision revision) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kDeadline, [&] { return revision_ >= revision || !end_.ok(); }) &&
           revision_ >= revision;
  }
  bool WaitForEvents(std::size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kDeadline, [&] { return events_.size() >= n; });
  }
  // Waits for the watch to end; returns its final status (OK if it did not end in time).
  Status WaitForEnd() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, kDeadline, [&] { return !end_.ok(); });
    return end_;
  }

  std::vector<Event> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  Revision revision() const {
    std::lock_guard lock(mu_);
    return revision_;
  }
  int progress_only() const {
    std::lock_guard lock(mu_);
    return progress_only_;
  }
  Status end() const {
    std::lock_guard lock(mu_);
    return end_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Event> events_;
  Revision revision_ = 0;
  int responses_ = 0;
  int progress_only_ = 0;
  Status end_;
};

}  // namespace kt::store::testing
