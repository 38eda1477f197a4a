#include "server/predecode.h"

#include <algorithm>
#include <new>

#include "core/thread_name.h"

namespace kt::server {

namespace {

// The resource whose cache loads `key`, or null. Key prefixes end with '/' and none is the
// prefix of another, so at most one matches; `hint` (the previous row's) is tried first.
const ResourceInfo* ResourceOfKey(std::string_view key, const ResourceInfo* hint) {
  if (hint != nullptr && key.starts_with(hint->key_prefix)) return hint;
  for (const ResourceInfo& info : AllResources()) {
    if (key.starts_with(info.key_prefix)) return &info;
  }
  return nullptr;
}

}  // namespace

Predecoder::Predecoder(size_t batch) : batch_(batch) {
  worker_ = std::thread([this] {
    core::NameThisThread("kt-predecode");
    Run();
  });
}

Predecoder::~Predecoder() {
  Finish();
  for (size_t i = 0; i < entry_count_; ++i) EntryAt(i)->~Entry();
}

Predecoder::Entry* Predecoder::EntryAt(size_t i) const {
  return reinterpret_cast<Entry*>(entry_chunks_[i / kEntriesPerChunk].data()) +
         i % kEntriesPerChunk;
}

void Predecoder::Loaded(const store::LoadedRow& row) {
  if (row.value == nullptr || *row.value == nullptr) return;
  // Take() searches by descending revision: a row out of that order is left to the cache.
  if (!entries_.empty() && row.revision >= entries_.back()->revision) return;
  const ResourceInfo* info = ResourceOfKey(row.key, last_info_);
  if (info == nullptr) return;
  last_info_ = info;
  if (entry_count_ % kEntriesPerChunk == 0) {
    entry_chunks_.emplace_back(kEntriesPerChunk * sizeof(Entry));
  }
  Entry& e = *new (EntryAt(entry_count_)) Entry();
  ++entry_count_;
  e.info = info;
  e.key = keys_.Copy(row.key);
  e.value = *row.value;
  e.revision = row.revision;
  e.create_revision = row.create_revision;
  entries_.push_back(&e);
  unpublished_.push_back(&e);
  if (unpublished_.size() >= batch_) Publish();
}

void Predecoder::Publish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    published_.insert(published_.end(), unpublished_.begin(), unpublished_.end());
  }
  unpublished_.clear();
  cv_.notify_one();
}

Predecoder::Entry* Predecoder::Claim(size_t limit) {
  if (next_ >= limit) return nullptr;
  return published_[next_++];
}

void Predecoder::Decode(Entry& e) {
  Result<ObjectPtr> o =
      MakeStoredObject(*e.info, std::string(e.key), e.value, e.revision, e.create_revision);
  e.value.reset();
  // A row that does not decode is left to the cache, which reports it.
  if (!o) return;
  e.object = std::move(*o);
  decoded_.fetch_add(1, std::memory_order_relaxed);
}

void Predecoder::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (Entry* e = Claim(published_.size())) {
      lock.unlock();
      Decode(*e);
      lock.lock();
      continue;
    }
    if (done_) return;
    cv_.wait(lock);
  }
}

void Predecoder::Finish() {
  if (finished_) return;
  finished_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    published_.insert(published_.end(), unpublished_.begin(), unpublished_.end());
    done_ = true;
  }
  unpublished_.clear();
  cv_.notify_one();
  // This thread decodes the rest alongside the worker.
  std::unique_lock<std::mutex> lock(mu_);
  while (Entry* e = Claim(published_.size())) {
    lock.unlock();
    Decode(*e);
    lock.lock();
  }
  lock.unlock();
  worker_.join();
  keys_ = core::MappedArena();  // keys are read only while decoding
}

ObjectPtr Predecoder::Take(store::Revision revision, std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), revision,
                             [](const Entry* e, store::Revision r) { return e->revision > r; });
  if (it == entries_.end() || (*it)->revision != revision) return nullptr;
  const Entry& e = **it;
  if (!e.object || e.object->key != key) return nullptr;
  return e.object;
}

}  // namespace kt::server
