// The outcome of a plugin at an extension point, as kube-scheduler's framework Status: a code,
// the user-visible reasons, and the plugin that produced it.
//
//   Status s = Status::Unresolvable("node(s) had untolerated taint(s)");
//   s.Message();  // "node(s) had untolerated taint(s)"
//
// Success costs nothing. Reasons are shared and immutable, so a plugin keeps its fixed failure
// statuses as constants and hands out copies at the cost of a reference count.
//
// Thread safety: a value; copies may be used on any thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kt::scheduler {

// Upstream's codes, in upstream's order.
enum class Code : uint8_t {
  kSuccess,
  kError,
  kUnschedulable,                 // this node rejects the pod; preemption may help
  kUnschedulableAndUnresolvable,  // rejects it, and preemption cannot help
  kWait,
  kSkip,
  kPending,
};

// "Success", "Error", "Unschedulable", ...
std::string_view CodeName(Code code);

class Status {
 public:
  Status() = default;  // Success
  Status(Code code, std::vector<std::string> reasons);
  Status(Code code, std::string reason)
      : Status(code, std::vector<std::string>{std::move(reason)}) {}
  explicit Status(Code code) : code_(code) {}

  static Status Unschedulable(std::string reason) {
    return Status(Code::kUnschedulable, std::move(reason));
  }
  static Status Unresolvable(std::string reason) {
    return Status(Code::kUnschedulableAndUnresolvable, std::move(reason));
  }
  static Status Error(std::string message) { return Status(Code::kError, std::move(message)); }
  static Status Skip() { return Status(Code::kSkip); }

  Code code() const { return code_; }
  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  // Unschedulable, UnschedulableAndUnresolvable or Pending (upstream IsRejected).
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable ||
           code_ == Code::kPending;
  }

  const std::vector<std::string>& Reasons() const;
  // The reasons joined with ", ".
  std::string Message() const;

  // The plugin that produced it (a static name); empty for the framework's own statuses.
  std::string_view plugin() const { return plugin_; }
  Status WithPlugin(std::string_view plugin) const {
    Status s = *this;
    s.plugin_ = plugin;
    return s;
  }
  // The same reasons under another code.
  Status WithCode(Code code) const {
    Status s = *this;
    s.code_ = code;
    return s;
  }

 private:
  Code code_ = Code::kSuccess;
  std::string_view plugin_;
  std::shared_ptr<const std::vector<std::string>> reasons_;
};

}  // namespace kt::scheduler
