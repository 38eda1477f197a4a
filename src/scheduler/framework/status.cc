#include "scheduler/framework/status.h"

namespace kt::scheduler {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
    case Code::kPending:
      return "Pending";
  }
  return "Unknown";
}

Status::Status(Code code, std::vector<std::string> reasons) : code_(code) {
  if (!reasons.empty()) {
    reasons_ = std::make_shared<const std::vector<std::string>>(std::move(reasons));
  }
}

const std::vector<std::string>& Status::Reasons() const {
  static const std::vector<std::string> kNone;
  return reasons_ ? *reasons_ : kNone;
}

std::string Status::Message() const {
  std::string out;
  for (const std::string& r : Reasons()) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out;
}

}  // namespace kt::scheduler
