#include "core/thread_name.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <thread>

namespace kt::core {
namespace {

struct Seen {
  int nice = 0;
  std::string name;
};

// Starts a thread that names itself with `name_it`, and returns its nice value and name.
template <class Name>
Seen InNewThread(Name name_it) {
  Seen seen;
  std::thread t([&] {
    name_it();
    errno = 0;
    seen.nice = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
    char buf[32] = {};
    pthread_getname_np(pthread_self(), buf, sizeof(buf));
    seen.name = buf;
  });
  t.join();
  return seen;
}

int ProcessNice() { return getpriority(PRIO_PROCESS, static_cast<id_t>(getpid())); }

class BackgroundThreadTest : public ::testing::Test {
 protected:
  void TearDown() override { SetBackgroundNiceness(0); }
};

TEST_F(BackgroundThreadTest, KeepsTheProcessPriorityByDefault) {
  EXPECT_EQ(BackgroundNiceness(), 0);
  const Seen s = InNewThread([] { NameBackgroundThread("kt-bg-default"); });
  EXPECT_EQ(s.nice, ProcessNice());
  EXPECT_EQ(s.name, "kt-bg-default");
}

TEST_F(BackgroundThreadTest, LowersBackgroundThreadsOnly) {
  SetBackgroundNiceness(3);
  const Seen bg = InNewThread([] { NameBackgroundThread("kt-bg-lowered"); });
  EXPECT_EQ(bg.nice, std::min(19, ProcessNice() + 3));
  EXPECT_EQ(bg.name, "kt-bg-lowered");
  // A request thread keeps the process's priority.
  const Seen fg = InNewThread([] { NameThisThread("kt-fg"); });
  EXPECT_EQ(fg.nice, ProcessNice());
}

TEST_F(BackgroundThreadTest, ClampsTheNiceness) {
  SetBackgroundNiceness(40);
  EXPECT_EQ(BackgroundNiceness(), 19);
  EXPECT_EQ(InNewThread([] { NameBackgroundThread("kt-bg-lowest"); }).nice, 19);
  SetBackgroundNiceness(-4);
  EXPECT_EQ(BackgroundNiceness(), 0);
  EXPECT_EQ(InNewThread([] { NameBackgroundThread("kt-bg-none"); }).nice, ProcessNice());
}

TEST_F(BackgroundThreadTest, NamesAreCutAtFifteenCharacters) {
  const Seen s = InNewThread([] { NameBackgroundThread("kt-a-very-long-thread-name"); });
  EXPECT_EQ(s.name, "kt-a-very-long-");
}

}  // namespace
}  // namespace kt::core
