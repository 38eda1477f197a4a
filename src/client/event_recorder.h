// Event recorders: how components report what they did as Kubernetes Events, with client-go's
// two recorders' rules for repeats, so that `kubectl describe` and `kubectl get events` read as
// they do against upstream components.
//
//   - NewEventsV1Recorder (client-go tools/events, used by kube-scheduler): events.k8s.io/v1
//     semantics. An event is identified by (type, action, reason, reporting controller and
//     instance, regarding, related); its first repeat turns it into a series (count 2) with one
//     PATCH, later repeats only count locally; every 6 minutes a quiet series gets its final
//     count and is forgotten, and every 30 minutes a live one is refreshed.
//   - NewCoreV1Recorder (client-go tools/record, used by kube-controller-manager): identical
//     events raise `count` and `lastTimestamp` with a PATCH; more than 10 different messages for
//     one object and reason within 10 minutes are combined ("(combined from similar events): ");
//     each source may send 25 events about one object, then one every 5 minutes.
//
// Both store core/v1 Events (the server's storage form of events.k8s.io/v1 too): the first sets
// eventTime, series, action, reportingComponent and reportingInstance; the second source,
// firstTimestamp, lastTimestamp and count.
//
//   auto recorder = NewEventsV1Recorder(client, clock, "default-scheduler",
//                                       "default-scheduler-host1");
//   recorder->Eventf(RefOf(*pod), nullptr, "Normal", "Scheduled", "Binding",
//                    "Successfully assigned default/nginx to node1");
//
// Writes are asynchronous and never block the caller; failures are retried as client-go does
// (up to 12 tries, 10 s apart) and then dropped. Thread safety: every method is thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "api/types.h"
#include "client/client.h"
#include "client/clock.h"
#include "server/object.h"

namespace kt::client {

using ObjectRef = api::ObjectReference;

// The reference to a stored object at its current resourceVersion.
ObjectRef RefOf(const server::StoredObject& object);

inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // Records an event about `regarding` (and `related`, which may be null). `type` is Normal or
  // Warning; anything else is dropped, as upstream. The core/v1 recorder has no action or
  // related: it ignores them.
  virtual void Eventf(const ObjectRef& regarding, const ObjectRef* related, std::string_view type,
                      std::string_view reason, std::string_view action, std::string note) = 0;
  // Stops the periodic work; pending writes still complete.
  virtual void Stop() = 0;
};

std::unique_ptr<EventRecorder> NewEventsV1Recorder(Client* client, Clock* clock,
                                                   std::string reporting_controller,
                                                   std::string reporting_instance);
std::unique_ptr<EventRecorder> NewCoreV1Recorder(Client* client, Clock* clock,
                                                 std::string component, std::string host);

// client-go's event names: "<regarding name>.<hex of the time in ns>".
std::string EventName(std::string_view object_name, Time t);

}  // namespace kt::client
