// The memory Store: the MVCC index alone. A write is durable the moment it is applied, so it
// completes on the caller's thread.
#include <memory>
#include <utility>

#include "store/internal/mvcc_index.h"
#include "store/store.h"

namespace kt::store {
namespace {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(const MemoryOptions& options)
      : index_(std::make_shared<internal::MvccIndex>(IndexOptions(options))) {
    index_->Start();
  }
  ~MemoryStore() override { index_->Shutdown(); }

  Result<KeyValue> Get(std::string_view key) override { return index_->Get(key); }
  Result<RangeResponse> Range(const RangeRequest& request) override {
    return index_->Range(request);
  }
  Revision CurrentRevision() override { return index_->current_revision(); }
  Revision CompactedRevision() override { return index_->compacted_revision(); }

  void Write(WriteOp op, WriteCallback done) override {
    Result<WriteResult> result = index_->CheckAndApply(op);
    if (done) done(std::move(result));
  }

  Result<std::unique_ptr<Watcher>> Watch(const WatchRequest& request,
                                         WatchCallback callback) override {
    return index_->Watch(request, std::move(callback));
  }

  Status Compact(Revision revision) override { return index_->Compact(revision, nullptr); }

 private:
  static internal::MvccIndex::Options IndexOptions(const MemoryOptions& options) {
    internal::MvccIndex::Options index_options;
    index_options.compaction = options.compaction;
    return index_options;
  }

  const std::shared_ptr<internal::MvccIndex> index_;
};

}  // namespace

std::unique_ptr<Store> NewMemoryStore(const MemoryOptions& options) {
  return std::make_unique<MemoryStore>(options);
}

}  // namespace kt::store
