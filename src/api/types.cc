#include "api/types.h"

#include <algorithm>

namespace kt::api {

namespace {

// Sets key → value in a vector of pairs kept sorted by key. Decoded maps usually arrive sorted
// (Go encoders sort map keys), so appending is the common case and is checked first.
template <class Entries, class V>
void SortedSet(Entries& entries, std::string key, V value) {
  if (entries.empty() || entries.back().first < key) {
    entries.emplace_back(std::move(key), std::move(value));
    return;
  }
  auto it = std::lower_bound(entries.begin(), entries.end(), key,
                             [](const auto& e, const std::string& k) { return e.first < k; });
  if (it != entries.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    entries.emplace(it, std::move(key), std::move(value));
  }
}

template <class Entries>
auto SortedGet(const Entries& entries, std::string_view key) -> decltype(&entries[0].second) {
  auto it = std::lower_bound(entries.begin(), entries.end(), key,
                             [](const auto& e, std::string_view k) { return e.first < k; });
  if (it != entries.end() && it->first == key) return &it->second;
  return nullptr;
}

}  // namespace

void StringMap::Set(std::string key, std::string value) {
  SortedSet(entries_, std::move(key), std::move(value));
}

const std::string* StringMap::Get(std::string_view key) const { return SortedGet(entries_, key); }

void ResourceList::Set(std::string name, Quantity q) { SortedSet(entries_, std::move(name), q); }

const Quantity* ResourceList::Get(std::string_view name) const { return SortedGet(entries_, name); }

}  // namespace kt::api
