#include "store/store.h"

#include <future>
#include <utility>

#include "store/internal/mvcc_index.h"

namespace kt::store {

namespace {

WriteOp Op(WriteOp::Type type, std::string key, Bytes value, Revision expected_mod_revision) {
  WriteOp op;
  op.type = type;
  op.key = std::move(key);
  op.value = std::move(value);
  op.expected_mod_revision = expected_mod_revision;
  return op;
}

}  // namespace

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  // Every key has this prefix (or it is all 0xff bytes): range to the end of the key space.
  return std::string(1, '\0');
}

bool KeyRange::Contains(std::string_view k) const {
  if (range_end.empty()) return k == key;
  if (k < key) return false;
  if (range_end.size() == 1 && range_end[0] == '\0') return true;
  return k < range_end;
}

void Store::CreateAsync(std::string key, Bytes value, WriteCallback done) {
  Write(Op(WriteOp::Type::kCreate, std::move(key), std::move(value), 0), std::move(done));
}

void Store::UpdateAsync(std::string key, Bytes value, Revision expected_mod_revision,
                        WriteCallback done) {
  Write(Op(WriteOp::Type::kUpdate, std::move(key), std::move(value), expected_mod_revision),
        std::move(done));
}

void Store::DeleteAsync(std::string key, Revision expected_mod_revision, WriteCallback done) {
  Write(Op(WriteOp::Type::kDelete, std::move(key), nullptr, expected_mod_revision),
        std::move(done));
}

Result<WriteResult> Store::WriteSync(WriteOp op) {
  if (internal::InWriteCompletion()) {
    return Err(
        Internal("synchronous store write from a write callback would deadlock; "
                 "use the asynchronous form"));
  }
  std::promise<Result<WriteResult>> promise;
  std::future<Result<WriteResult>> future = promise.get_future();
  Write(std::move(op), [&promise](Result<WriteResult> r) { promise.set_value(std::move(r)); });
  return future.get();
}

Result<WriteResult> Store::Create(std::string key, Bytes value) {
  return WriteSync(Op(WriteOp::Type::kCreate, std::move(key), std::move(value), 0));
}

Result<WriteResult> Store::Update(std::string key, Bytes value, Revision expected_mod_revision) {
  return WriteSync(
      Op(WriteOp::Type::kUpdate, std::move(key), std::move(value), expected_mod_revision));
}

Result<WriteResult> Store::Delete(std::string key, Revision expected_mod_revision) {
  return WriteSync(Op(WriteOp::Type::kDelete, std::move(key), nullptr, expected_mod_revision));
}

}  // namespace kt::store
