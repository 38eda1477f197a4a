#include "core/thread_name.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>

namespace kt::core {

namespace {

std::atomic<int> background_niceness{0};

}  // namespace

void NameThisThread(std::string_view name) {
  std::string cut(name.substr(0, 15));
  pthread_setname_np(pthread_self(), cut.c_str());
}

void NameBackgroundThread(std::string_view name) {
  NameThisThread(name);
  const int levels = background_niceness.load(std::memory_order_relaxed);
  if (levels <= 0) return;
  // Linux keeps a nice value per thread: PRIO_PROCESS with a thread id sets that thread's. The
  // process's own value is its main thread's, which is the thread group id's.
  errno = 0;
  const int process = getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
  if (process == -1 && errno != 0) return;
  const int nice = std::min(19, process + levels);
  // Raising a nice value needs no privilege; if it fails anyway the thread keeps running as it
  // is, which only costs what the lower priority would have saved.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
}

void SetBackgroundNiceness(int levels) {
  background_niceness.store(std::clamp(levels, 0, 19), std::memory_order_relaxed);
}

int BackgroundNiceness() { return background_niceness.load(std::memory_order_relaxed); }

}  // namespace kt::core
