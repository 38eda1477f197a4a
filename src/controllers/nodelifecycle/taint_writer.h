// TaintWriter: how the node lifecycle controller writes node taints without losing anyone
// else's. Each change (taints to add, taints to remove) is applied to the node as last read and
// written as a merge patch of the whole spec.taints that carries that read's resourceVersion as
// a precondition; on a conflict the node is read again and the change applied again (upstream's
// RetryOnConflict with UpdateTaintBackoff: 5 tries, 100 ms apart). So a taint another client adds
// between the read and the write is never dropped (upstream #128304). One node's changes are
// written one at a time, in order; a change that finds the taints as wanted writes nothing.
//
//   TaintWriter w({.client = client, .clock = clock, .box = box, .in_flight = &in_flight,
//                  .cached = [&](const std::string& n) { return informer.Get("", n); },
//                  .idle = [&](const std::string& n) { ... }});
//   w.Change("node1", {{not_ready_no_execute}, {unreachable_no_execute}},
//            [](bool ok) { ... });   // on the owner's thread, through `box`
//
// Threading: the owner's thread only (the one that runs what `box` receives).
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "client/client.h"
#include "client/clock.h"
#include "controllers/mailbox.h"
#include "controllers/nodelifecycle/taints.h"
#include "server/object.h"

namespace kt::controllers::nodelifecycle {

class TaintWriter {
 public:
  struct Options {
    client::Client* client = nullptr;
    client::Clock* clock = nullptr;
    // Where the writes' and reads' completions are handed to the owner's thread.
    std::shared_ptr<Mailbox> box;
    // Counts the calls under way (the owner's InFlight).
    std::atomic<size_t>* in_flight = nullptr;
    // The node as the owner's informer has it, or null: read first, as upstream reads the API
    // server's cache first.
    std::function<server::ObjectPtr(const std::string& node)> cached;
    // Called when the last queued change of `node` has finished.
    std::function<void(const std::string& node)> idle;
  };

  explicit TaintWriter(Options options) : options_(std::move(options)) {}

  // Queues `change` for `node`. `done` (may be null) gets true once it is written or needed no
  // write, false if it could not be written (the node is gone, an error, five conflicts).
  void Change(const std::string& node, TaintChange change, std::function<void(bool ok)> done);
  // Whether a change of `node`'s is queued or being written.
  bool Busy(std::string_view node) const;
  // `node` was deleted: forgets it unless a change is under way (which then fails).
  void Forget(std::string_view node);

 private:
  struct Op {
    TaintChange change;
    std::function<void(bool ok)> done;
  };
  struct Writer {
    std::deque<Op> ops;
    bool busy = false;
    int attempt = 0;
    // The revision the last write was computed from: a cached copy not newer than it does not
    // show that write yet.
    store::Revision written_over = 0;
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };

  void Start(const std::string& node);
  // Reads `node` live, then applies its first change.
  void Read(const std::string& node);
  void Apply(const std::string& node, const server::ObjectPtr& object);
  void Patched(const std::string& node, server::ApiResult<store::Bytes> result);
  void Finish(const std::string& node, bool ok);

  Options options_;
  std::unordered_map<std::string, Writer, StringHash, std::equal_to<>> writers_;
};

}  // namespace kt::controllers::nodelifecycle
