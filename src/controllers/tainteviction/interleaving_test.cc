// Seed 002's flapping sequence, generalized (DESIGN.md invariant 3): over seeded random
// interleavings of NoExecute taints added and removed, cordons, pods deleted and re-created
// under the same name with other tolerations, and delete failures (errors, conflicts, timeouts),
// every pod that must go is deleted exactly once — at its due time when no delete failed — and
// no other pod is.
//
// The expected behaviour comes from a small model written for this test (not from the
// controller's code): which taints are on the node, which toleration class each pod has, and
// upstream's countdown rule (started when first seen tolerating every NoExecute taint for a
// finite time, kept while it runs, dropped when that no longer holds).
//
// KUBETAINT_INTERLEAVINGS sets the number of interleavings (default 10,000).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "controllers/tainteviction/testing.h"

namespace kt::controllers::tainteviction {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Cluster;
using testing::Fault;

// How a pod tolerates the two NoExecute taints "a" and "b".
enum class Tolerates {
  kNothing,
  kAForEver,
  kAForT,
  kAForEverBForT,
  kAForT1BForT2,
  kEverything,  // key "", operator Exists
};

struct PodModel {
  std::string uid;
  Tolerates tolerates = Tolerates::kNothing;
  int64_t t1 = 0, t2 = 0;
  bool alive = true;
  bool faulted = false;  // a delete of it failed: only a lower bound on its time holds
  // The countdown the controller should have running, and when the pod is due.
  std::optional<client::Time> started;
  std::optional<client::Time> due;
};

// -1: stays; 0: now; > 0: after that many seconds. `a`, `b`: the node has that taint.
int64_t Verdict(const PodModel& p, bool a, bool b) {
  if (!a && !b) return -1;
  switch (p.tolerates) {
    case Tolerates::kNothing:
      return 0;
    case Tolerates::kAForEver:
      return b ? 0 : -1;
    case Tolerates::kAForT:
      return b ? 0 : p.t1;
    case Tolerates::kAForEverBForT:
      return b ? p.t1 : -1;
    case Tolerates::kAForT1BForT2:
      if (a && b) return std::min(p.t1, p.t2);
      return a ? p.t1 : p.t2;
    case Tolerates::kEverything:
      return -1;
  }
  return -1;
}

std::string Tolerations(const PodModel& p) {
  auto tol = [](const char* key, int64_t seconds) {
    std::string t = R"({"key":")";
    t.append(key).append(R"(","operator":"Exists","effect":"NoExecute")");
    if (seconds >= 0) t.append(",\"tolerationSeconds\":").append(std::to_string(seconds));
    return t.append("}");
  };
  switch (p.tolerates) {
    case Tolerates::kNothing:
      return "";
    case Tolerates::kAForEver:
      return tol("a", -1);
    case Tolerates::kAForT:
      return tol("a", p.t1);
    case Tolerates::kAForEverBForT:
      return tol("a", -1) + "," + tol("b", p.t1);
    case Tolerates::kAForT1BForT2:
      return tol("a", p.t1) + "," + tol("b", p.t2);
    case Tolerates::kEverything:
      return R"({"operator":"Exists"})";
  }
  return "";
}

class Interleaving {
 public:
  Interleaving(Cluster& c, int index, uint32_t seed)
      : c_(c), rng_(seed), node_("n" + std::to_string(index)) {
    pod_names_ = {"web-" + std::to_string(index) + "-0", "web-" + std::to_string(index) + "-1"};
  }

  void Run() {
    c_.client->ClearRecords();
    start_ = c_.clock.Now();
    c_.SetNodeTaints(node_, {});
    for (const std::string& name : pod_names_) Create(name);
    Observe();
    const int steps = 6 + static_cast<int>(rng_() % 6);
    for (int i = 0; i < steps && !::testing::Test::HasFailure(); ++i) {
      static constexpr int kGapsMs[] = {0, 0, 500, 1000, 2000, 3000};
      Wait(milliseconds(kGapsMs[rng_() % 6]));
      Act();
      Observe();
    }
    Wait(seconds(45));  // every countdown (at most 20 s) and retry (at most 5 s apart) runs out
    Finish();
  }

 private:
  void Create(const std::string& name) {
    PodModel p;
    static constexpr int64_t kTimes[] = {1, 2, 5, 20};
    p.tolerates = static_cast<Tolerates>(rng_() % 6);
    p.t1 = kTimes[rng_() % 4];
    p.t2 = kTimes[rng_() % 4];
    std::vector<std::string> tolerations;
    if (const std::string t = Tolerations(p); !t.empty()) tolerations.push_back(t);
    p.uid = c_.CreatePod(name, node_, tolerations);
    log_.append(" [").append(name).append(" ").append(p.uid.substr(0, 8)).append(" class ");
    log_.append(std::to_string(static_cast<int>(p.tolerates))).append(" t1 ");
    log_.append(std::to_string(p.t1)).append(" t2 ").append(std::to_string(p.t2)).append("]");
    current_[name] = history_.size();
    history_.push_back(std::move(p));
  }

  void SetTaints() {
    std::vector<std::string> taints;
    if (a_) taints.push_back(R"({"key":"a","value":"x","effect":"NoExecute"})");
    if (noschedule_) taints.push_back(R"({"key":"c","effect":"NoSchedule"})");
    if (b_) taints.push_back(R"({"key":"b","effect":"NoExecute"})");
    c_.SetNodeTaints(node_, taints);
  }

  void Act() {
    const std::string& name = pod_names_[rng_() % pod_names_.size()];
    const unsigned action = rng_() % 9;
    log_.append(" +").append(std::to_string((c_.clock.Now() - start_) / milliseconds(1)));
    log_.append("ms:").append(std::to_string(action)).append(name.substr(name.size() - 1));
    switch (action) {
      case 0:
      case 1:
        a_ = !a_;
        SetTaints();
        break;
      case 2:
        b_ = !b_;
        SetTaints();
        break;
      case 3:
        noschedule_ = !noschedule_;  // a NoSchedule taint (a cordon's) changes nothing here
        SetTaints();
        break;
      case 4:
      case 5:  // the pod is deleted (if still there) and re-created under the same name
        if (Model(name).alive) {
          c_.DeletePod(name);
          Model(name).alive = false;
          user_deleted_.insert(Model(name).uid);
        }
        Create(name);
        break;
      case 6:
        if (Model(name).alive) {
          c_.DeletePod(name);
          Model(name).alive = false;
          user_deleted_.insert(Model(name).uid);
        }
        break;
      case 7: {
        static constexpr Fault kFaults[] = {Fault::kError, Fault::kConflict, Fault::kTimeout};
        std::vector<Fault> faults;
        for (int n = 1 + static_cast<int>(rng_() % 3); n > 0; --n)
          faults.push_back(kFaults[rng_() % 3]);
        c_.client->InjectDeleteFaults(faults);
        break;
      }
      default:
        break;  // time passes
    }
  }

  PodModel& Model(const std::string& name) { return history_[current_.at(name)]; }

  // The controller saw the current state at this instant: update the countdowns.
  void Observe() {
    c_.Settle();
    const client::Time now = c_.clock.Now();
    for (PodModel& p : history_) {
      if (!p.alive || (p.due.has_value() && *p.due <= now)) continue;
      const int64_t v = Verdict(p, a_, b_);
      if (v < 0) {
        p.started.reset();
        p.due.reset();
      } else if (v == 0) {
        p.due = now;
      } else if (!p.started || *p.started == now) {
        if (!p.started) p.started = now;
        p.due = *p.started + seconds(v);
      }
    }
    CheckDeletes();
  }

  // Moves time forward, checking at each step that pods leave exactly when due.
  void Wait(client::Duration d) {
    const client::Time end = c_.clock.Now() + d;
    client::Time next;
    while (c_.clock.NextDeadline(&next) && next <= end) {
      c_.clock.AdvanceTo(next);
      c_.Settle();
      CheckDeletes();
    }
    c_.clock.AdvanceTo(end);
    c_.Settle();
    CheckDeletes();
  }

  void CheckDeletes() {
    const client::Time now = c_.clock.Now();
    std::map<std::string, std::vector<client::Time>> by_uid;
    for (const auto& call : c_.client->Deletes()) {
      if (call.deleted) by_uid[call.uid].push_back(call.at);
    }
    const std::vector<std::string> refused = c_.client->Refused();
    for (PodModel& p : history_) {
      if (!p.faulted && std::find(refused.begin(), refused.end(), p.uid) != refused.end()) {
        p.faulted = true;
      }
      const auto it = by_uid.find(p.uid);
      const size_t deletes = it == by_uid.end() ? 0 : it->second.size();
      ASSERT_LE(deletes, 1u) << "pod " << p.uid << " deleted twice";
      if (deletes == 1) {
        const client::Time at = it->second[0];
        ASSERT_TRUE(p.due.has_value()) << "pod " << p.uid << " evicted, but never due";
        ASSERT_GE(at, *p.due) << "pod " << p.uid << " evicted before its time";
        if (!p.faulted) {
          ASSERT_EQ(at, *p.due) << "pod " << p.uid << " evicted late;" << log_;
        }
        p.alive = false;
        continue;
      }
      if (p.alive && p.due && *p.due <= now && !p.faulted) {
        FAIL() << "pod " << p.uid << " due at +" << (*p.due - start_).count()
               << " ns is still there at +" << (now - start_).count() << " ns;" << log_;
      }
    }
  }

  void Finish() {
    // Every pod that was due is gone; every other pod of the iteration is still there.
    for (PodModel& p : history_) {
      if (user_deleted_.count(p.uid) != 0) continue;
      const bool due = p.due.has_value() && *p.due <= c_.clock.Now();
      bool exists = false;
      for (const std::string& name : pod_names_) {
        server::ObjectPtr o = c_.GetPod(name);
        exists = exists || (o && o->meta().uid == p.uid);
      }
      if (due) {
        // After failed deletes, a taint removed before the retry may rightly save the pod; if
        // the node still says it must go, the retries got it.
        if (!p.faulted || Verdict(p, a_, b_) >= 0) {
          EXPECT_FALSE(exists) << "pod " << p.uid << " due but never evicted";
        }
      } else if (p.alive) {
        EXPECT_TRUE(exists) << "pod " << p.uid << " evicted but never due";
      }
    }
    for (const std::string& name : pod_names_) {
      if (c_.GetPod(name)) c_.DeletePod(name);
    }
    c_.DeleteNode(node_);
    c_.Settle();
    EXPECT_EQ(c_.controller->PendingCount(), 0u);
  }

  Cluster& c_;
  std::mt19937 rng_;
  std::string node_;
  std::vector<std::string> pod_names_;
  std::vector<PodModel> history_;          // every pod created, in order
  std::map<std::string, size_t> current_;  // the current pod of each name, in history_
  std::set<std::string> user_deleted_;
  bool a_ = false, b_ = false, noschedule_ = false;
  client::Time start_;
  std::string log_;  // what happened, for failure messages
};

TEST(InterleavingTest, EveryDuePodIsEvictedOnceAtItsTimeAndNoOtherPod) {
  int n = 10000;
  if (const char* env = std::getenv("KUBETAINT_INTERLEAVINGS")) n = std::atoi(env);
  Cluster c;
  for (int i = 0; i < n && !::testing::Test::HasFailure(); ++i) {
    SCOPED_TRACE("interleaving " + std::to_string(i) + " (seed " + std::to_string(1000 + i) + ")");
    Interleaving(c, i, static_cast<uint32_t>(1000 + i)).Run();
  }
}

}  // namespace
}  // namespace kt::controllers::tainteviction
