// Shared, interned lists for the typed views.
//
// The pods of one workload carry equal labels, annotations, owner references, containers and
// tolerations: their controller stamps them from one template. A typed view holds such a list
// as a SharedList: a pointer to an immutable std::vector that equal lists share. Decoding
// interns each list (Intern): it is replaced by an equal list already held by some live object,
// when there is one. 150,000 replicas of a few hundred templates so hold a few hundred lists
// rather than 150,000.
//
//   SharedList<Toleration> t = {tol1, tol2};  // reads like a const std::vector
//   for (const Toleration& x : t) ...
//   t.push_back(tol3);                        // copy-on-write: never changes a shared list
//   t.Intern();                               // now shares the pool's equal list, if any
//
// Thread safety: a SharedList is a value (like std::vector): concurrent reads are safe,
// a write needs exclusive access to that SharedList. The lists it points to are never changed
// while shared. The intern pool of each element type is guarded by its own mutex.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kt::api {

// Hash mixing (boost::hash_combine's constant, 64-bit).
inline size_t HashMix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

inline size_t HashValue(const std::string& s) { return std::hash<std::string>()(s); }
template <class A, class B>
size_t HashValue(const std::pair<A, B>& p) {
  return HashMix(HashValue(p.first), HashValue(p.second));
}

// Whether two values are the same in every respect, as interning needs; equality unless a
// type says otherwise (a Quantity's == ignores its format, sharing must not).
template <class T>
bool Identical(const T& a, const T& b) {
  return a == b;
}

namespace internal {

// The live, distinct lists of type V (a std::vector) handed out by Intern. Entries that only the
// pool still holds are dropped by a sweep that runs when the pool has doubled since the last one,
// so the pool stays within twice the live distinct values and interning costs O(1) amortized.
template <class V>
class InternPool {
 public:
  static InternPool& Get() {
    static InternPool* pool = new InternPool;  // never destroyed: used until exit
    return *pool;
  }

  // The pool's value equal to *v (hash `h`), inserting v when there is none.
  std::shared_ptr<V> Intern(std::shared_ptr<V> v, size_t h) {
    std::lock_guard<std::mutex> lock(mu_);
    auto [first, last] = entries_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      if (std::equal(it->second->begin(), it->second->end(), v->begin(), v->end(),
                     [](const auto& a, const auto& b) { return Identical(a, b); })) {
        return it->second;
      }
    }
    if (entries_.size() >= next_sweep_) Sweep();
    entries_.emplace(h, v);
    return v;
  }

  // Distinct values held (for tests and statistics).
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

 private:
  void Sweep() {
    // use_count() == 1: only the pool holds it, and nobody can take a new reference but
    // through Intern, under mu_.
    std::erase_if(entries_, [](const auto& e) { return e.second.use_count() == 1; });
    next_sweep_ = std::max<size_t>(1024, 2 * entries_.size());
  }

  std::mutex mu_;
  std::unordered_multimap<size_t, std::shared_ptr<V>> entries_;
  size_t next_sweep_ = 1024;
};

}  // namespace internal

// An immutable-by-default list, shared among equal lists once interned. Reads like a
// const std::vector<T> (and converts to one, and to std::span<const T>); writes copy first
// when the list is shared. T needs operator== and a HashValue(const T&) (and an Identical(a, b)
// when == is looser than sameness) found by ADL.
template <class T>
class SharedList {
 public:
  using value_type = T;
  using Vector = std::vector<T>;
  using const_iterator = typename Vector::const_iterator;
  using iterator = const_iterator;
  using size_type = size_t;

  SharedList() = default;
  SharedList(Vector v)  // NOLINT(google-explicit-constructor): a list is a list
      : p_(v.empty() ? nullptr : std::make_shared<Vector>(std::move(v))) {}
  SharedList(std::initializer_list<T> v) : SharedList(Vector(v)) {}

  const Vector& get() const { return p_ ? *p_ : Empty(); }
  operator const Vector&() const { return get(); }       // NOLINT(google-explicit-constructor)
  operator std::span<const T>() const { return get(); }  // NOLINT(google-explicit-constructor)

  const_iterator begin() const { return get().begin(); }
  const_iterator end() const { return get().end(); }
  size_t size() const { return p_ ? p_->size() : 0; }
  bool empty() const { return size() == 0; }
  const T& operator[](size_t i) const { return (*p_)[i]; }
  const T& front() const { return p_->front(); }
  const T& back() const { return p_->back(); }
  const T* data() const { return get().data(); }

  // The list to change, copied first when it is shared (with other lists or the pool).
  Vector& Mutable() {
    if (!p_) {
      p_ = std::make_shared<Vector>();
    } else if (p_.use_count() > 1) {
      p_ = std::make_shared<Vector>(*p_);
    }
    return *p_;
  }
  void push_back(T v) { Mutable().push_back(std::move(v)); }
  template <class... A>
  T& emplace_back(A&&... a) {
    return Mutable().emplace_back(std::forward<A>(a)...);
  }
  void clear() { p_.reset(); }

  // Shares the pool's list equal to this one (adding this one when there is none). An empty
  // list holds nothing and stays so.
  void Intern() {
    if (!p_) return;
    if (p_->empty()) {
      p_.reset();
      return;
    }
    size_t h = p_->size();
    for (const T& x : *p_) h = HashMix(h, HashValue(x));
    p_ = internal::InternPool<Vector>::Get().Intern(std::move(p_), h);
  }

  // Whether both hold the very same list (then they are equal without comparing elements).
  bool SharesWith(const SharedList& o) const { return p_ == o.p_; }

  friend bool operator==(const SharedList& a, const SharedList& b) {
    return a.p_ == b.p_ || a.get() == b.get();
  }
  friend bool operator==(const SharedList& a, const Vector& b) { return a.get() == b; }

  // Distinct lists of this element type held by the pool.
  static size_t PoolSize() { return internal::InternPool<Vector>::Get().size(); }

 private:
  static const Vector& Empty() {
    static const Vector empty;
    return empty;
  }

  std::shared_ptr<Vector> p_;  // null: empty
};

}  // namespace kt::api
