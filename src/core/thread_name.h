// Names the calling thread, as `top -H`, `ps -L` and profilers show it. Linux keeps at most 15
// characters; longer names are cut.
//
// Background threads are named with NameBackgroundThread: threads whose work no client's request
// waits on directly (the in-process scheduler and controllers, informers, timers, the store's
// watch fan-out). A process may give them a lower CPU priority than the threads that answer
// requests (the HTTP I/O threads, the SQLite committer), so that on a busy machine a request's
// answer is not kept waiting in a run queue behind them:
//
//   core::SetBackgroundNiceness(5);          // kubetaint serve --background-nice 5
//   ... threads started from here on ...
//   core::NameBackgroundThread("kt-scheduler");  // runs at the process's nice value + 5
#pragma once

#include <string_view>

namespace kt::core {

void NameThisThread(std::string_view name);

// Names the calling thread and, if SetBackgroundNiceness set a niceness, raises the thread's
// nice value by that much above the process's (at most to 19, the lowest priority).
void NameBackgroundThread(std::string_view name);

// The niceness NameBackgroundThread applies from now on: 0 (the default: background threads
// keep the process's priority) to 19. Threads named before keep the priority they have.
void SetBackgroundNiceness(int levels);
int BackgroundNiceness();

}  // namespace kt::core
