// A blocking HTTP/1.1 test client on one loopback connection, for tests that drive the real
// server over sockets: every read has a deadline, so no test waits forever or sleeps.
//
//   TestConnection c(port);
//   c.Send("GET /api/v1/nodes HTTP/1.1\r\nHost: t\r\n\r\n");
//   std::optional<HttpResponse> r = c.ReadResponse();
//
// Test-only; header-only so that each test binary can include it.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kt::server::testing {

using TestClock = std::chrono::steady_clock;
inline constexpr auto kTestTimeout = std::chrono::seconds(10);

struct HttpResponse {
  std::string head;  // the status line and headers as received
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  std::string Header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (strcasecmp(n.c_str(), std::string(name).c_str()) == 0) return v;
    }
    return "";
  }
};

// One connection to 127.0.0.1:port; every read has a deadline.
class TestConnection {
 public:
  // A small `rcvbuf` makes a client that stops reading stall the server quickly.
  explicit TestConnection(int port, int rcvbuf = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return;
    if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      Close();
      return;
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  }
  ~TestConnection() { Close(); }
  TestConnection(const TestConnection&) = delete;
  TestConnection& operator=(const TestConnection&) = delete;

  bool connected() const { return fd_ >= 0; }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool Send(std::string_view data) {
    const auto deadline = TestClock::now() + kTestTimeout;
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
      if (!Poll(POLLOUT, deadline)) return false;
    }
    return true;
  }

  std::optional<HttpResponse> ReadHead() {
    const auto deadline = TestClock::now() + kTestTimeout;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (Fill(deadline) != kData) return std::nullopt;
    }
    HttpResponse r;
    r.head = buf_.substr(0, end);
    std::istringstream lines(r.head);
    buf_.erase(0, end + 4);
    std::string line;
    std::getline(lines, line);
    if (line.rfind("HTTP/1.1 ", 0) != 0) return std::nullopt;
    r.status = std::atoi(line.c_str() + 9);
    while (std::getline(lines, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      size_t colon = line.find(':');
      if (colon == std::string::npos) return std::nullopt;
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      r.headers.emplace_back(line.substr(0, colon), value);
    }
    return r;
  }

  // A whole response framed by Content-Length (no body after HEAD). A chunked response (a watch)
  // is returned with its head only.
  std::optional<HttpResponse> ReadResponse(bool head_request = false) {
    std::optional<HttpResponse> r = ReadHead();
    if (!r || r->Header("Transfer-Encoding") == "chunked") return r;
    const std::string length = r->Header("Content-Length");
    const size_t n = head_request || length.empty() ? 0 : std::stoul(length);
    const auto deadline = TestClock::now() + kTestTimeout;
    while (buf_.size() < n) {
      if (Fill(deadline) != kData) return std::nullopt;
    }
    r->body = buf_.substr(0, n);
    buf_.erase(0, n);
    return r;
  }

  // The data of the next chunk; "" for the final chunk; nullopt on a broken stream or timeout.
  std::optional<std::string> ReadChunk() { return ReadChunk(TestClock::now() + kTestTimeout); }
  std::optional<std::string> ReadChunk(TestClock::time_point deadline) {
    size_t eol;
    while ((eol = buf_.find("\r\n")) == std::string::npos) {
      if (Fill(deadline) != kData) return std::nullopt;
    }
    const size_t size = std::stoul(buf_.substr(0, eol), nullptr, 16);
    const size_t need = eol + 2 + size + 2;
    while (buf_.size() < need) {
      if (Fill(deadline) != kData) return std::nullopt;
    }
    std::string data = buf_.substr(eol + 2, size);
    buf_.erase(0, need);
    return data;
  }

  // Everything until the server closes the connection; nullopt on a timeout.
  std::optional<std::string> ReadToEof() {
    const auto deadline = TestClock::now() + kTestTimeout;
    for (;;) {
      switch (Fill(deadline)) {
        case kEof:
        case kReset:
          return std::exchange(buf_, "");
        case kTimedOut:
          return std::nullopt;
        case kData:
          break;
      }
    }
  }

  // True if the server closed the connection with nothing more to read.
  bool ReadEof() {
    const auto deadline = TestClock::now() + kTestTimeout;
    for (;;) {
      if (!buf_.empty()) return false;
      switch (Fill(deadline)) {
        case kEof:
        case kReset:
          return true;
        case kTimedOut:
          return false;
        case kData:
          break;
      }
    }
  }

 private:
  enum FillResult { kData, kEof, kReset, kTimedOut };

  bool Poll(short events, TestClock::time_point deadline) {
    for (;;) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - TestClock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, events, 0};
      int n = ::poll(&p, 1, static_cast<int>(left.count()));
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) return false;
    }
  }

  // Reads more into buf_.
  FillResult Fill(TestClock::time_point deadline) {
    for (;;) {
      char tmp[65536];
      ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
      if (n > 0) {
        buf_.append(tmp, static_cast<size_t>(n));
        return kData;
      }
      if (n == 0) return kEof;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return kReset;
      if (!Poll(POLLIN, deadline)) return kTimedOut;
    }
  }

  int fd_ = -1;
  std::string buf_;
};

}  // namespace kt::server::testing
