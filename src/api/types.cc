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
  SortedSet(entries_.Mutable(), std::move(key), std::move(value));
}

const std::string* StringMap::Get(std::string_view key) const { return SortedGet(entries_, key); }

void ResourceList::Set(std::string name, Quantity q) { SortedSet(entries_, std::move(name), q); }

const Quantity* ResourceList::Get(std::string_view name) const { return SortedGet(entries_, name); }

namespace {

size_t HashResources(size_t h, const ResourceList& list) {
  h = HashMix(h, list.size());
  for (const auto& [name, q] : list) {
    h = HashMix(h, HashValue(name));
    h = HashMix(h, std::hash<int64_t>()(q.MilliValue()));
    h = HashMix(h, static_cast<size_t>(q.format()));
  }
  return h;
}

bool IdenticalResources(const ResourceList& a, const ResourceList& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.first == y.first && x.second == y.second && x.second.format() == y.second.format();
  });
}

}  // namespace

size_t HashValue(const OwnerReference& o) {
  size_t h = HashValue(o.uid);
  h = HashMix(h, HashValue(o.name));
  h = HashMix(h, HashValue(o.kind));
  h = HashMix(h, HashValue(o.api_version));
  return HashMix(h, (o.controller ? 1 : 0) + (o.block_owner_deletion ? 2 : 0));
}

size_t HashValue(const Container& c) {
  size_t h = HashResources(HashResources(HashValue(c.name), c.requests), c.limits);
  h = HashMix(h, HashValue(c.restart_policy));
  for (const ContainerPort& p : c.ports) {
    h = HashMix(h,
                static_cast<size_t>(p.container_port) * 65537 + static_cast<size_t>(p.host_port));
    h = HashMix(h, HashMix(HashValue(p.protocol), HashValue(p.host_ip)));
  }
  return h;
}

bool Identical(const Container& a, const Container& b) {
  return a.name == b.name && IdenticalResources(a.requests, b.requests) &&
         IdenticalResources(a.limits, b.limits) && a.ports == b.ports &&
         a.restart_policy == b.restart_policy;
}

}  // namespace kt::api
