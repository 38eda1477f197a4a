// api_load: an HTTP load driver for `kubetaint serve` (the API performance figures of
// DESIGN.md "Targets": 5,000 nodes, 150,000 pods on SQLite). Plain POSIX sockets and threads,
// HTTP/1.1 keep-alive, closed loop (each connection sends its next request when the previous
// answer is in, as client-go does): one connection per thread, except `schedule`, whose
// connections share one thread polling them (RunClosedLoopPolled; --driver threads for the
// thread per connection).
//
//   api_load populate --url http://127.0.0.1:PORT --nodes 5000 --pods 150000 --conns 16
//   api_load get      --url URL --conns 1,16 --seconds 4 --runs 3
//   api_load list     --url URL --conns 1,16 --seconds 4 --runs 3
//   api_load patch    --url URL --conns 1,16 --seconds 4 --runs 3
//   api_load watch    --url URL --watchers 100 --events 20 --resource pods|nodes
//   api_load create   --url URL --pods 15000 --conns 16 --runs 2     (extra create runs)
//   api_load startup  --bin build/kubetaint --data-dir DIR --runs 3  (exec -> serving -> GET)
//   api_load schedule --url URL --nodes 5000 --init-pods 1000 --pods 10000 --conns 16 --runs 3
//                     [--workload basic|taints] [--create-only 1] [--driver polled|threads]
//                     (pods created, then bound)
//   api_load evict    --url URL --nodes 1000 --pods-per-node 100 --conns 16   (mass NoExecute)
//   api_load evict-node --url URL --nodes 200 --pods-per-node 110        (one node at a time)
//
// Objects: namespaces ns-0..ns-9; nodes node-1..node-N (~1.3 KB each); pod i is ns-(i%10)/pod-i,
// ~2.6 KB of realistic JSON (bench/api_workload.h: 2 containers with resources, probes, env,
// volumes, 3 tolerations, owner reference), bound to node-((i%N)+1) through spec.nodeName, so
// every node has P/N pods.
//
// bench/api_load.sh runs the whole scenario against the real binary. Every loop here is bounded
// in count and time; sockets time out after 10 s.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api_workload.h"
#include "sched_workload.h"

namespace {

using Clock = std::chrono::steady_clock;

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// --- Flags ---------------------------------------------------------------------------------------

struct Flags {
  std::map<std::string, std::string> values;
  std::string Get(const std::string& name, const std::string& fallback) const {
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  }
  long Int(const std::string& name, long fallback) const {
    auto it = values.find(name);
    return it == values.end() ? fallback : std::strtol(it->second.c_str(), nullptr, 10);
  }
  double Double(const std::string& name, double fallback) const {
    auto it = values.find(name);
    return it == values.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
  }
  std::vector<int> Ints(const std::string& name, const std::string& fallback) const {
    std::vector<int> out;
    std::stringstream ss(Get(name, fallback));
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (!item.empty()) out.push_back(std::atoi(item.c_str()));
    }
    return out;
  }
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "api_load: %s\n", message.c_str());
  std::exit(2);
}

// --- Statistics ----------------------------------------------------------------------------------

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t idx = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  if (idx > 0) --idx;
  return v[std::min(idx, v.size() - 1)];
}
double Median(std::vector<double> v) { return Percentile(std::move(v), 0.5); }

std::string Verdict(double value, double target, bool lower_is_better) {
  char buf[96];
  const bool met = lower_is_better ? value <= target : value >= target;
  std::snprintf(buf, sizeof(buf), "%s (value/target = %.2f)", met ? "MET" : "MISSED",
                value / target);
  return buf;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// --- HTTP client
// -----------------------------------------------------------------------------------

struct Url {
  std::string host = "127.0.0.1";
  int port = 0;
  bool tls = false;  // https://: TLS with the client certificate of --pki (TlsClient)
};

// The TLS client every https:// connection uses: it trusts DIR/ca.crt and presents
// DIR/admin.crt (a kubetaint data dir's pki/), as the kubeconfig serve writes does.
SSL_CTX* g_tls = nullptr;

void InitTls(const std::string& pki) {
  if (pki.empty()) Die("an https:// --url needs --pki DIR (a data dir's pki/)");
  g_tls = SSL_CTX_new(TLS_client_method());
  if (SSL_CTX_load_verify_locations(g_tls, (pki + "/ca.crt").c_str(), nullptr) != 1 ||
      SSL_CTX_use_certificate_file(g_tls, (pki + "/admin.crt").c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_use_PrivateKey_file(g_tls, (pki + "/admin.key").c_str(), SSL_FILETYPE_PEM) != 1) {
    Die("--pki " + pki + ": cannot load ca.crt, admin.crt and admin.key");
  }
  SSL_CTX_set_verify(g_tls, SSL_VERIFY_PEER, nullptr);
  // Read whole records at once (as Go's crypto/tls reads through a buffer): without it OpenSSL
  // reads each record's 5-byte header, then its body, two system calls a response.
  SSL_CTX_set_read_ahead(g_tls, 1);
}

Url ParseUrl(const std::string& url) {
  std::string_view s = url;
  const bool tls = s.starts_with("https://");
  if (tls) s.remove_prefix(8);
  if (s.starts_with("http://")) s.remove_prefix(7);
  while (!s.empty() && s.back() == '/') s.remove_suffix(1);
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) Die("--url must be http://HOST:PORT, got " + url);
  Url u;
  u.host = std::string(s.substr(0, colon));
  u.port = std::atoi(std::string(s.substr(colon + 1)).c_str());
  if (u.port <= 0) Die("--url must be http://HOST:PORT, got " + url);
  u.tls = tls;
  if (tls && g_tls == nullptr) Die("an https:// --url needs --pki DIR (a data dir's pki/)");
  return u;
}

std::string Request(std::string_view method, std::string_view path,
                    std::string_view content_type = {}, std::string_view body = {}) {
  std::string r;
  r.reserve(256 + body.size());
  r.append(method).append(" ").append(path).append(
      " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: api_load/0.1\r\nAccept: application/json\r\n");
  if (!content_type.empty()) r.append("Content-Type: ").append(content_type).append("\r\n");
  if (!body.empty() || method == "POST" || method == "PATCH" || method == "PUT") {
    r.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  r.append("\r\n").append(body);
  return r;
}

bool HeaderIs(std::string_view line, std::string_view name, std::string_view* value) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  }
  std::string_view v = line.substr(name.size() + 1);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.remove_suffix(1);
  *value = v;
  return true;
}

// A response's status line and the headers that frame its body.
struct ResponseHead {
  int status = 0;
  long content_length = -1;  // -1: none given
  bool chunked = false;
  bool close = false;  // "Connection: close"
};

// Parses `head` (up to, not including, the blank line); false if it is not an HTTP/1.x status.
bool ParseHead(std::string_view head, ResponseHead* out) {
  if (!head.starts_with("HTTP/1.") || head.size() < 12) return false;
  *out = ResponseHead();
  out->status = std::atoi(std::string(head.substr(9, 3)).c_str());
  for (size_t p = head.find("\r\n"); p != std::string_view::npos && p < head.size();) {
    const size_t next = head.find("\r\n", p + 2);
    std::string_view line =
        head.substr(p + 2, next == std::string_view::npos ? std::string_view::npos : next - p - 2);
    std::string_view v;
    if (HeaderIs(line, "content-length", &v)) {
      out->content_length = std::atol(std::string(v).c_str());
    } else if (HeaderIs(line, "transfer-encoding", &v)) {
      out->chunked = v.find("chunked") != std::string_view::npos;
    } else if (HeaderIs(line, "connection", &v)) {
      out->close = v.find("close") != std::string_view::npos;
    }
    p = next;
  }
  return true;
}

class HttpConn {
 public:
  HttpConn() = default;
  HttpConn(const HttpConn&) = delete;
  HttpConn& operator=(const HttpConn&) = delete;
  ~HttpConn() { Close(); }

  bool Connect(const Url& url) {
    Close();
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return false;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(url.port));
    if (::inet_pton(AF_INET, url.host.c_str(), &addr.sin_addr) != 1) return false;
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      Close();
      return false;
    }
    if (url.tls) {
      ssl_ = SSL_new(g_tls);
      SSL_set1_host(ssl_, url.host.c_str());
      SSL_set_fd(ssl_, fd_);
      if (SSL_connect(ssl_) != 1) {
        Close();
        return false;
      }
    }
    buf_.clear();
    return true;
  }
  void Close() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    ssl_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ssl_ != nullptr ? SSL_write(ssl_, data.data(), static_cast<int>(data.size()))
                                  : ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Sends `request` and reads one response; returns the status (or -1 on a transport error,
  // after which the connection is closed). The body goes to `body` if given.
  int RoundTrip(std::string_view request, std::string* body) {
    if (fd_ < 0 || !Send(request)) {
      Close();
      return -1;
    }
    int status = ReadResponse(body, /*headers_only=*/false);
    if (status < 0 || close_after_) Close();
    return status;
  }

  // Sends a watch request and reads its header; the stream's bytes then follow in buffer().
  int StartStream(std::string_view request) {
    if (fd_ < 0 || !Send(request)) return -1;
    return ReadResponse(nullptr, /*headers_only=*/true);
  }
  std::string& buffer() { return buf_; }

 private:
  bool ReadMore() {
    char tmp[65536];
    for (;;) {
      ssize_t n =
          ssl_ != nullptr ? SSL_read(ssl_, tmp, sizeof(tmp)) : ::recv(fd_, tmp, sizeof(tmp), 0);
      if (n < 0 && errno == EINTR && ssl_ == nullptr) continue;
      if (n <= 0) return false;
      buf_.append(tmp, static_cast<size_t>(n));
      return true;
    }
  }

  int ReadResponse(std::string* body, bool headers_only) {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (buf_.size() > (1 << 20) || !ReadMore()) return -1;
    }
    ResponseHead h;
    if (!ParseHead(std::string_view(buf_.data(), end), &h)) return -1;
    const int status = h.status;
    const long content_length = h.content_length;
    const bool chunked = h.chunked;
    close_after_ = h.close;
    buf_.erase(0, end + 4);
    if (headers_only) return status;
    if (content_length >= 0) {
      while (buf_.size() < static_cast<size_t>(content_length)) {
        if (!ReadMore()) return -1;
      }
      if (body) body->assign(buf_, 0, static_cast<size_t>(content_length));
      buf_.erase(0, static_cast<size_t>(content_length));
      return status;
    }
    if (chunked) {
      if (body) body->clear();
      for (;;) {
        size_t eol;
        while ((eol = buf_.find("\r\n")) == std::string::npos) {
          if (!ReadMore()) return -1;
        }
        const size_t size = std::strtoul(buf_.substr(0, eol).c_str(), nullptr, 16);
        while (buf_.size() < eol + 2 + size + 2) {
          if (!ReadMore()) return -1;
        }
        if (body) body->append(buf_, eol + 2, size);
        buf_.erase(0, eol + 2 + size + 2);
        if (size == 0) return status;
      }
    }
    // No length: the body runs to the end of the connection.
    while (ReadMore()) {
    }
    if (body) body->swap(buf_);
    buf_.clear();
    close_after_ = true;
    return status;
  }

  int fd_ = -1;
  SSL* ssl_ = nullptr;  // https://
  std::string buf_;
  bool close_after_ = false;
};

// One request on a fresh connection (setup steps).
int OneShot(const Url& url, std::string_view request, std::string* body) {
  HttpConn c;
  if (!c.Connect(url)) return -1;
  return c.RoundTrip(request, body);
}

// A watch over HTTP: its own thread reads the chunked stream and hands each event line, with
// the time its bytes were read, to `on_line`; `on_end` runs once when the stream ends (`stopped`:
// because Stop was called). The buffers are consumed by offset and compacted once per read, so a
// stream of hundreds of thousands of events costs one pass over its bytes.
class WatchStream {
 public:
  using LineFn = std::function<void(std::string_view line, Clock::time_point read_at)>;
  using EndFn = std::function<void(bool stopped)>;

  ~WatchStream() { Stop(); }
  // Sends GET `path` (a watch) and starts reading; false if the server did not answer 200.
  bool Start(const Url& url, const std::string& path, LineFn on_line, EndFn on_end) {
    if (!conn_.Connect(url)) return false;
    if (conn_.StartStream(Request("GET", path)) != 200) return false;
    // A watch may be quiet for long: no read timeout (Stop shuts the socket down instead); a
    // large receive buffer, so that a burst of events does not fill the server's stream queue.
    timeval none{0, 0};
    ::setsockopt(conn_.fd(), SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
    int rcvbuf = 8 << 20;
    ::setsockopt(conn_.fd(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    on_line_ = std::move(on_line);
    on_end_ = std::move(on_end);
    thread_ = std::thread([this] { Run(); });
    return true;
  }
  void Stop() {
    stopping_ = true;
    if (conn_.fd() >= 0) ::shutdown(conn_.fd(), SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    std::string raw = conn_.buffer();  // bytes read with the header
    std::string lines;
    std::vector<char> tmp(1 << 18);
    Clock::time_point read_at = Clock::now();
    bool last_chunk = false;
    while (!last_chunk) {
      // Chunked transfer encoding: "<hex size>\r\n<payload>\r\n", ending with a 0-size chunk.
      size_t pos = 0;
      for (;;) {
        const size_t eol = raw.find("\r\n", pos);
        if (eol == std::string::npos) break;
        const size_t size = std::strtoul(raw.c_str() + pos, nullptr, 16);
        if (raw.size() < eol + 2 + size + 2) break;
        lines.append(raw, eol + 2, size);
        pos = eol + 2 + size + 2;
        if (size == 0) {
          last_chunk = true;
          break;
        }
      }
      raw.erase(0, pos);
      size_t from = 0;
      for (size_t nl; (nl = lines.find('\n', from)) != std::string::npos; from = nl + 1) {
        on_line_(std::string_view(lines).substr(from, nl - from), read_at);
      }
      lines.erase(0, from);
      if (last_chunk) break;
      const ssize_t n = ::recv(conn_.fd(), tmp.data(), tmp.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      read_at = Clock::now();
      raw.append(tmp.data(), static_cast<size_t>(n));
    }
    if (on_end_) on_end_(stopping_.load());
  }

  HttpConn conn_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  LineFn on_line_;
  EndFn on_end_;
};

// --- Objects -------------------------------------------------------------------------------------

constexpr int kNamespaces = 10;

std::string NodeName(long i) { return "node-" + std::to_string(i); }  // 1-based

std::string NodeJson(long i) {
  const std::string name = NodeName(i);
  const std::string zone = "zone-" + std::string(1, static_cast<char>('a' + i % 3));
  const std::string res =
      R"({"cpu":"16","ephemeral-storage":"100Gi","hugepages-2Mi":"0","memory":"64Gi","pods":"110"})";
  std::string n;
  n.reserve(1600);
  n += R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"(","labels":{)";
  n += R"("kubernetes.io/arch":"amd64","kubernetes.io/hostname":")" + name + R"(",)";
  n += R"("kubernetes.io/os":"linux","node.kubernetes.io/instance-type":"m5.4xlarge",)";
  n += R"("topology.kubernetes.io/region":"bench-1","topology.kubernetes.io/zone":")" + zone +
       R"("},"annotations":{"node.alpha.kubernetes.io/ttl":"0",)";
  n += R"("volumes.kubernetes.io/controller-managed-attach-detach":"true"}},)";
  n += R"("spec":{"podCIDR":"10.)" + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256) +
       R"(.0/24","providerID":"kubetaint://)" + name + R"("},)";
  n += R"("status":{"capacity":)" + res + R"(,"allocatable":)" + res + R"(,"conditions":[)";
  n +=
      R"({"type":"MemoryPressure","status":"False","lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available"},)";
  n +=
      R"({"type":"DiskPressure","status":"False","lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"KubeletHasNoDiskPressure","message":"kubelet has no disk pressure"},)";
  n +=
      R"({"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"KubeletReady","message":"kubelet is posting ready status"}],)";
  n += R"("addresses":[{"type":"InternalIP","address":"10.0.)" + std::to_string(i / 250 % 250) +
       "." + std::to_string(i % 250 + 1) + R"("},{"type":"Hostname","address":")" + name +
       R"("}],)";
  n += R"("daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},)";
  n +=
      R"("nodeInfo":{"architecture":"amd64","bootID":"","containerRuntimeVersion":"containerd://1.7.0",)";
  n += R"("kernelVersion":"6.1.0","kubeProxyVersion":"v1.31.0","kubeletVersion":"v1.31.0",)";
  n +=
      R"("machineID":"","operatingSystem":"linux","osImage":"Debian GNU/Linux 12","systemUUID":""}}})";
  return n;
}

std::string PodNamespace(long i) { return "ns-" + std::to_string(i % kNamespaces); }
std::string PodName(long i) { return "pod-" + std::to_string(i); }

// /proc/PID/stat after the ") " that ends comm (field 3, the state, first); "" if unreadable.
std::string ProcStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = all.rfind(')');
  return close == std::string::npos || close + 2 >= all.size() ? "" : all.substr(close + 2);
}

// utime + stime of a process, from /proc/PID/stat (fields 14 and 15).
double ProcCpuSeconds(pid_t pid) {
  const std::string stat = ProcStat(pid);
  if (stat.empty()) return -1;
  std::istringstream rest(stat);
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Busy CPU seconds of the whole host (all cores), from /proc/stat: with the server's and the
// driver's own CPU it tells how much other tenants of a shared machine took during a run.
double HostBusySeconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return (user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The server being measured (--pid), for its CPU time per operation; 0 = unknown.
pid_t g_server_pid = 0;

// --- Closed-loop runner
// ------------------------------------------------------------------------------

// One operation: fills `request` for op number `op` on connection `conn`, and checks the answer.
struct Op {
  std::function<void(int conn, long op, std::string* request)> make;
  std::function<bool(int status, const std::string& body)> ok;
};

struct RunResult {
  std::vector<double> latency_us;  // every successful op
  std::vector<double> done_at_ms;  // completion time since start, every successful op
  long errors = 0;
  double seconds = 0;
  double client_cpu = 0;
  double server_cpu = -1;  // seconds, when --pid is known
  double host_busy = 0;    // seconds of CPU used on the whole host
  std::string first_error;
};

// A closed loop's clocks: the wall time, this process's CPU, the server's (with --pid) and the
// whole host's, from construction to Finish.
struct RunMeter {
  const Clock::time_point start = Clock::now();
  const double cpu0 = CpuSeconds();
  const double server0 = g_server_pid > 0 ? ProcCpuSeconds(g_server_pid) : -1;
  const double host0 = HostBusySeconds();

  void Finish(RunResult* r) const {
    r->seconds = std::chrono::duration<double>(Clock::now() - start).count();
    r->client_cpu = CpuSeconds() - cpu0;
    if (g_server_pid > 0) r->server_cpu = ProcCpuSeconds(g_server_pid) - server0;
    r->host_busy = HostBusySeconds() - host0;
  }
};

// `conns` connections, each sending ops back to back until `max_ops` ops were started in all
// or `seconds` passed (0 = no time limit; a hard cap of `hard_seconds` always applies).
RunResult RunClosedLoop(const Url& url, int conns, long max_ops, double seconds, const Op& op,
                        double hard_seconds = 600) {
  std::atomic<long> next{0};
  std::mutex mu;
  RunResult result;
  const RunMeter meter;
  const auto start = meter.start;
  const auto soft_end = seconds > 0 ? start + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(seconds))
                                    : Clock::time_point::max();
  const auto hard_end = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(hard_seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < conns; ++c) {
    threads.emplace_back([&, c] {
      HttpConn conn;
      std::vector<double> lat, done;
      lat.reserve(max_ops > 0 ? static_cast<size_t>(max_ops / conns + 16) : 65536);
      done.reserve(lat.capacity());
      long errors = 0;
      std::string first_error;
      std::string request, body;
      int reconnects = 0;
      for (;;) {
        const auto now = Clock::now();
        if (now >= soft_end || now >= hard_end) break;
        const long i = next.fetch_add(1);
        if (max_ops > 0 && i >= max_ops) break;
        if (!conn.connected()) {
          if (++reconnects > 100 || !conn.Connect(url)) {
            ++errors;
            if (first_error.empty()) first_error = "cannot connect";
            break;
          }
        }
        request.clear();
        op.make(c, i, &request);
        const auto t0 = Clock::now();
        const int status = conn.RoundTrip(request, &body);
        const auto t1 = Clock::now();
        if (status > 0 && op.ok(status, body)) {
          lat.push_back(Us(t1 - t0));
          done.push_back(Ms(t1 - start));
        } else {
          ++errors;
          if (first_error.empty()) {
            first_error = "status " + std::to_string(status) + ": " + body.substr(0, 300);
          }
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      result.latency_us.insert(result.latency_us.end(), lat.begin(), lat.end());
      result.done_at_ms.insert(result.done_at_ms.end(), done.begin(), done.end());
      result.errors += errors;
      if (result.first_error.empty()) result.first_error = first_error;
    });
  }
  for (std::thread& t : threads) t.join();
  meter.Finish(&result);
  return result;
}

// Parses one response at the front of `buf` (from `*pos`): 1 when complete (status, body and
// `*close_after` set, `*pos` moved past it), 0 when more bytes are needed, -1 when malformed.
int ParseResponseAt(const std::string& buf, size_t* pos, int* status, std::string* body,
                    bool* close_after) {
  const size_t start = *pos;
  const size_t end = buf.find("\r\n\r\n", start);
  if (end == std::string::npos) return buf.size() - start > (1 << 20) ? -1 : 0;
  ResponseHead h;
  if (!ParseHead(std::string_view(buf.data() + start, end - start), &h)) return -1;
  *status = h.status;
  *close_after = h.close;
  const long content_length = h.content_length;
  const bool chunked = h.chunked;
  size_t at = end + 4;
  if (content_length >= 0) {
    if (buf.size() - at < static_cast<size_t>(content_length)) return 0;
    body->assign(buf, at, static_cast<size_t>(content_length));
    *pos = at + static_cast<size_t>(content_length);
    return 1;
  }
  if (!chunked) return -1;  // a body to the end of the connection: not for a closed loop
  body->clear();
  for (;;) {
    const size_t eol = buf.find("\r\n", at);
    if (eol == std::string::npos) return 0;
    const size_t size = std::strtoul(buf.c_str() + at, nullptr, 16);
    if (buf.size() < eol + 2 + size + 2) return 0;
    body->append(buf, eol + 2, size);
    at = eol + 2 + size + 2;
    if (size == 0) break;
  }
  *pos = at;
  return 1;
}

// RunClosedLoop's loop on one thread: `conns` non-blocking plain-HTTP connections polled with
// epoll, each with one request in flight, as an event-driven client (Go's net/http on its
// netpoller) runs many connections on few threads. With a thread per connection every answer
// wakes a different sleeping thread; here answers that arrive together are read in one wake-up,
// and the driver takes less of the cores it shares with the server. https:// URLs take
// RunClosedLoop (TLS over non-blocking sockets is not worth it for a driver).
RunResult RunClosedLoopPolled(const Url& url, int conns, long max_ops, const Op& op,
                              double hard_seconds = 600) {
  if (url.tls) return RunClosedLoop(url, conns, max_ops, 0, op, hard_seconds);
  struct Conn {
    HttpConn http;  // connects (blocking); then switched to non-blocking
    std::string out, in;
    size_t out_pos = 0;
    Clock::time_point sent;
    bool busy = false;
    bool want_out = false;
  };
  RunResult result;
  const RunMeter meter;
  const auto start = meter.start;
  const auto hard_end = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(hard_seconds));
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) Die("epoll_create1 failed");
  std::vector<Conn> cs(static_cast<size_t>(conns));
  long next = 0, in_flight = 0;
  std::string body;
  auto fail = [&](std::string what) {
    ++result.errors;
    if (result.first_error.empty()) result.first_error = std::move(what);
  };
  auto arm = [&](int c, bool want_out) {
    Conn& k = cs[static_cast<size_t>(c)];
    epoll_event ev{};
    ev.events = EPOLLIN | (want_out ? EPOLLOUT : 0u);
    ev.data.u32 = static_cast<uint32_t>(c);
    ::epoll_ctl(ep, EPOLL_CTL_MOD, k.http.fd(), &ev);
    k.want_out = want_out;
  };
  // Writes what it can of the connection's request; false on a transport error.
  auto flush = [&](int c) {
    Conn& k = cs[static_cast<size_t>(c)];
    while (k.out_pos < k.out.size()) {
      const ssize_t n =
          ::send(k.http.fd(), k.out.data() + k.out_pos, k.out.size() - k.out_pos, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) return false;
      k.out_pos += static_cast<size_t>(n);
    }
    const bool pending = k.out_pos < k.out.size();
    if (pending != k.want_out) arm(c, pending);
    return true;
  };
  auto connect = [&](int c) {
    Conn& k = cs[static_cast<size_t>(c)];
    if (k.http.connected()) ::epoll_ctl(ep, EPOLL_CTL_DEL, k.http.fd(), nullptr);
    if (!k.http.Connect(url)) return false;
    ::fcntl(k.http.fd(), F_SETFL, ::fcntl(k.http.fd(), F_GETFL) | O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(c);
    ::epoll_ctl(ep, EPOLL_CTL_ADD, k.http.fd(), &ev);
    k.want_out = false;
    k.in.clear();
    return true;
  };
  // Starts the connection's next op, if any is left.
  auto start_next = [&](int c) {
    Conn& k = cs[static_cast<size_t>(c)];
    k.busy = false;
    if ((max_ops > 0 && next >= max_ops) || Clock::now() >= hard_end) {
      // Done: out of the poll set, so that an idle connection the server closes cannot spin it.
      if (k.http.connected()) ::epoll_ctl(ep, EPOLL_CTL_DEL, k.http.fd(), nullptr);
      k.http.Close();
      return;
    }
    if (!k.http.connected() && !connect(c)) {
      fail("cannot connect");
      return;
    }
    k.out.clear();
    k.out_pos = 0;
    op.make(c, next++, &k.out);
    k.sent = Clock::now();
    k.busy = true;
    ++in_flight;
    if (!flush(c)) {
      --in_flight;
      k.busy = false;
      fail("send failed");
    }
  };
  for (int c = 0; c < conns; ++c) start_next(c);
  std::vector<epoll_event> events(static_cast<size_t>(conns));
  char tmp[65536];
  while (in_flight > 0) {
    const int n = ::epoll_wait(ep, events.data(), conns, 1000);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Die("epoll_wait failed");
    if (Clock::now() >= hard_end) break;
    for (int e = 0; e < n; ++e) {
      const int c = static_cast<int>(events[static_cast<size_t>(e)].data.u32);
      Conn& k = cs[static_cast<size_t>(c)];
      if (!k.busy) continue;
      bool broken = false;
      if ((events[static_cast<size_t>(e)].events & EPOLLOUT) != 0 && !flush(c)) broken = true;
      for (bool more = !broken; more;) {
        const ssize_t r = ::recv(k.http.fd(), tmp, sizeof(tmp), 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (r <= 0) {
          broken = true;
          break;
        }
        k.in.append(tmp, static_cast<size_t>(r));
        more = static_cast<size_t>(r) == sizeof(tmp);
      }
      int status = 0;
      bool close_after = false;
      size_t pos = 0;
      const int parsed = broken ? -1 : ParseResponseAt(k.in, &pos, &status, &body, &close_after);
      if (parsed == 0) continue;
      const auto done = Clock::now();
      --in_flight;
      if (parsed > 0 && op.ok(status, body)) {
        result.latency_us.push_back(Us(done - k.sent));
        result.done_at_ms.push_back(Ms(done - start));
      } else {
        fail(parsed < 0 ? std::string("transport error")
                        : "status " + std::to_string(status) + ": " + body.substr(0, 300));
      }
      k.in.erase(0, pos);
      if (parsed < 0 || close_after) {
        ::epoll_ctl(ep, EPOLL_CTL_DEL, k.http.fd(), nullptr);
        k.http.Close();
      }
      start_next(c);
    }
  }
  ::close(ep);
  meter.Finish(&result);
  return result;
}

void PrintRun(const char* tag, const char* what, int conns, int run, const RunResult& r) {
  const double n = static_cast<double>(r.latency_us.size());
  std::printf(
      "%s %s conns=%d run=%d: ops=%.0f errors=%ld in %.2f s = %.0f/s; latency p50=%.0f us "
      "p90=%.0f us p99=%.0f us p99.9=%.0f us max=%.0f us; driver cpu %.2f s",
      tag, what, conns, run, n, r.errors, r.seconds, n / r.seconds, Percentile(r.latency_us, 0.5),
      Percentile(r.latency_us, 0.9), Percentile(r.latency_us, 0.99),
      Percentile(r.latency_us, 0.999),
      r.latency_us.empty() ? 0 : *std::max_element(r.latency_us.begin(), r.latency_us.end()),
      r.client_cpu);
  if (r.server_cpu >= 0) {
    std::printf("; server cpu %.2f s = %.0f us/op; other processes %.2f cores", r.server_cpu,
                n > 0 ? r.server_cpu * 1e6 / n : 0.0,
                std::max(0.0, r.host_busy - r.server_cpu - r.client_cpu) / r.seconds);
  }
  std::printf("\n");
  if (!r.first_error.empty()) std::printf("    first error: %s\n", r.first_error.c_str());
  std::fflush(stdout);
}

// --- populate / create ---------------------------------------------------------------------------

void EnsureNamespace(const Url& url, const std::string& name) {
  std::string body;
  const std::string json =
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + R"("}})";
  int s = OneShot(url, Request("POST", "/api/v1/namespaces", "application/json", json), &body);
  if (s != 201 && s != 409)
    Die("creating namespace " + name + ": " + std::to_string(s) + " " + body);
}

// Creates pods [first, first+count) into `ns_of(i)`; reports the rate overall and per segment.
RunResult CreatePods(const Url& url, int conns, long first, long count, long nodes,
                     const std::function<std::string(long)>& ns_of, int segments, const char* tag,
                     bool noexecute_tolerations = true) {
  Op op;
  op.make = [&](int, long k, std::string* req) {
    const long i = first + k;
    const std::string ns = ns_of(i);
    const std::string body =
        kt::bench::ApiPodJson(ns, PodName(i), NodeName(i % nodes + 1), i, noexecute_tolerations);
    *req = Request("POST", "/api/v1/namespaces/" + ns + "/pods", "application/json", body);
  };
  op.ok = [](int s, const std::string&) { return s == 201; };
  RunResult r = RunClosedLoop(url, conns, count, 0, op);
  PrintRun(tag, "pod creates", conns, 1, r);
  std::vector<double> done = r.done_at_ms;
  std::sort(done.begin(), done.end());
  if (segments > 1 && done.size() >= static_cast<size_t>(segments) * 2) {
    const size_t seg = done.size() / static_cast<size_t>(segments);
    std::vector<double> rates;
    std::printf("%s pod creates per segment of %zu:", tag, seg);
    for (int s = 0; s < segments; ++s) {
      const double from = s == 0 ? 0.0 : done[static_cast<size_t>(s) * seg - 1];
      const double to = done[(static_cast<size_t>(s) + 1) * seg - 1];
      const double rate = static_cast<double>(seg) / ((to - from) / 1000.0);
      rates.push_back(rate);
      std::printf(" %.0f", rate);
    }
    std::printf(
        " /s\n%s pod creates/s: median of segments %.0f, min %.0f, overall %.0f; target >= "
        "10000/s from 16 connections: %s\n",
        tag, Median(rates), *std::min_element(rates.begin(), rates.end()),
        static_cast<double>(r.latency_us.size()) / r.seconds,
        Verdict(Median(rates), 10000, false).c_str());
  }
  std::fflush(stdout);
  return r;
}

int CmdPopulate(const Flags& f) {
  const Url url = ParseUrl(f.Get("url", ""));
  const long nodes = f.Int("nodes", 5000);
  const long pods = f.Int("pods", 150000);
  const int conns = static_cast<int>(f.Int("conns", 16));
  for (int n = 0; n < kNamespaces; ++n) EnsureNamespace(url, "ns-" + std::to_string(n));
  {
    Op op;
    op.make = [](int, long k, std::string* req) {
      *req = Request("POST", "/api/v1/nodes", "application/json", NodeJson(k + 1));
    };
    op.ok = [](int s, const std::string&) { return s == 201; };
    RunResult r = RunClosedLoop(url, conns, nodes, 0, op);
    PrintRun("(populate)", "node creates", conns, 1, r);
    if (r.errors) Die("node creates failed");
  }
  std::printf("(populate) sample sizes: node JSON %zu bytes, pod JSON %zu bytes\n",
              NodeJson(1).size(), kt::bench::ApiPodJson("ns-0", "pod-0", "node-1", 0).size());
  RunResult r = CreatePods(url, conns, 0, pods, nodes, PodNamespace,
                           static_cast<int>(f.Int("segments", 10)), "(f)");
  if (r.errors) Die("pod creates failed");
  return 0;
}

// Extra (f) runs: `runs` times `pods` creates into a fresh namespace each.
int CmdCreate(const Flags& f) {
  const Url url = ParseUrl(f.Get("url", ""));
  const long nodes = f.Int("nodes", 5000);
  const long pods = f.Int("pods", 15000);
  const int conns = static_cast<int>(f.Int("conns", 16));
  const int runs = static_cast<int>(f.Int("runs", 2));
  const std::string prefix = f.Get("ns-prefix", "extra");
  std::vector<double> rates;
  for (int run = 1; run <= runs; ++run) {
    const std::string ns = prefix + "-" + std::to_string(run);
    EnsureNamespace(url, ns);
    RunResult r = CreatePods(
        url, conns, 0, pods, nodes, [&](long) { return ns; }, 1, "(f)");
    rates.push_back(static_cast<double>(r.latency_us.size()) / r.seconds);
  }
  std::printf(
      "(f) extra create runs: median %.0f creates/s over %d runs of %ld; target >= 10000/s: %s\n",
      Median(rates), runs, pods, Verdict(Median(rates), 10000, false).c_str());
  return 0;
}

// --- get / list / patch
// ------------------------------------------------------------------------------

// Runs `op` at each concurrency in --conns, --runs times each, and prints the medians.
void RunLevels(const Flags& f, const char* tag, const char* what, const Op& op, double p_target_us,
               double p_quantile, const char* target_text, bool also_p50_target = false) {
  const Url url = ParseUrl(f.Get("url", ""));
  const double seconds = f.Double("seconds", 4);
  const int runs = static_cast<int>(f.Int("runs", 3));
  const long max_ops = f.Int("max-ops", 2'000'000);
  for (int conns : f.Ints("conns", "1,16")) {
    std::vector<double> p50s, p99s, maxes, rates, server_us;
    for (int run = 1; run <= runs; ++run) {
      RunResult r = RunClosedLoop(url, conns, max_ops, seconds, op, seconds + 30);
      PrintRun(tag, what, conns, run, r);
      p50s.push_back(Percentile(r.latency_us, 0.5));
      p99s.push_back(Percentile(r.latency_us, p_quantile));
      maxes.push_back(
          r.latency_us.empty() ? 0 : *std::max_element(r.latency_us.begin(), r.latency_us.end()));
      rates.push_back(static_cast<double>(r.latency_us.size()) / r.seconds);
      if (r.server_cpu >= 0 && !r.latency_us.empty()) {
        server_us.push_back(r.server_cpu * 1e6 / static_cast<double>(r.latency_us.size()));
      }
    }
    const double value = Median(p99s);
    std::printf(
        "%s %s conns=%d: median over %d runs: %.0f/s, p50=%.0f us, p99=%.0f us "
        "(runs: %s), max=%.0f us; target %s: %s",
        tag, what, conns, runs, Median(rates), Median(p50s), value,
        [&] {
          std::string s;
          for (double v : p99s) {
            // Appended in two steps: GCC 12 at -O3 sees a false -Wrestrict in "/" + string.
            if (!s.empty()) s += '/';
            s += std::to_string(int(v));
          }
          return s;
        }()
            .c_str(),
        Median(maxes), target_text, Verdict(value, p_target_us, true).c_str());
    if (also_p50_target) {
      std::printf("; p50 %s", Verdict(Median(p50s), p_target_us, true).c_str());
    }
    if (!server_us.empty()) std::printf("; server cpu %.0f us/op", Median(server_us));
    std::printf("\n");
    std::fflush(stdout);
  }
}

int CmdGet(const Flags& f) {
  const long nodes = f.Int("nodes", 5000);
  const long pods = f.Int("pods", 150000);
  Op op;
  op.make = [&](int conn, long i, std::string* req) {
    thread_local std::mt19937_64 rng(static_cast<uint64_t>(conn) * 7919 + 17);
    (void)i;
    if (rng() % 2 == 0) {
      const long p = static_cast<long>(rng() % static_cast<uint64_t>(pods));
      *req = Request("GET", "/api/v1/namespaces/" + PodNamespace(p) + "/pods/" + PodName(p));
    } else {
      *req =
          Request("GET", "/api/v1/nodes/" +
                             NodeName(static_cast<long>(rng() % static_cast<uint64_t>(nodes)) + 1));
    }
  };
  op.ok = [](int s, const std::string&) { return s == 200; };
  RunLevels(f, "(c)", "GET pod|node", op, 2000, 0.99, "p99 <= 2 ms");
  return 0;
}

int CmdList(const Flags& f) {
  const long nodes = f.Int("nodes", 5000);
  const long expect = f.Int("pods", 150000) / nodes;
  Op op;
  op.make = [&](int conn, long, std::string* req) {
    thread_local std::mt19937_64 rng(static_cast<uint64_t>(conn) * 104729 + 5);
    *req =
        Request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D" +
                           NodeName(static_cast<long>(rng() % static_cast<uint64_t>(nodes)) + 1));
  };
  std::atomic<long> wrong{0};
  std::atomic<long> checked{0};
  op.ok = [&](int s, const std::string& body) {
    if (s != 200) return false;
    // Count the items of one answer in 32 (every pod starts with its kind); scanning each one
    // would cost the driver as much CPU as the server spends.
    if (checked.fetch_add(1) % 32 != 0) return body.size() > 2;
    long n = 0;
    for (size_t p = body.find("\"kind\":\"Pod\""); p != std::string::npos;
         p = body.find("\"kind\":\"Pod\"", p + 1)) {
      ++n;
    }
    if (n != expect && wrong.fetch_add(1) == 0) {
      std::printf("    (d) warning: a node's list had %ld pods, expected %ld\n", n, expect);
    }
    return true;
  };
  RunLevels(f, "(d)", "LIST pods by spec.nodeName", op, 5000, 0.99, "p50 and p99 <= 5 ms", true);
  return 0;
}

int CmdPatch(const Flags& f) {
  const long nodes = f.Int("nodes", 5000);
  std::atomic<long> seq{0};
  int conns_now = 1;
  Op op;
  op.make = [&](int conn, long, std::string* req) {
    thread_local std::mt19937_64 rng(static_cast<uint64_t>(conn) * 31 + 7);
    // Each connection patches its own share of the nodes, so conflicts come only from the
    // server, never from two clients racing on one node.
    const long per = nodes / conns_now;
    const long node = conn * per + static_cast<long>(rng() % static_cast<uint64_t>(per)) + 1;
    const long s = seq.fetch_add(1);
    std::string body =
        R"({"spec":{"taints":[{"effect":"NoSchedule","key":"bench.kubetaint.io/load","value":"v)" +
        std::to_string(s) + R"("}]}})";
    if (s % 4 == 3) body = R"({"spec":{"taints":null}})";  // sometimes untaint, as kubectl taint -
    *req = Request("PATCH", "/api/v1/nodes/" + NodeName(node),
                   "application/strategic-merge-patch+json", body);
  };
  op.ok = [](int s, const std::string&) { return s == 200; };
  for (int conns : f.Ints("conns", "1,16")) {
    Flags one = f;
    one.values["conns"] = std::to_string(conns);
    conns_now = conns;
    RunLevels(one, "(e)", "PATCH node taints (strategic merge)", op, 10000, 0.99, "p99 <= 10 ms");
  }
  return 0;
}

// --- watch
// -----------------------------------------------------------------------------------------------

std::string ResourceVersionOf(const std::string& body) {
  const std::string key = "\"resourceVersion\":\"";
  size_t p = body.find(key);
  if (p == std::string::npos) return "";
  p += key.size();
  return body.substr(p, body.find('"', p) - p);
}

int CmdWatch(const Flags& f) {
  const Url url = ParseUrl(f.Get("url", ""));
  const int watchers = static_cast<int>(f.Int("watchers", 100));
  const int events = static_cast<int>(f.Int("events", 20));
  const std::string resource = f.Get("resource", "pods");
  if (resource != "pods" && resource != "nodes") Die("--resource: pods or nodes");
  const std::string list_path = "/api/v1/" + resource;

  std::string body;
  if (OneShot(url, Request("GET", list_path + "?limit=1"), &body) != 200) Die("list failed");
  const std::string rv = ResourceVersionOf(body);
  if (rv.empty()) Die("no resourceVersion in the list");

  std::vector<std::unique_ptr<HttpConn>> conns;
  const auto open_start = Clock::now();
  for (int w = 0; w < watchers; ++w) {
    auto c = std::make_unique<HttpConn>();
    if (!c->Connect(url)) Die("watch connect failed");
    int s = c->StartStream(Request("GET", list_path + "?watch=true&resourceVersion=" + rv));
    if (s != 200) Die("watch start: status " + std::to_string(s));
    conns.push_back(std::move(c));
  }
  std::printf("(g) %d watches on %s opened from resourceVersion %s in %.1f ms\n", watchers,
              resource.c_str(), rv.c_str(), Ms(Clock::now() - open_start));

  // Reader: one epoll thread; per watcher, the time it read the current marker.
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  for (int w = 0; w < watchers; ++w) {
    fcntl(conns[w]->fd(), F_SETFL, fcntl(conns[w]->fd(), F_GETFL) | O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(w);
    epoll_ctl(ep, EPOLL_CTL_ADD, conns[w]->fd(), &ev);
  }
  std::mutex mu;
  std::string marker;                             // guarded by mu
  std::vector<Clock::time_point> seen(watchers);  // guarded by mu
  int seen_count = 0;                             // guarded by mu
  std::atomic<bool> stop{false};
  std::atomic<long> closed{0};
  std::vector<std::string> bufs(watchers);
  for (int w = 0; w < watchers; ++w) bufs[w] = conns[w]->buffer();  // bytes read with the header
  std::thread reader([&] {
    epoll_event evs[128];
    char tmp[65536];
    while (!stop.load()) {
      int n = epoll_wait(ep, evs, 128, 50);
      const auto now = Clock::now();
      for (int k = 0; k < n; ++k) {
        const int w = static_cast<int>(evs[k].data.u32);
        for (;;) {
          ssize_t got = ::recv(conns[w]->fd(), tmp, sizeof(tmp), 0);
          if (got > 0) {
            bufs[w].append(tmp, static_cast<size_t>(got));
            continue;
          }
          if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
            epoll_ctl(ep, EPOLL_CTL_DEL, conns[w]->fd(), nullptr);
            closed.fetch_add(1);
          }
          break;
        }
        std::lock_guard<std::mutex> lock(mu);
        if (!marker.empty() && seen[w] == Clock::time_point{} &&
            bufs[w].find(marker) != std::string::npos) {
          seen[w] = now;
          ++seen_count;
        }
        if (bufs[w].size() > 4096) bufs[w].erase(0, bufs[w].size() - 256);
      }
    }
  });

  const long nonce = static_cast<long>(::getpid());
  std::vector<double> from_req_p50, from_req_max, from_resp_p50, from_resp_max, write_ms;
  std::vector<std::string> probes;
  HttpConn writer;
  if (!writer.Connect(url)) Die("connect");
  int missed_events = 0;
  for (int e = 0; e < events; ++e) {
    std::string req;
    std::string mark;
    if (resource == "pods") {
      const std::string name = "watch-probe-" + std::to_string(nonce) + "-" + std::to_string(e);
      mark = "\"name\":\"" + name + "\"";
      probes.push_back(name);
      req = Request("POST", "/api/v1/namespaces/ns-0/pods", "application/json",
                    kt::bench::ApiPodJson("ns-0", name, "node-1", e));
    } else {
      const std::string value = "p" + std::to_string(nonce) + "-" + std::to_string(e);
      mark = "\"bench.kubetaint.io/probe\":\"" + value + "\"";
      req = Request("PATCH", "/api/v1/nodes/node-1", "application/strategic-merge-patch+json",
                    R"({"metadata":{"labels":{"bench.kubetaint.io/probe":")" + value + "\"}}}");
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      marker = mark;
      std::fill(seen.begin(), seen.end(), Clock::time_point{});
      seen_count = 0;
    }
    const auto t0 = Clock::now();
    const int s = writer.RoundTrip(req, &body);
    const auto t1 = Clock::now();
    const int want = resource == "pods" ? 201 : 200;
    if (s != want) Die("probe write: status " + std::to_string(s) + " " + body.substr(0, 300));
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (seen_count == watchers) break;
      }
      if (Clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::vector<double> req_lat, resp_lat;
    {
      std::lock_guard<std::mutex> lock(mu);
      for (int w = 0; w < watchers; ++w) {
        if (seen[w] == Clock::time_point{}) continue;
        req_lat.push_back(Ms(seen[w] - t0));
        resp_lat.push_back(Ms(seen[w] - t1));
      }
      if (seen_count != watchers) ++missed_events;
      marker.clear();
    }
    write_ms.push_back(Ms(t1 - t0));
    from_req_p50.push_back(Median(req_lat));
    from_req_max.push_back(req_lat.empty() ? 1e9
                                           : *std::max_element(req_lat.begin(), req_lat.end()));
    from_resp_p50.push_back(Median(resp_lat));
    from_resp_max.push_back(resp_lat.empty() ? 1e9
                                             : *std::max_element(resp_lat.begin(), resp_lat.end()));
    std::printf(
        "(g) event %d: write %.2f ms; %zu/%d watchers got it; from request start p50 %.2f "
        "ms max %.2f ms; from response p50 %.2f ms max %.2f ms\n",
        e, Ms(t1 - t0), req_lat.size(), watchers, from_req_p50.back(), from_req_max.back(),
        from_resp_p50.back(), from_resp_max.back());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop.store(true);
  reader.join();
  ::close(ep);
  conns.clear();
  std::printf(
      "(g) %s: %d watchers, %d events, medians over events: write %.2f ms; from request "
      "start p50 %.2f ms, max %.2f ms (worst event %.2f ms); from the write's response "
      "p50 %.2f ms, max %.2f ms; events not seen by all: %d; streams closed early: %ld; "
      "target all 100 within 10 ms: %s\n",
      resource.c_str(), watchers, events, Median(write_ms), Median(from_req_p50),
      Median(from_req_max), *std::max_element(from_req_max.begin(), from_req_max.end()),
      Median(from_resp_p50), Median(from_resp_max), missed_events, closed.load(),
      Verdict(Median(from_req_max), 10, true).c_str());
  for (const std::string& name : probes) {
    (void)writer.RoundTrip(Request("DELETE", "/api/v1/namespaces/ns-0/pods/" + name), &body);
  }
  if (resource == "nodes") {
    (void)writer.RoundTrip(
        Request("PATCH", "/api/v1/nodes/node-1", "application/strategic-merge-patch+json",
                R"({"metadata":{"labels":{"bench.kubetaint.io/probe":null}}})"),
        &body);
  }
  return 0;
}

// --- startup
// -------------------------------------------------------------------------------------------

long StatusKb(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field) + 1);
  }
  return -1;
}

int CmdStartup(const Flags& f) {
  const std::string bin = f.Get("bin", "build/kubetaint");
  const std::string dir = f.Get("data-dir", "");
  const int runs = static_cast<int>(f.Int("runs", 3));
  const std::string probe = f.Get("probe", "/api/v1/namespaces/ns-0/pods/pod-0");
  if (dir.empty()) Die("--data-dir is required");
  std::vector<double> to_line, to_get, self_ms, rss_mb, stop_ms;
  for (int run = 1; run <= runs; ++run) {
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) Die("pipe");
    const double host0 = HostBusySeconds();
    const auto t0 = Clock::now();
    pid_t pid = fork();
    if (pid < 0) Die("fork");
    if (pid == 0) {
      dup2(pipefd[1], 1);
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) dup2(devnull, 2);
      // As bench/server.sh's NO_KUBELETS: the nodes here have no kubelet.
      const char* argv[] = {bin.c_str(),
                            "serve",
                            "--listen",
                            "127.0.0.1:0",
                            "--insecure-port",
                            "0",
                            "--data-dir",
                            dir.c_str(),
                            "--store",
                            "sqlite",
                            "--controllers=*,-node-lifecycle-controller",
                            "--disable-admission-plugins=TaintNodesByCondition",
                            nullptr};
      execv(bin.c_str(), const_cast<char* const*>(argv));
      _exit(127);
    }
    ::close(pipefd[1]);
    std::string out;
    std::string line;
    const auto deadline = t0 + std::chrono::seconds(120);
    while (Clock::now() < deadline) {
      pollfd pfd{pipefd[0], POLLIN, 0};
      if (poll(&pfd, 1, 200) <= 0) continue;
      char tmp[4096];
      ssize_t n = ::read(pipefd[0], tmp, sizeof(tmp));
      if (n <= 0) break;
      out.append(tmp, static_cast<size_t>(n));
      // The plain-HTTP line (--insecure-port), then the start-up line.
      const size_t serving = out.find("serving on");
      const size_t nl = serving == std::string::npos ? serving : out.find('\n', serving);
      if (nl != std::string::npos) {
        line = out.substr(0, nl);
        break;
      }
    }
    const auto t_line = Clock::now();
    if (line.empty()) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      Die("server did not print its serving line: " + out);
    }
    const size_t at = line.find("http://");
    const Url url = ParseUrl(line.substr(at, line.find(' ', at) - at));
    double self = -1;
    if (size_t r = line.find("ready in "); r != std::string::npos) {
      self = std::atof(line.c_str() + r + 9);
    }
    // First successful GET of a pod (bounded: 30 s).
    Clock::time_point t_get{};
    std::string body;
    for (int attempt = 0; attempt < 30000 && Clock::now() < t_line + std::chrono::seconds(30);
         ++attempt) {
      if (OneShot(url, Request("GET", probe), &body) == 200) {
        t_get = Clock::now();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const double cpu = ProcCpuSeconds(pid);
    const double other = std::max(0.0, HostBusySeconds() - host0 - cpu) /
                         std::max(1e-3, Ms(Clock::now() - t0) / 1000);
    const long rss = StatusKb(pid, "VmRSS:");
    const long hwm = StatusKb(pid, "VmHWM:");
    std::printf("(a) run %d: %s\n", run, line.c_str());
    const auto t_term = Clock::now();
    kill(pid, SIGTERM);
    int wstatus = 0;
    bool exited = false;
    for (int i = 0; i < 3000; ++i) {  // 30 s
      if (waitpid(pid, &wstatus, WNOHANG) == pid) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &wstatus, 0);
    }
    const double stop = Ms(Clock::now() - t_term);
    ::close(pipefd[0]);
    to_line.push_back(Ms(t_line - t0));
    to_get.push_back(t_get == Clock::time_point{} ? 1e9 : Ms(t_get - t0));
    self_ms.push_back(self);
    rss_mb.push_back(static_cast<double>(rss) / 1024.0);
    stop_ms.push_back(stop);
    std::printf(
        "(a) run %d: exec -> serving line %.0f ms (server says ready in %.0f ms); exec -> "
        "first GET 200 %.0f ms; server CPU by then %.2f s (other processes %.2f cores); (b) "
        "VmRSS after restart %.0f MB (VmHWM %.0f MB); SIGTERM -> exit %.0f ms%s\n",
        run, to_line.back(), self, to_get.back(), cpu, other, rss_mb.back(),
        static_cast<double>(hwm) / 1024.0, stop, exited ? "" : " (SIGKILLed)");
    std::fflush(stdout);
  }
  std::printf(
      "(a) start-up, median of %d runs: exec -> serving %.0f ms, exec -> first GET %.0f ms "
      "(runs: ",
      runs, Median(to_line), Median(to_get));
  for (double v : to_get) std::printf("%.0f ", v);
  std::printf("ms); target serving within 2 s: %s\n", Verdict(Median(to_get), 2000, true).c_str());
  std::printf("(b) VmRSS right after restart, median %.0f MB; target <= 1 GB: %s\n", Median(rss_mb),
              Verdict(Median(rss_mb), 1024, true).c_str());
  return 0;
}

// --- schedule ------------------------------------------------------------------------------------
//
// Upstream scheduler_perf's SchedulingBasic end to end: pods created over HTTP by this process
// while the server's scheduler binds them. A watch on the namespace's bound pods (fieldSelector
// spec.nodeName!=, so a pod reaches it once, when its binding makes it match) records when each
// pod is first seen with spec.nodeName; a pod's latency is from the start of its create request
// to that moment, and throughput is the measured pods bound / (last binding - first create).
// --create-only 1 measures the creates alone (for a server run with --disable-scheduler).

// Reads a pod watch stream and records the first time each pod shows a node.
class BindWatcher {
 public:
  bool Start(const Url& url, const std::string& path) {
    return stream_.Start(
        url, path, [this](std::string_view line, Clock::time_point) { OnLine(line); },
        [this](bool stopped) {
          std::lock_guard<std::mutex> lock(mu_);
          ended_ = true;
          if (!stopped) std::fprintf(stderr, "api_load: the pod watch ended early\n");
          cv_.notify_all();
        });
  }
  void Stop() { stream_.Stop(); }
  // Waits until `n` pods whose names start with `prefix` are bound, or until `deadline`.
  size_t WaitFor(const std::string& prefix, size_t n, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, deadline, [&] { return Count(prefix) >= n || ended_; });
    return Count(prefix);
  }
  // When the pod was first seen bound.
  bool BoundAt(const std::string& name, Clock::time_point* at) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = bound_.find(name);
    if (it == bound_.end()) return false;
    *at = it->second;
    return true;
  }

 private:
  size_t Count(const std::string& prefix) const {
    auto it = counts_.find(prefix);
    return it == counts_.end() ? 0 : it->second;
  }
  void OnLine(std::string_view line) {
    const size_t node = line.find("\"nodeName\":\"");
    if (node == std::string_view::npos) return;
    const size_t meta = line.find("\"metadata\":{");
    if (meta == std::string_view::npos) return;
    const size_t key = line.find("\"name\":\"", meta);
    if (key == std::string_view::npos) return;
    const size_t from = key + 8;
    const std::string name(line.substr(from, line.find('"', from) - from));
    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    if (!bound_.emplace(name, now).second) return;
    ++counts_[name.substr(0, name.rfind('-') + 1)];  // "s1-init-" or "s1-"
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Clock::time_point> bound_;  // guarded by mu_
  std::map<std::string, size_t> counts_;            // by name prefix; guarded by mu_
  bool ended_ = false;                              // guarded by mu_
  WatchStream stream_;                              // last: destroyed (and its thread joined) first
};

int CmdSchedule(const Flags& f) {
  const Url url = ParseUrl(f.Get("url", ""));
  const long nodes = f.Int("nodes", 5000);
  const long init = f.Int("init-pods", 1000);
  const long pods = f.Int("pods", 10000);
  const int conns = static_cast<int>(f.Int("conns", 16));
  const int runs = static_cast<int>(f.Int("runs", 3));
  const bool taints = f.Get("workload", "basic") == "taints";
  const bool create_only = f.Int("create-only", 0) != 0;
  const std::string ns = f.Get("namespace", "sched");
  const std::string tag = create_only ? "(sched, scheduler off)" : "(sched)";
  // --driver threads: a thread per connection (RunClosedLoop) instead of one polling thread.
  const bool polled = f.Get("driver", "polled") != "threads";
  auto run_loop = [&](long count, const Op& op) {
    return polled ? RunClosedLoopPolled(url, conns, count, op)
                  : RunClosedLoop(url, conns, count, 0, op);
  };
  EnsureNamespace(url, ns);
  {
    Op op;
    op.make = [&](int, long k, std::string* req) {
      thread_local std::mt19937 rng(7);
      const int i = static_cast<int>(k) + 1;
      *req = Request("POST", "/api/v1/nodes", "application/json",
                     kt::bench::SchedNodeJson("snode-" + std::to_string(i), i, taints, rng));
    };
    op.ok = [](int s, const std::string&) { return s == 201 || s == 409; };
    RunResult r = run_loop(nodes, op);
    PrintRun(tag.c_str(), "node creates", conns, 1, r);
    if (r.errors) Die("node creates failed");
  }
  auto create = [&](const std::string& prefix, long count, std::vector<Clock::time_point>* sent) {
    sent->assign(static_cast<size_t>(count), Clock::time_point());
    Op op;
    op.make = [&](int, long k, std::string* req) {
      thread_local std::mt19937 rng(11);
      (*sent)[static_cast<size_t>(k)] = Clock::now();
      *req = Request("POST", "/api/v1/namespaces/" + ns + "/pods", "application/json",
                     kt::bench::SchedPodJson(prefix + std::to_string(k), ns, taints, rng));
    };
    op.ok = [](int s, const std::string&) { return s == 201; };
    return run_loop(count, op);
  };
  std::vector<double> rates, p50s, p99s, create_rates;
  for (int run = 1; run <= runs; ++run) {
    const std::string run_prefix = "s" + std::to_string(run) + "-";
    std::vector<Clock::time_point> sent;
    if (create_only) {
      RunResult r = create(run_prefix, pods, &sent);
      PrintRun(tag.c_str(), "pod creates", conns, run, r);
      create_rates.push_back(static_cast<double>(r.latency_us.size()) / r.seconds);
      continue;
    }
    std::string body;
    if (OneShot(url, Request("GET", "/api/v1/namespaces/" + ns + "/pods?limit=1"), &body) != 200) {
      Die("listing pods failed: " + body.substr(0, 200));
    }
    BindWatcher watch;
    if (!watch.Start(url, "/api/v1/namespaces/" + ns +
                              "/pods?watch=true&fieldSelector=spec.nodeName%21%3D"
                              "&resourceVersion=" +
                              ResourceVersionOf(body))) {
      Die("cannot watch pods");
    }
    const std::string init_prefix = run_prefix + "init-";
    RunResult ri = create(init_prefix, init, &sent);
    if (ri.errors) Die("initial pod creates failed: " + ri.first_error);
    const size_t init_bound = watch.WaitFor(init_prefix, static_cast<size_t>(init),
                                            Clock::now() + std::chrono::seconds(120));
    if (!taints && init_bound < static_cast<size_t>(init)) {
      Die("only " + std::to_string(init_bound) + " initial pods bound");
    }
    const auto start = Clock::now();
    const double server0 = g_server_pid > 0 ? ProcCpuSeconds(g_server_pid) : -1;
    RunResult r = create(run_prefix, pods, &sent);
    const auto created = Clock::now();  // the last create answered
    if (r.errors) Die("pod creates failed: " + r.first_error);
    const double create_rate = static_cast<double>(r.latency_us.size()) / r.seconds;
    // In the taint workload some pods fit no node: wait for the rest a bounded time.
    watch.WaitFor(run_prefix, static_cast<size_t>(pods),
                  Clock::now() + std::chrono::seconds(taints ? 10 : 120));
    const double server_cpu = g_server_pid > 0 ? ProcCpuSeconds(g_server_pid) - server0 : -1;
    watch.Stop();
    std::vector<double> lat;
    Clock::time_point last = start;
    for (long i = 0; i < pods; ++i) {
      Clock::time_point at;
      if (!watch.BoundAt(run_prefix + std::to_string(i), &at)) continue;
      lat.push_back(Ms(at - sent[static_cast<size_t>(i)]));
      last = std::max(last, at);
    }
    const double secs = std::chrono::duration<double>(last - start).count();
    const double rate = static_cast<double>(lat.size()) / secs;
    rates.push_back(rate);
    p50s.push_back(Percentile(lat, 0.5));
    p99s.push_back(Percentile(lat, 0.99));
    create_rates.push_back(create_rate);
    std::printf(
        "%s run %d: %zu of %ld pods bound in %.2f s = %.0f pods/s (created at %.0f/s, create "
        "p50 %.2f ms p99 %.2f ms); creation-to-binding p50 %.1f ms p99 %.1f ms",
        tag.c_str(), run, lat.size(), pods, secs, rate, create_rate,
        Percentile(r.latency_us, 0.5) / 1000, Percentile(r.latency_us, 0.99) / 1000, p50s.back(),
        p99s.back());
    if (server_cpu >= 0 && !lat.empty()) {
      std::printf("; server cpu %.2f s = %.0f us per bound pod", server_cpu,
                  server_cpu * 1e6 / static_cast<double>(lat.size()));
    }
    std::printf("; driver cpu %.2f s", r.client_cpu);
    // The bindings still to come once the creates stop: the pipeline's backlog.
    std::printf("; last binding %.1f ms after the last create", Ms(last - created));
    std::printf("\n");
    std::fflush(stdout);
  }
  if (create_only) {
    std::printf("%s pod creates: median of %d runs %.0f/s\n", tag.c_str(), runs,
                Median(create_rates));
  } else {
    std::printf(
        "%s %s workload, %ld nodes, %ld measured pods, %d connections: median of %d runs "
        "%.0f pods/s (target >= 10000: %s), creation-to-binding p50 %.1f ms, p99 %.1f ms "
        "(target <= 50 ms: %s); creates %.0f/s\n",
        tag.c_str(), taints ? "taints" : "basic", nodes, pods, conns, runs, Median(rates),
        Verdict(Median(rates), 10000, false).c_str(), Median(p50s), Median(p99s),
        Verdict(Median(p99s), 50, true).c_str(), Median(create_rates));
  }
  std::fflush(stdout);
  return 0;
}

// --- evict / evict-node --------------------------------------------------------------------------
//
// The NoExecute taint eviction controller end to end (DESIGN.md "Targets": 100,000 pods to evict,
// all gone in <= 10 s). Pods pod-0..pod-(N*P-1) in ns-0..ns-9 (PodJson), pod i bound at creation
// to node-((i % N) + 1); the nodes are then tainted bench/evict=x:NoExecute, which no pod
// tolerates (the pods carry the not-ready/unreachable NoExecute tolerations that
// DefaultTolerationSeconds adds; they do not match this key). One pod watch over HTTP records,
// per pod, when a MODIFIED event first showed its DisruptionTarget condition (reason
// DeletionByTaintManager) and when its deletion was read: the MODIFIED event that set its
// deletionTimestamp (the pods have a 30 s grace period and their nodes no kubelet, so the
// controller's delete leaves them Terminating, as on a cluster whose kubelets are down), or a
// DELETED event. "Deleted" below means that.
//   evict       every node tainted at once, from --conns connections; the time from the first
//               taint PATCH to the last pod's DELETED event; then the TaintManagerEviction events
//               are counted (paged LIST by fieldSelector reason).
//   evict-node  the nodes tainted one at a time, each once the previous node's pods are gone; per
//               node, the time from the PATCH's answer to the DELETED event of its last pod.
// Times are when this process read the events, so they include the watch's delivery.

constexpr std::string_view kEvictTaintPatch =
    R"({"spec":{"taints":[{"key":"bench/evict","value":"x","effect":"NoExecute"}]}})";

class EvictionWatcher {
 public:
  EvictionWatcher(long pods, long nodes)
      : pods_(pods),
        nodes_(nodes),
        disrupted_at_(static_cast<size_t>(pods)),
        deleted_at_(static_cast<size_t>(pods)),
        node_deleted_(static_cast<size_t>(nodes) + 1),
        node_first_(static_cast<size_t>(nodes) + 1),
        node_last_(static_cast<size_t>(nodes) + 1) {}

  bool Start(const Url& url, const std::string& path) {
    return stream_.Start(
        url, path, [this](std::string_view line, Clock::time_point at) { OnLine(line, at); },
        [this](bool stopped) {
          std::lock_guard<std::mutex> lock(mu_);
          ended_ = !stopped;
          if (!stopped) std::fprintf(stderr, "api_load: the pod watch ended early\n");
          cv_.notify_all();
        });
  }
  void Stop() { stream_.Stop(); }

  // Waits until `n` pods in all are deleted, or until `deadline`; returns how many are.
  long WaitDeleted(long n, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    want_total_ = n;
    cv_.wait_until(lock, deadline, [&] { return deleted_ >= n || ended_; });
    want_total_ = -1;
    return deleted_;
  }
  // Waits until `n` pods of node `node` (1-based) are deleted, or until `deadline`.
  long WaitNode(long node, long n, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    want_node_ = node;
    want_node_count_ = n;
    const size_t k = static_cast<size_t>(node);
    cv_.wait_until(lock, deadline, [&] { return node_deleted_[k] >= n || ended_; });
    want_node_ = -1;
    return node_deleted_[k];
  }

  struct Snapshot {
    std::vector<Clock::time_point> disrupted_at, deleted_at;  // per pod; {} = not seen
    long deleted = 0, disrupted = 0, deleted_with_condition = 0, disrupted_before_deleted = 0;
    long other_events = 0;
    bool ended = false;  // the server ended the watch before Stop
  };
  Snapshot Take() {
    std::lock_guard<std::mutex> lock(mu_);
    Snapshot s;
    s.disrupted_at = disrupted_at_;
    s.deleted_at = deleted_at_;
    s.deleted = deleted_;
    s.disrupted = disrupted_;
    s.deleted_with_condition = deleted_with_condition_;
    s.disrupted_before_deleted = disrupted_before_deleted_;
    s.other_events = other_events_;
    s.ended = ended_;
    return s;
  }
  // The first and last deletion read for node `node` (1-based).
  std::pair<Clock::time_point, Clock::time_point> NodeSpan(long node) {
    std::lock_guard<std::mutex> lock(mu_);
    return {node_first_[static_cast<size_t>(node)], node_last_[static_cast<size_t>(node)]};
  }

 private:
  void OnLine(std::string_view line, Clock::time_point at) {
    const bool deleted = line.starts_with(R"({"type":"DELETED")");
    const bool modified = line.starts_with(R"({"type":"MODIFIED")");
    long i = -1;
    if (deleted || modified) {
      constexpr std::string_view kName = R"("name":"pod-)";
      const size_t p = line.find(kName);
      if (p != std::string_view::npos) i = std::atol(line.data() + p + kName.size());
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (i < 0 || i >= pods_) {
      ++other_events_;
      return;
    }
    const size_t k = static_cast<size_t>(i);
    const bool condition = line.find("\"DeletionByTaintManager\"") != std::string_view::npos;
    // The pods here are bound to nodes without kubelets and have a grace period: the eviction
    // (the controller's delete) is the MODIFIED event that sets their deletionTimestamp, and
    // nothing ends the deletion; pods with no grace period go in a DELETED event.
    const bool deletion_started =
        modified && line.find("\"deletionTimestamp\"") != std::string_view::npos;
    if (modified && !deletion_started) {
      if (condition && disrupted_at_[k] == Clock::time_point{}) {
        disrupted_at_[k] = at;
        ++disrupted_;
      }
      return;
    }
    if (deleted_at_[k] != Clock::time_point{}) return;
    deleted_at_[k] = at;
    ++deleted_;
    if (condition) ++deleted_with_condition_;
    if (disrupted_at_[k] != Clock::time_point{}) ++disrupted_before_deleted_;
    const long node = i % nodes_ + 1;
    const size_t n = static_cast<size_t>(node);
    if (node_deleted_[n]++ == 0) node_first_[n] = at;
    node_last_[n] = at;
    if ((want_total_ >= 0 && deleted_ >= want_total_) ||
        (node == want_node_ && node_deleted_[n] >= want_node_count_)) {
      cv_.notify_all();
    }
  }

  const long pods_, nodes_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Clock::time_point> disrupted_at_, deleted_at_;       // guarded by mu_
  std::vector<long> node_deleted_;                                 // guarded by mu_
  std::vector<Clock::time_point> node_first_, node_last_;          // guarded by mu_
  long deleted_ = 0, disrupted_ = 0, deleted_with_condition_ = 0;  // guarded by mu_
  long disrupted_before_deleted_ = 0, other_events_ = 0;           // guarded by mu_
  long want_total_ = -1, want_node_ = -1, want_node_count_ = 0;    // guarded by mu_
  bool ended_ = false;  // the server ended the watch; guarded by mu_
  WatchStream stream_;  // last: destroyed (and its thread joined) first
};

// Namespaces, `nodes` nodes and `nodes * per_node` pods bound to them (as populate does).
void CreateEvictionCluster(const Url& url, long nodes, long per_node, int conns, const char* tag) {
  for (int n = 0; n < kNamespaces; ++n) EnsureNamespace(url, "ns-" + std::to_string(n));
  Op op;
  op.make = [](int, long k, std::string* req) {
    *req = Request("POST", "/api/v1/nodes", "application/json", NodeJson(k + 1));
  };
  op.ok = [](int s, const std::string&) { return s == 201; };
  RunResult r = RunClosedLoop(url, conns, nodes, 0, op);
  PrintRun(tag, "node creates", conns, 1, r);
  if (r.errors) Die("node creates failed: " + r.first_error);
  r = CreatePods(url, conns, 0, nodes * per_node, nodes, PodNamespace, 1, tag);
  if (r.errors) Die("pod creates failed: " + r.first_error);
}

// Waits, at most `limit_s`, until the server (--pid) has used under 5 % of a core for 0.5 s: the
// controller has handled the pods' adds, so what follows measures the evictions alone. Returns
// the seconds waited.
double WaitServerIdle(double limit_s) {
  const auto start = Clock::now();
  if (g_server_pid <= 0) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return 3;
  }
  double cpu = ProcCpuSeconds(g_server_pid);
  while (Ms(Clock::now() - start) < limit_s * 1000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const double now = ProcCpuSeconds(g_server_pid);
    if (now - cpu < 0.025) break;
    cpu = now;
  }
  return Ms(Clock::now() - start) / 1000;
}

// Opens the pod watch from the current resourceVersion.
void StartPodWatch(const Url& url, EvictionWatcher* watch) {
  std::string body;
  if (OneShot(url, Request("GET", "/api/v1/pods?limit=1"), &body) != 200) {
    Die("listing pods failed: " + body.substr(0, 200));
  }
  if (!watch->Start(url, "/api/v1/pods?watch=true&resourceVersion=" + ResourceVersionOf(body))) {
    Die("cannot watch pods");
  }
}

std::string PatchTaint(long node) {
  return Request("PATCH", "/api/v1/nodes/" + NodeName(node),
                 "application/strategic-merge-patch+json", kEvictTaintPatch);
}

struct TaintEventCount {
  long events = 0;       // with reason TaintManagerEviction
  long marking = 0;      // "Marking for deletion Pod ns/name"
  long cancelling = 0;   // "Cancelling deletion of Pod ns/name"
  long pods_marked = 0;  // distinct pods of the bench with a "Marking for deletion" event
  long pages = 0;
};

size_t CountOf(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

// Every event with reason TaintManagerEviction, by paged LIST.
TaintEventCount CountTaintEvents(const Url& url, long pods) {
  TaintEventCount c;
  std::vector<char> marked(static_cast<size_t>(pods));
  std::string token;
  HttpConn conn;
  std::string body;
  for (int page = 0; page < 10000; ++page) {
    std::string path = "/api/v1/events?fieldSelector=reason%3DTaintManagerEviction&limit=10000";
    if (!token.empty()) path += "&continue=" + token;
    if (!conn.connected() && !conn.Connect(url)) Die("connect");
    const int s = conn.RoundTrip(Request("GET", path), &body);
    if (s != 200) Die("listing events: status " + std::to_string(s) + " " + body.substr(0, 300));
    ++c.pages;
    c.events += static_cast<long>(CountOf(body, R"("reason":"TaintManagerEviction")"));
    c.cancelling += static_cast<long>(CountOf(body, R"("message":"Cancelling deletion of Pod )"));
    constexpr std::string_view kMarking = R"("message":"Marking for deletion Pod )";
    for (size_t p = body.find(kMarking); p != std::string::npos;
         p = body.find(kMarking, p + kMarking.size())) {
      ++c.marking;
      // "ns-N/pod-I"
      const size_t slash = body.find('/', p + kMarking.size());
      if (slash == std::string::npos || body.compare(slash + 1, 4, "pod-") != 0) continue;
      const long i = std::atol(body.c_str() + slash + 5);
      if (i >= 0 && i < pods && !marked[static_cast<size_t>(i)]) {
        marked[static_cast<size_t>(i)] = 1;
        ++c.pods_marked;
      }
    }
    token.clear();
    constexpr std::string_view kContinue = R"("continue":")";
    const size_t t = body.find(kContinue);
    if (t == std::string::npos || t > 512) break;  // in the list's metadata, before the items
    const size_t from = t + kContinue.size();
    token = body.substr(from, body.find('"', from) - from);
    if (token.empty()) break;
  }
  return c;
}

double SinceMs(Clock::time_point at, Clock::time_point from) { return Ms(at - from); }

int CmdEvict(const Flags& f) {
  const Url url = ParseUrl(f.Get("url", ""));
  const long nodes = f.Int("nodes", 1000);
  const long per_node = f.Int("pods-per-node", 100);
  const long pods = nodes * per_node;
  const int conns = static_cast<int>(f.Int("conns", 16));
  const double limit_s = f.Double("timeout", 120);
  CreateEvictionCluster(url, nodes, per_node, conns, "(evict)");
  std::printf("(evict) server idle after %.1f s\n", WaitServerIdle(60));
  EvictionWatcher watch(pods, nodes);
  StartPodWatch(url, &watch);

  Op op;
  op.make = [](int, long k, std::string* req) { *req = PatchTaint(k + 1); };
  op.ok = [](int s, const std::string&) { return s == 200; };
  const double server0 = g_server_pid > 0 ? ProcCpuSeconds(g_server_pid) : -1;
  const double host0 = HostBusySeconds();
  const double self0 = CpuSeconds();
  const auto t0 = Clock::now();  // before the first taint PATCH is sent
  RunResult patches = RunClosedLoop(url, conns, nodes, 0, op);
  const auto t_patched = Clock::now();
  PrintRun("(evict)", "taint PATCHes", conns, 1, patches);
  if (patches.errors) Die("taint patches failed: " + patches.first_error);
  const long got = watch.WaitDeleted(pods, t0 + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(limit_s)));
  const auto t_waited = Clock::now();
  const double server_cpu = g_server_pid > 0 ? ProcCpuSeconds(g_server_pid) - server0 : -1;
  const double self_cpu = CpuSeconds() - self0;
  const double host = HostBusySeconds() - host0;
  watch.Stop();
  EvictionWatcher::Snapshot s = watch.Take();

  std::vector<double> deleted_ms, disrupted_ms, disrupt_to_delete_ms;
  for (long i = 0; i < pods; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (s.deleted_at[k] != Clock::time_point{}) deleted_ms.push_back(SinceMs(s.deleted_at[k], t0));
    if (s.disrupted_at[k] != Clock::time_point{}) {
      disrupted_ms.push_back(SinceMs(s.disrupted_at[k], t0));
      if (s.deleted_at[k] != Clock::time_point{}) {
        disrupt_to_delete_ms.push_back(Ms(s.deleted_at[k] - s.disrupted_at[k]));
      }
    }
  }
  const double all_s =
      got >= pods ? *std::max_element(deleted_ms.begin(), deleted_ms.end()) / 1000 : -1;
  const double wall_s = Ms(t_waited - t0) / 1000;
  std::printf(
      "(evict) %ld pods on %ld nodes: %ld deleted; the taint PATCHes took %.2f s; deletions "
      "read at (from the first PATCH) 1%% %.2f s, 50%% %.2f s, 90%% %.2f s, 99%% %.2f s, last "
      "%.2f s; DisruptionTarget read in a MODIFIED event: first %.2f s, last %.2f s; "
      "DisruptionTarget->DELETED p50 %.0f ms p99 %.0f ms\n",
      pods, nodes, got, Ms(t_patched - t0) / 1000, Percentile(deleted_ms, 0.01) / 1000,
      Percentile(deleted_ms, 0.5) / 1000, Percentile(deleted_ms, 0.9) / 1000,
      Percentile(deleted_ms, 0.99) / 1000,
      deleted_ms.empty() ? 0 : *std::max_element(deleted_ms.begin(), deleted_ms.end()) / 1000,
      disrupted_ms.empty() ? 0 : *std::min_element(disrupted_ms.begin(), disrupted_ms.end()) / 1000,
      disrupted_ms.empty() ? 0 : *std::max_element(disrupted_ms.begin(), disrupted_ms.end()) / 1000,
      Percentile(disrupt_to_delete_ms, 0.5), Percentile(disrupt_to_delete_ms, 0.99));
  std::printf(
      "(evict) DisruptionTarget (reason DeletionByTaintManager): in a MODIFIED event before the "
      "DELETED for %ld pods, in the DELETED event's object for %ld of %ld deleted; other watch "
      "events %ld%s\n",
      s.disrupted_before_deleted, s.deleted_with_condition, s.deleted, s.other_events,
      s.ended ? "; the watch ENDED EARLY" : "");
  if (server_cpu >= 0) {
    std::printf(
        "(evict) CPU from the first PATCH to the last deletion read (%.2f s): server %.2f s "
        "(%.0f us per pod), this driver %.2f s, other processes %.2f cores\n",
        wall_s, server_cpu, server_cpu * 1e6 / static_cast<double>(std::max(1L, got)), self_cpu,
        std::max(0.0, host - server_cpu - self_cpu) / wall_s);
  }
  std::fflush(stdout);

  // The events are written after each deletion's answer, asynchronously: poll until every pod
  // has its "Marking for deletion" event, or 60 s.
  TaintEventCount ev;
  double events_s = -1;
  for (const auto until = Clock::now() + std::chrono::seconds(60);;) {
    ev = CountTaintEvents(url, pods);
    if (ev.pods_marked >= pods) {
      events_s = Ms(Clock::now() - t0) / 1000;
      break;
    }
    if (Clock::now() > until) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::printf(
      "(evict) events with reason TaintManagerEviction: %ld (%ld pages): %ld \"Marking for "
      "deletion Pod ns/name\" for %ld distinct pods of %ld, %ld \"Cancelling deletion\"; all "
      "present by %.1f s after the first PATCH (polled at 1 s)\n",
      ev.events, ev.pages, ev.marking, ev.pods_marked, pods, ev.cancelling, events_s);
  std::printf(
      "(evict) result: pods %ld all_deleted_s %.3f patches_s %.3f p50_deleted_s %.3f "
      "disruption_target_before_delete %ld marking_events %ld server_cpu_s %.2f target_10s %s\n",
      pods, all_s, Ms(t_patched - t0) / 1000, Percentile(deleted_ms, 0.5) / 1000,
      s.disrupted_before_deleted, ev.marking, server_cpu,
      all_s < 0 ? "MISSED (not all deleted)" : Verdict(all_s, 10, true).c_str());
  std::fflush(stdout);
  return got >= pods ? 0 : 1;
}

int CmdEvictNode(const Flags& f) {
  const Url url = ParseUrl(f.Get("url", ""));
  const long nodes = f.Int("nodes", 200);
  const long per_node = f.Int("pods-per-node", 110);
  const long pods = nodes * per_node;
  const int conns = static_cast<int>(f.Int("conns", 16));
  CreateEvictionCluster(url, nodes, per_node, conns, "(evict-node)");
  std::printf("(evict-node) server idle after %.1f s\n", WaitServerIdle(60));
  EvictionWatcher watch(pods, nodes);
  StartPodWatch(url, &watch);
  HttpConn conn;
  std::string body;
  std::vector<double> from_answer, from_send, first_from_answer, patch_ms;
  long incomplete = 0;
  for (long node = 1; node <= nodes; ++node) {
    if (!conn.connected() && !conn.Connect(url)) Die("connect");
    const auto t_send = Clock::now();
    const int status = conn.RoundTrip(PatchTaint(node), &body);
    const auto t_answer = Clock::now();
    if (status != 200)
      Die("taint PATCH: status " + std::to_string(status) + " " + body.substr(0, 300));
    const long n = watch.WaitNode(node, per_node, t_answer + std::chrono::seconds(30));
    if (n < per_node) {
      ++incomplete;
      std::printf("(evict-node) node %ld: only %ld of %ld pods deleted within 30 s\n", node, n,
                  per_node);
      continue;
    }
    auto [first, last] = watch.NodeSpan(node);
    patch_ms.push_back(Ms(t_answer - t_send));
    from_answer.push_back(Ms(last - t_answer));
    from_send.push_back(Ms(last - t_send));
    first_from_answer.push_back(Ms(first - t_answer));
  }
  watch.Stop();
  EvictionWatcher::Snapshot s = watch.Take();
  std::printf(
      "(evict-node) %ld nodes x %ld pods, tainted one at a time: PATCH answer -> last of its "
      "pods' DELETED read: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms; PATCH sent -> "
      "last: p50 %.1f ms p99 %.1f ms; PATCH answer -> first DELETED p50 %.1f ms; PATCH itself "
      "p50 %.2f ms; nodes not emptied within 30 s: %ld\n",
      nodes, per_node, Percentile(from_answer, 0.5), Percentile(from_answer, 0.9),
      Percentile(from_answer, 0.99),
      from_answer.empty() ? 0 : *std::max_element(from_answer.begin(), from_answer.end()),
      Percentile(from_send, 0.5), Percentile(from_send, 0.99), Percentile(first_from_answer, 0.5),
      Percentile(patch_ms, 0.5), incomplete);
  std::printf(
      "(evict-node) DisruptionTarget in a MODIFIED event before the DELETED for %ld of %ld "
      "deleted pods, in the DELETED object for %ld%s\n",
      s.disrupted_before_deleted, s.deleted, s.deleted_with_condition,
      s.ended ? "; the watch ENDED EARLY" : "");
  std::printf("(evict-node) samples_ms:");
  for (double v : from_answer) std::printf(" %.2f", v);
  std::printf(
      "\n(evict-node) result: nodes %ld pods_per_node %ld p50_ms %.2f p99_ms %.2f max_ms %.2f "
      "incomplete %ld\n",
      nodes, per_node, Percentile(from_answer, 0.5), Percentile(from_answer, 0.99),
      from_answer.empty() ? 0 : *std::max_element(from_answer.begin(), from_answer.end()),
      incomplete);
  std::fflush(stdout);
  return incomplete == 0 ? 0 : 1;
}

// --- outage ------------------------------------------------------------------------------------
//
// A zone outage: nodes node-1..node-N are a separate `kubetaint kubelet` process's (--kubelet-pid,
// all in one zone; the server has healthy nodes of its own elsewhere, so not every zone is down)
// and pods pod-0.. are bound to them as in evict, with the NoExecute tolerations
// DefaultTolerationSeconds gave them. Once the kubelets have taken every pod to Running and both
// processes are idle, the driver SIGKILLs the kubelet process: the whole zone goes silent at
// once. Watches record, as this process reads them, the last Lease renewal of a node-* node
// (the last heartbeat), when each node got node.kubernetes.io/unreachable:NoExecute, and when
// each pod's deletion was read (evict's EvictionWatcher: the MODIFIED event that set its
// deletionTimestamp; with their kubelets gone the pods stay Terminating, as upstream).

class OutageWatcher {
 public:
  explicit OutageWatcher(long nodes) : tainted_at_(static_cast<size_t>(nodes) + 1), nodes_(nodes) {}

  bool Start(const Url& url, const std::string& lease_rv, const std::string& node_rv) {
    const bool leases = leases_.Start(
        url,
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?watch=true&"
        "resourceVersion=" +
            lease_rv,
        [this](std::string_view line, Clock::time_point at) {
          if (NodeIndex(line) < 0) return;
          std::lock_guard<std::mutex> lock(mu_);
          last_renewal_ = std::max(last_renewal_, at);
          ++renewals_;
        },
        [](bool) {});
    const bool nodes = nodes_watch_.Start(
        url, "/api/v1/nodes?watch=true&resourceVersion=" + node_rv,
        [this](std::string_view line, Clock::time_point at) {
          const long i = NodeIndex(line);
          if (i < 1 || i > nodes_) return;
          if (line.find(R"("node.kubernetes.io/unreachable","effect":"NoExecute")") ==
              std::string_view::npos) {
            return;
          }
          std::lock_guard<std::mutex> lock(mu_);
          Clock::time_point& t = tainted_at_[static_cast<size_t>(i)];
          if (t == Clock::time_point{}) {
            t = at;
            ++tainted_;
          }
        },
        [](bool) {});
    return leases && nodes;
  }
  void Stop() {
    leases_.Stop();
    nodes_watch_.Stop();
  }

  struct Snapshot {
    Clock::time_point last_renewal;
    long renewals = 0, tainted = 0;
    std::vector<Clock::time_point> tainted_at;  // per node, 1-based; {} = not seen
  };
  Snapshot Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return Snapshot{last_renewal_, renewals_, tainted_, tainted_at_};
  }

 private:
  // N of the first `"name":"node-N"` of the event (the object's own name), or -1.
  static long NodeIndex(std::string_view line) {
    constexpr std::string_view kName = R"("name":"node-)";
    const size_t p = line.find(kName);
    if (p == std::string_view::npos) return -1;
    return std::atol(line.data() + p + kName.size());
  }

  std::mutex mu_;
  Clock::time_point last_renewal_;             // guarded by mu_
  long renewals_ = 0, tainted_ = 0;            // guarded by mu_
  std::vector<Clock::time_point> tainted_at_;  // guarded by mu_
  const long nodes_;
  WatchStream leases_, nodes_watch_;  // last: destroyed (and their threads joined) first
};

// Pods of the bench not yet Running (phase Pending), at most 500 looked at.
long PodsNotRunning(const Url& url) {
  std::string body;
  if (OneShot(url, Request("GET", "/api/v1/pods?fieldSelector=status.phase%3DPending&limit=500"),
              &body) != 200) {
    Die("listing pending pods failed: " + body.substr(0, 200));
  }
  return static_cast<long>(CountOf(body, R"("name":"pod-)"));
}

// Whether process `pid` runs (exists and is not a zombie waiting for its parent).
bool ProcessRuns(pid_t pid) {
  const std::string stat = ProcStat(pid);
  return !stat.empty() && stat[0] != 'Z' && stat[0] != 'X';
}

// Waits, at most `limit_s`, until every process of `pids` has used under `cores` of a core for
// 1 s.
double WaitIdle(const std::vector<pid_t>& pids, double cores, double limit_s) {
  const auto start = Clock::now();
  std::vector<double> cpu;
  for (pid_t p : pids) cpu.push_back(ProcCpuSeconds(p));
  while (Ms(Clock::now() - start) < limit_s * 1000) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    bool idle = true;
    for (size_t k = 0; k < pids.size(); ++k) {
      const double now = ProcCpuSeconds(pids[k]);
      if (now - cpu[k] >= cores) idle = false;
      cpu[k] = now;
    }
    if (idle) break;
  }
  return Ms(Clock::now() - start) / 1000;
}

int CmdOutage(const Flags& f) {
  const Url url = ParseUrl(f.Get("url", ""));
  const long nodes = f.Int("nodes", 1000);
  const long pods = f.Int("pods", 30000);
  const int conns = static_cast<int>(f.Int("conns", 16));
  const double limit_s = f.Double("timeout", 300);
  const pid_t kubelet = static_cast<pid_t>(f.Int("kubelet-pid", 0));
  if (kubelet <= 0 || g_server_pid <= 0) Die("outage needs --kubelet-pid and --pid");

  for (int n = 0; n < kNamespaces; ++n) EnsureNamespace(url, "ns-" + std::to_string(n));
  // Without NoExecute tolerations of their own: DefaultTolerationSeconds gives them the server's.
  RunResult r = CreatePods(url, conns, 0, pods, nodes, PodNamespace, 1, "(outage)",
                           /*noexecute_tolerations=*/false);
  if (r.errors) Die("pod creates failed: " + r.first_error);
  // The kubelets take the pods to Running (one status write each): wait for that, bounded, then
  // for both processes to settle (the heartbeats keep them from idling entirely).
  const auto t_created = Clock::now();
  long pending = -1;
  for (const auto until = t_created + std::chrono::seconds(180); Clock::now() < until;) {
    if (!ProcessRuns(kubelet)) Die("the kubelet process ended before the outage");
    pending = PodsNotRunning(url);
    if (pending == 0) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (pending != 0) Die("pods still Pending after 180 s: " + std::to_string(pending));
  const double running_s = Ms(Clock::now() - t_created) / 1000;
  const double settled_s = WaitIdle({g_server_pid, kubelet}, 0.3, 30);
  std::printf("(outage) every pod Running %.1f s after the creates; settled %.1f s later\n",
              running_s, settled_s);

  EvictionWatcher evictions(pods, nodes);
  StartPodWatch(url, &evictions);
  std::string body;
  if (OneShot(
          url,
          Request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?limit=1"),
          &body) != 200) {
    Die("listing leases failed: " + body.substr(0, 200));
  }
  const std::string lease_rv = ResourceVersionOf(body);
  // Every node healthy before the outage: none was found silent while the kubelets were busy.
  if (OneShot(url, Request("GET", "/api/v1/nodes"), &body) != 200) {
    Die("listing nodes failed: " + body.substr(0, 200));
  }
  if (const size_t tainted = CountOf(body, "node.kubernetes.io/unreachable"); tainted > 0) {
    Die("nodes tainted unreachable before the outage (" + std::to_string(tainted) +
        " taints): the kubelets missed heartbeats");
  }
  OutageWatcher outage(nodes);
  if (!outage.Start(url, lease_rv, ResourceVersionOf(body))) Die("cannot watch leases and nodes");
  // Some renewals seen first, so that the last heartbeat is one this driver read.
  std::this_thread::sleep_for(std::chrono::seconds(3));

  const double server0 = ProcCpuSeconds(g_server_pid);
  const double host0 = HostBusySeconds();
  const auto t_kill = Clock::now();
  if (::kill(kubelet, SIGKILL) != 0) Die("cannot kill the kubelet process");
  const long got = evictions.WaitDeleted(
      pods,
      t_kill + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s)));
  const auto t_waited = Clock::now();
  const double server_cpu = ProcCpuSeconds(g_server_pid) - server0;
  const double host = HostBusySeconds() - host0;
  evictions.Stop();
  outage.Stop();
  const EvictionWatcher::Snapshot e = evictions.Take();
  const OutageWatcher::Snapshot o = outage.Take();

  auto span = [](const std::vector<Clock::time_point>& v) {
    Clock::time_point first = Clock::time_point::max(), last{};
    for (Clock::time_point t : v) {
      if (t == Clock::time_point{}) continue;
      first = std::min(first, t);
      last = std::max(last, t);
    }
    return std::make_pair(first, last);
  };
  const auto [first_taint, last_taint] = span(o.tainted_at);
  const auto [first_evict, last_evict] = span(e.deleted_at);
  const auto hb = o.last_renewal;
  auto s_from = [&](Clock::time_point t) {
    return t == Clock::time_point{} || t == Clock::time_point::max() ? -1.0 : Ms(t - hb) / 1000;
  };
  const double all_s = got >= pods ? s_from(last_evict) : -1;
  std::printf(
      "(outage) kubelet process killed %.2f s after the last lease renewal read (%ld renewals "
      "read); from that last heartbeat: first node tainted unreachable:NoExecute at %.2f s, "
      "last (%ld of %ld nodes) at %.2f s; first pod deletion read at %.2f s, last (%ld of %ld "
      "pods) at %.2f s\n",
      Ms(t_kill - hb) / 1000, o.renewals, s_from(first_taint), o.tainted, nodes, s_from(last_taint),
      s_from(first_evict), got, pods, s_from(last_evict));
  const double wall_s = Ms(t_waited - t_kill) / 1000;
  std::printf(
      "(outage) CPU from the kill to the last deletion read (%.2f s): server %.2f s (%.0f us "
      "per evicted pod), other processes %.2f cores; DisruptionTarget before the deletion for "
      "%ld pods%s\n",
      wall_s, server_cpu, server_cpu * 1e6 / static_cast<double>(std::max(1L, got)),
      std::max(0.0, host - server_cpu) / wall_s, e.disrupted_before_deleted,
      e.ended ? "; the pod watch ENDED EARLY" : "");
  std::printf(
      "(outage) result: nodes %ld pods %ld heartbeat_to_last_eviction_s %.3f "
      "heartbeat_to_first_taint_s %.3f heartbeat_to_last_taint_s %.3f "
      "heartbeat_to_first_eviction_s %.3f server_cpu_s %.2f\n",
      nodes, pods, all_s, s_from(first_taint), s_from(last_taint), s_from(first_evict), server_cpu);
  std::fflush(stdout);
  return got >= pods ? 0 : 1;
}

void Usage() {
  std::fprintf(
      stderr,
      "usage: api_load populate|create|get|list|patch|watch|startup|schedule|evict|evict-node|\n"
      "                outage\n"
      "       [--flag value]...\n"
      "  common: --url http://127.0.0.1:PORT --nodes 5000 --pods 150000 [--pid SERVER_PID]\n"
      "          (an https:// --url needs --pki DIR: a data dir's pki/, for its CA and admin\n"
      "          certificate)\n"
      "  populate: --conns 16 --segments 10        create: --pods 15000 --runs 2\n"
      "  get|list|patch: --conns 1,16 --seconds 4 --runs 3\n"
      "  watch: --watchers 100 --events 20 --resource pods|nodes\n"
      "  startup: --bin build/kubetaint --data-dir DIR --runs 3\n"
      "  schedule: --nodes 5000 --init-pods 1000 --pods 10000 --conns 16 --runs 3\n"
      "            [--workload basic|taints] [--create-only 1] [--driver polled|threads]\n"
      "  evict: --nodes 1000 --pods-per-node 100 --conns 16 [--timeout 120]\n"
      "  evict-node: --nodes 200 --pods-per-node 110\n"
      "  outage: --nodes 1000 --pods 30000 --kubelet-pid PID --pid SERVER_PID [--timeout 300]\n");
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    Usage();
    return 2;
  }
  const std::string cmd = argv[1];
  Flags f;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (!a.starts_with("--") || i + 1 >= argc) {
      Usage();
      return 2;
    }
    f.values[a.substr(2)] = argv[++i];
  }
  g_server_pid = static_cast<pid_t>(f.Int("pid", 0));
  if (f.Get("url", "").starts_with("https://")) InitTls(f.Get("pki", ""));
  if (cmd == "populate") return CmdPopulate(f);
  if (cmd == "create") return CmdCreate(f);
  if (cmd == "get") return CmdGet(f);
  if (cmd == "list") return CmdList(f);
  if (cmd == "patch") return CmdPatch(f);
  if (cmd == "watch") return CmdWatch(f);
  if (cmd == "startup") return CmdStartup(f);
  if (cmd == "schedule") return CmdSchedule(f);
  if (cmd == "evict") return CmdEvict(f);
  if (cmd == "evict-node") return CmdEvictNode(f);
  if (cmd == "outage") return CmdOutage(f);
  Usage();
  return 2;
}
