#include "core/taint.h"

#include <charconv>

namespace kt {

std::optional<int64_t> ParseCanonicalInt64(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s != "0") {
    size_t i = s[0] == '-' ? 1 : 0;
    if (i >= s.size() || s[i] < '1' || s[i] > '9') return std::nullopt;
    for (size_t j = i + 1; j < s.size(); ++j) {
      if (s[j] < '0' || s[j] > '9') return std::nullopt;
    }
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

bool ToleratesTaint(const Toleration& toleration, const Taint& taint,
                    bool enable_comparison_operators) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  const std::string& op = toleration.op;
  if (op.empty() || op == kOpEqual) return toleration.value == taint.value;
  if (op == kOpExists) return true;
  if (op == kOpLt || op == kOpGt) {
    if (!enable_comparison_operators) return false;
    return CompareNumericValues(toleration.value, taint.value, op);
  }
  return false;
}

bool CompareNumericValues(std::string_view toleration_value, std::string_view taint_value,
                          std::string_view op) {
  if (op != kOpLt && op != kOpGt) return false;
  std::optional<int64_t> tol = ParseCanonicalInt64(toleration_value);
  std::optional<int64_t> val = ParseCanonicalInt64(taint_value);
  if (!tol || !val) return false;
  return op == kOpLt ? *val < *tol : *val > *tol;
}

size_t HashValue(const Toleration& t) {
  const std::hash<std::string_view> hash;
  size_t h = hash(t.key);
  for (std::string_view f :
       {std::string_view(t.op), std::string_view(t.value), std::string_view(t.effect)}) {
    h = h * 31 + hash(f);
  }
  return h * 31 + (t.toleration_seconds ? std::hash<int64_t>()(*t.toleration_seconds) + 1 : 0);
}

bool TolerationsTolerateTaint(std::span<const Toleration> tolerations, const Taint& taint,
                              bool enable_comparison_operators) {
  for (const Toleration& t : tolerations) {
    if (ToleratesTaint(t, taint, enable_comparison_operators)) return true;
  }
  return false;
}

bool TaintFilterKeeps(TaintFilter filter, const Taint& taint) {
  switch (filter) {
    case TaintFilter::kAll:
      return true;
    case TaintFilter::kNone:
      return false;
    case TaintFilter::kNoScheduleOrNoExecute:
      return taint.effect == kEffectNoSchedule || taint.effect == kEffectNoExecute;
    case TaintFilter::kNoExecute:
      return taint.effect == kEffectNoExecute;
    case TaintFilter::kPreferNoSchedule:
      return taint.effect == kEffectPreferNoSchedule;
  }
  return true;
}

const Taint* FindMatchingUntoleratedTaint(std::span<const Taint> taints,
                                          std::span<const Toleration> tolerations,
                                          TaintFilter filter, bool enable_comparison_operators) {
  for (const Taint& taint : taints) {
    if (!TaintFilterKeeps(filter, taint)) continue;
    if (!TolerationsTolerateTaint(tolerations, taint, enable_comparison_operators)) return &taint;
  }
  return nullptr;
}

std::optional<std::vector<const Toleration*>> GetMatchingTolerations(
    std::span<const Taint> taints, std::span<const Toleration> tolerations,
    bool enable_comparison_operators) {
  std::vector<const Toleration*> used;
  if (taints.empty()) return used;
  if (tolerations.empty()) return std::nullopt;
  used.reserve(taints.size());
  for (const Taint& taint : taints) {
    const Toleration* match = nullptr;
    for (const Toleration& t : tolerations) {
      if (ToleratesTaint(t, taint, enable_comparison_operators)) {
        match = &t;
        break;
      }
    }
    if (match == nullptr) return std::nullopt;
    used.push_back(match);
  }
  return used;
}

int64_t MinTolerationSeconds(std::span<const Toleration* const> used) {
  if (used.empty()) return 0;
  int64_t min = -1;
  for (const Toleration* t : used) {
    if (!t->toleration_seconds) continue;
    int64_t s = *t->toleration_seconds;
    if (s <= 0) return 0;
    if (min < 0 || s < min) min = s;
  }
  return min;
}

bool MatchTaint(const Taint& a, const Taint& b) { return a.key == b.key && a.effect == b.effect; }

bool MatchToleration(const Toleration& a, const Toleration& b) {
  return a.key == b.key && a.effect == b.effect && a.op == b.op && a.value == b.value;
}

std::string TaintToString(const Taint& taint) {
  std::string out = taint.key;
  if (taint.effect.empty()) {
    if (!taint.value.empty()) {
      out += '=';
      out += taint.value;
      out += ':';
    }
    return out;
  }
  if (!taint.value.empty()) {
    out += '=';
    out += taint.value;
  }
  out += ':';
  out += taint.effect;
  return out;
}

}  // namespace kt
