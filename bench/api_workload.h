// The pod of the API benchmarks (api_load over HTTP, schema_bench in process): ~2.6 KB of
// realistic JSON, as a controller-made pod looks when it is created: labels, annotations, an
// owner reference, two containers with ports, env, resources, volume mounts and a probe, two
// volumes, three tolerations.
#pragma once

#include <string>

namespace kt::bench {

// `noexecute_tolerations`: with the not-ready/unreachable NoExecute tolerations of 300 s (as
// DefaultTolerationSeconds would have added); without, the server's admission adds its own.
inline std::string ApiPodJson(const std::string& ns, const std::string& name,
                              const std::string& node, long i, bool noexecute_tolerations = true) {
  const std::string app = "web-" + std::to_string(i % 500);
  std::string p;
  p.reserve(2600);
  p += R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" +
       ns + R"(",)";
  p += R"("labels":{"app":")" + app +
       R"(","pod-template-hash":"5d8f7c9b4d","tier":"frontend","team":"team-)" +
       std::to_string(i % 7) + R"("},)";
  p +=
      R"("annotations":{"kubectl.kubernetes.io/default-container":"app","prometheus.io/scrape":"true","prometheus.io/port":"9090"},)";
  p +=
      R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":")" + app +
      R"(-5d8f7c9b4d","uid":"6c1b7a52-3f0e-4d7b-9a43-2b8f1e0c9d11","controller":true,"blockOwnerDeletion":true}]},)";
  p += R"("spec":{"nodeName":")" + node + R"(","containers":[)";
  p +=
      R"({"name":"app","image":"registry.example.com/team/web:1.27.3","imagePullPolicy":"IfNotPresent",)";
  p += R"("args":["--port=8080","--log-level=info"],)";
  p +=
      R"("ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"name":"metrics","containerPort":9090,"protocol":"TCP"}],)";
  p +=
      R"("env":[{"name":"POD_NAME","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}},{"name":"LOG_FORMAT","value":"json"}],)";
  p +=
      R"("resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":"500m","memory":"256Mi"}},)";
  p +=
      R"("volumeMounts":[{"name":"config","mountPath":"/etc/app","readOnly":true},{"name":"kube-api-access","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}],)";
  p +=
      R"("livenessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},"initialDelaySeconds":10,"periodSeconds":10,"timeoutSeconds":1,"successThreshold":1,"failureThreshold":3},)";
  p += R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},)";
  p +=
      R"({"name":"proxy","image":"registry.example.com/infra/proxy:2.4.1","imagePullPolicy":"IfNotPresent",)";
  p += R"("ports":[{"name":"proxy","containerPort":15001,"protocol":"TCP"}],)";
  p +=
      R"("resources":{"requests":{"cpu":"50m","memory":"64Mi"},"limits":{"cpu":"200m","memory":"128Mi"}},)";
  p += R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],)";
  p += R"("volumes":[{"name":"config","configMap":{"name":"web-config","defaultMode":420}},)";
  p +=
      R"({"name":"kube-api-access","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}}],"defaultMode":420}}],)";
  p += R"("restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",)";
  p +=
      R"("serviceAccountName":"default","securityContext":{},"schedulerName":"default-scheduler",)";
  p += R"("tolerations":[)";
  if (noexecute_tolerations) {
    p +=
        R"({"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},)";
    p +=
        R"({"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},)";
  }
  p += R"({"key":"dedicated","operator":"Equal","value":"web","effect":"NoSchedule"}],)";
  p += R"("priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"}})";
  return p;
}

}  // namespace kt::bench
