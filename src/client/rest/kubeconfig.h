// Where an API server is and how to talk to it, from a kubeconfig file as kubectl reads it
// (clientcmd): the current context (or a named one), its cluster's server URL and TLS settings,
// and its user's credentials.
//
//   Result<RestConfig> c = LoadKubeconfig("/root/.kube/config");
//   c->server;   // "https://127.0.0.1:6443"
//
// Supported: cluster server, certificate-authority(-data), insecure-skip-tls-verify,
// tls-server-name; user token, tokenFile, client-certificate(-data), client-key(-data); the
// context's namespace. Relative file paths are relative to the kubeconfig's directory, as
// kubectl resolves them. Not supported (an error naming the field): exec and auth-provider
// plugins, username/password.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace kt::client {

struct RestConfig {
  std::string server;  // "https://host:port[/prefix]"
  std::string ca_pem;  // trusted CA certificates (PEM); empty: the system's
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // SNI and verification name; empty: the URL's host
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string bearer_token;
  std::string namespace_ = "default";
};

// Reads `path` (context "" = current-context).
Result<RestConfig> LoadKubeconfig(const std::string& path, std::string_view context = "");
// The same from text; `dir` resolves relative file paths.
Result<RestConfig> ParseKubeconfig(std::string_view text, const std::string& dir,
                                   std::string_view context = "");

// The kubeconfig kubectl would use: $KUBECONFIG (its first file), else ~/.kube/config.
std::string DefaultKubeconfigPath();

// RFC 4648 base64, as kubeconfig *-data fields hold it (whitespace ignored).
Result<std::string> DecodeBase64(std::string_view in);

}  // namespace kt::client
