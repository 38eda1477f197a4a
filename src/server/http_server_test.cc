// Tests of the HTTP/1.1 server (http.h) over loopback, with the small blocking client of
// http_test_client.h, written on plain sockets so that every byte on the wire can be checked:
// keep-alive, body limits, malformed requests, chunked watch streams, slow and vanished
// clients, and Stop.
//
// Every wait is bounded: reads poll with a deadline, and conditions are awaited with one.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "server/http.h"
#include "server/http_test_client.h"

namespace kt::server {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kTimeout = std::chrono::seconds(10);

using TestClient = testing::TestConnection;

// Waits for `done` with a deadline, re-checking it every time `cv` is notified.
template <class Pred>
bool WaitFor(std::mutex& mu, std::condition_variable& cv, Pred done) {
  std::unique_lock<std::mutex> lock(mu);
  return cv.wait_until(lock, Clock::now() + kTimeout, done);
}

// Routes by path:
//   /hello   200 "hello"             /echo   echoes the body, method and X-Test header
//   /drop    drops the responder     /twice  responds twice
//   /later   answers from a thread   /slow   keeps the responder for the test
//   /stream  starts a chunked stream and hands it to the test
//   /inject  answers with headers that would break the framing
class TestHandler : public HttpHandler {
 public:
  ~TestHandler() override {
    for (std::thread& t : threads_) t.join();
  }

  void Handle(HttpRequest req, std::shared_ptr<HttpResponder> r) override {
    std::string path = req.target.substr(0, req.target.find('?'));
    if (path == "/hello") {
      r->Respond(200, "text/plain", MakeBody("hello"), {{"X-Served-By", "test"}});
    } else if (path == "/echo") {
      r->Respond(200, "application/octet-stream", MakeBody(req.body),
                 {{"X-Method", req.method}, {"X-Test-Echo", std::string(req.Header("x-test"))}});
    } else if (path == "/drop") {
      // The responder goes out of scope unanswered.
    } else if (path == "/twice") {
      r->Respond(200, "text/plain", MakeBody("first"));
      r->Respond(201, "text/plain", MakeBody("second"));
    } else if (path == "/later") {
      std::lock_guard<std::mutex> lock(mu_);
      threads_.emplace_back([r] { r->Respond(200, "text/plain", MakeBody("later")); });
    } else if (path == "/slow") {
      std::lock_guard<std::mutex> lock(mu_);
      slow_.push_back(std::move(r));
      cv_.notify_all();
    } else if (path == "/stream") {
      std::shared_ptr<HttpStream> stream = r->StartStream(200, "application/json");
      std::lock_guard<std::mutex> lock(mu_);
      size_t id = streams_.size();
      streams_.push_back(stream);
      stream->OnClose([this, id] {
        std::lock_guard<std::mutex> lock(mu_);
        closed_.push_back(id);
        cv_.notify_all();
      });
      cv_.notify_all();
    } else if (path == "/inject") {
      r->Respond(200, "text/plain", MakeBody("safe"),
                 {{"X-Evil", "a\r\nInjected: yes"}, {"Content-Length", "999"}, {"X-Ok", "1"}});
    } else {
      r->Respond(404, "text/plain", MakeBody("not found"));
    }
  }

  bool WaitForStreams(size_t n) {
    return WaitFor(mu_, cv_, [&] { return streams_.size() >= n; });
  }
  bool WaitForClosed(size_t n) {
    return WaitFor(mu_, cv_, [&] { return closed_.size() >= n; });
  }
  std::shared_ptr<HttpStream> stream(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return streams_.at(i);
  }
  size_t closed_count() {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_.size();
  }
  std::shared_ptr<HttpResponder> WaitForSlow() {
    if (!WaitFor(mu_, cv_, [&] { return !slow_.empty(); })) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    auto r = slow_.back();
    slow_.pop_back();
    return r;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
  std::vector<std::shared_ptr<HttpResponder>> slow_;
  std::vector<std::shared_ptr<HttpStream>> streams_;
  std::vector<size_t> closed_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions options = {}) {
    options.listen = "127.0.0.1:0";
    Result<std::unique_ptr<HttpServer>> server = StartHttpServer(options, &handler_);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    port_ = server_->port();
  }

  // GET /hello on connection `c`.
  static void ExpectHelloOn(TestClient& c) {
    ASSERT_TRUE(c.Send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "hello");
  }

  // GET /hello on a new connection.
  void ExpectHelloServed() {
    TestClient c(port_);
    ASSERT_TRUE(c.connected());
    ExpectHelloOn(c);
  }

  // Opens GET /stream and waits for its header and for the handler to hold stream `index`.
  std::unique_ptr<TestClient> OpenStream(size_t index, int rcvbuf = 0) {
    auto c = std::make_unique<TestClient>(port_, rcvbuf);
    EXPECT_TRUE(c->connected());
    EXPECT_TRUE(c->Send("GET /stream?watch=true HTTP/1.1\r\nHost: t\r\n\r\n"));
    auto head = c->ReadHead();
    EXPECT_TRUE(head);
    if (head) {
      EXPECT_EQ(head->status, 200);
      EXPECT_EQ(head->Header("Transfer-Encoding"), "chunked");
      EXPECT_EQ(head->Header("Content-Type"), "application/json");
    }
    EXPECT_TRUE(handler_.WaitForStreams(index + 1));
    return c;
  }

  TestHandler handler_;  // declared first: it outlives the server
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

TEST_F(HttpServerTest, PortZeroPicksAFreePort) {
  Start();
  EXPECT_GT(port_, 0);
  ExpectHelloServed();
}

TEST(HttpServerStartTest, BadListenAddressIsAnErrorNamingIt) {
  TestHandler handler;
  struct Case {
    std::string listen;
    StatusCode code;
    std::string why;
  } cases[] = {
      {"nonsense", StatusCode::kBadRequest, "no port"},
      {"127.0.0.1:99999", StatusCode::kBadRequest, "port out of range"},
      {"127.0.0.1:http", StatusCode::kBadRequest, "port not a number"},
      {"::1:80", StatusCode::kBadRequest, "IPv6 without brackets"},
      {"192.0.2.1:0", StatusCode::kUnavailable, "not an address of this machine (TEST-NET-1)"},
  };
  for (const Case& c : cases) {
    HttpServerOptions options;
    options.listen = c.listen;
    auto server = StartHttpServer(options, &handler);
    ASSERT_FALSE(server) << c.listen << ": " << c.why;
    EXPECT_EQ(server.error().code(), c.code) << c.listen << ": " << server.error().ToString();
    EXPECT_NE(server.error().message().find(c.listen), std::string::npos)
        << server.error().ToString();
  }
}

TEST(HttpServerStartTest, PortInUseIsUnavailable) {
  TestHandler handler;
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  auto first = StartHttpServer(options, &handler);
  ASSERT_TRUE(first);
  options.listen = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = StartHttpServer(options, &handler);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.error().message().find(options.listen), std::string::npos);
}

TEST_F(HttpServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  Start();
  TestClient c(port_);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c.Send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r) << "request " << i;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "hello");
    EXPECT_EQ(r->Header("Content-Type"), "text/plain");
    EXPECT_EQ(r->Header("Content-Length"), "5");
    EXPECT_EQ(r->Header("X-Served-By"), "test");
    EXPECT_EQ(r->Header("Connection"), "");
  }
  // The client asks to close: the server says so and closes.
  ASSERT_TRUE(c.Send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_TRUE(c.ReadEof());
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(
      c.Send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"
             "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"));
  auto first = c.ReadResponse();
  auto second = c.ReadResponse();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->body, "hello");
  EXPECT_EQ(second->body, "abc");
}

TEST_F(HttpServerTest, PostBodyIsEchoed) {
  Start();
  TestClient c(port_);
  std::string body(1 << 20, 'x');
  for (size_t i = 0; i < body.size(); i += 7) body[i] = static_cast<char>('a' + i % 26);
  ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nX-TEST: yes\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("X-Method"), "POST");
  EXPECT_EQ(r->Header("X-Test-Echo"), "yes") << "header lookup is case-insensitive";
  EXPECT_TRUE(r->body == body);
}

TEST_F(HttpServerTest, ChunkedRequestBodyIsEchoed) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(
      c.Send("PUT /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
             "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "hello world");
  EXPECT_EQ(r->Header("X-Method"), "PUT");
}

// The body is parsed from what the header's read brought when it is all there; a body that
// arrives later, in parts, is read on.
TEST_F(HttpServerTest, BodyArrivingInPartsAfterTheHeaderIsEchoed) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhel"));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the server reads the first part
  ASSERT_TRUE(c.Send("lo wo"));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(c.Send("rld"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello world");
  // The connection stays usable.
  ExpectHelloOn(c);
}

TEST_F(HttpServerTest, MalformedChunkedBodyInTheHeadersSegmentGets400AndClose) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(
      c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
             "zz\r\nhello\r\n0\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_TRUE(c.ReadEof());
  ExpectHelloServed();
}

TEST_F(HttpServerTest, ExpectContinueGetsInterimResponseBeforeTheBody) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send(
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n"));
  auto interim = c.ReadHead();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(c.Send("hello world"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello world");
}

constexpr std::string_view kTooLarge =
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
    R"("message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge",)"
    R"("code":413})";

TEST_F(HttpServerTest, BodyOverThreeMebibytesGets413Status) {
  Start();
  TestClient c(port_);
  std::string body(3 * 1024 * 1024 + 1, 'x');
  // The whole body is sent, as a client that does not use Expect would.
  ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->Header("Content-Type"), "application/json");
  EXPECT_EQ(r->body, kTooLarge);
  EXPECT_TRUE(c.ReadEof());
  ExpectHelloServed();
}

TEST_F(HttpServerTest, BodyAtTheLimitIsAccepted) {
  Start();
  TestClient c(port_);
  std::string body(3 * 1024 * 1024, 'x');
  ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.size(), body.size());
}

TEST_F(HttpServerTest, OversizedBodyWithExpectGets413WithoutContinue) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(
      c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4000000\r\n"
             "Expect: 100-continue\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->body, kTooLarge);
}

TEST_F(HttpServerTest, OversizedChunkedBodyGets413) {
  HttpServerOptions options;
  options.max_body_bytes = 8;
  Start(options);
  TestClient c(port_);
  ASSERT_TRUE(
      c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
             "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find(R"("message":"Request entity too large: limit is 8")"), std::string::npos)
      << r->body;
}

TEST_F(HttpServerTest, MalformedRequestsGet400AndClose) {
  Start();
  const char* requests[] = {
      "GARBAGE\r\n\r\n",                                                // no target or version
      "GET /hello HTTP/1.1\r\nHost: t\r\nNo colon here\r\n\r\n",        // bad header line
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: ten\r\n\r\n",  // bad length
      "GET /hello HTTP/9.9\r\nHost: t\r\n\r\n",                         // bad version
  };
  for (const char* request : requests) {
    TestClient c(port_);
    ASSERT_TRUE(c.Send(request));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r) << request;
    EXPECT_EQ(r->status, 400) << request;
    EXPECT_EQ(r->Header("Connection"), "close") << request;
    EXPECT_TRUE(c.ReadEof()) << request;
  }
  ExpectHelloServed();
}

TEST_F(HttpServerTest, OversizedHeaderGets431) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(
      c.Send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(2 << 20, 'h') + "\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 431);
  EXPECT_TRUE(c.ReadEof());
}

TEST_F(HttpServerTest, HeadGetsHeadersWithoutBody) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = c.ReadResponse(/*head_request=*/true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Content-Length"), "5");
  // Had a body been sent, it would be read here as the next response's start.
  ASSERT_TRUE(c.Send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto next = c.ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(next->body, "hello");
}

TEST_F(HttpServerTest, DroppedResponderAnswers500) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send("GET /drop HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find(R"("reason":"InternalError")"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find(R"("code":500)"), std::string::npos) << r->body;
}

TEST_F(HttpServerTest, ResponseFromAnotherThread) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send("GET /later HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "later");
}

TEST_F(HttpServerTest, SecondResponseIsIgnored) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send("GET /twice HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "first");
  // The next request on the connection gets its own answer, not the stray second one.
  ExpectHelloOn(c);
}

TEST_F(HttpServerTest, HeadersThatWouldBreakFramingAreDropped) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send("GET /inject HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "safe");
  EXPECT_EQ(r->Header("Content-Length"), "4");
  EXPECT_EQ(r->Header("Injected"), "");
  EXPECT_EQ(r->Header("X-Evil"), "");
  EXPECT_EQ(r->Header("X-Ok"), "1");
}

TEST_F(HttpServerTest, StreamDeliversEachWriteAsOneChunkInOrder) {
  Start();
  auto c = OpenStream(0);
  auto stream = handler_.stream(0);
  // Each event must reach the client before the next is written: flushed one by one.
  for (int i = 0; i < 50; ++i) {
    std::string event = R"({"type":"ADDED","object":{"n":)" + std::to_string(i) + "}}\n";
    ASSERT_TRUE(stream->Write({MakeBody(event)}));
    EXPECT_EQ(c->ReadChunk(), event);
  }
  // Several buffers make one chunk, in order.
  ASSERT_TRUE(stream->Write({MakeBody("{\"a\":"), MakeBody("1"), nullptr, MakeBody("}\n")}));
  EXPECT_EQ(c->ReadChunk(), "{\"a\":1}\n");
  // An empty write sends nothing (an empty chunk would end the stream).
  EXPECT_TRUE(stream->Write({MakeBody("")}));
  stream->Close();
  EXPECT_TRUE(stream->closed());
  EXPECT_EQ(c->ReadChunk(), "") << "the final chunk";
  EXPECT_TRUE(c->ReadEof());
  EXPECT_TRUE(handler_.WaitForClosed(1));
  EXPECT_FALSE(stream->Write({MakeBody("late\n")}));
}

TEST_F(HttpServerTest, StreamHeaderIsSentBeforeAnyEvent) {
  Start();
  // OpenStream reads the header before anything is written, as kubectl waits for it.
  auto c = OpenStream(0);
  EXPECT_FALSE(handler_.stream(0)->closed());
}

TEST_F(HttpServerTest, ClientDisconnectFiresOnClose) {
  Start();
  auto c = OpenStream(0);
  auto stream = handler_.stream(0);
  c->Close();  // no event is ever written: the pending read must notice
  ASSERT_TRUE(handler_.WaitForClosed(1));
  EXPECT_TRUE(stream->closed());
  EXPECT_FALSE(stream->Write({MakeBody("{}\n")}));
}

TEST_F(HttpServerTest, SlowReaderOverflowsQueueAndIsClosed) {
  HttpServerOptions options;
  options.max_stream_queue_bytes = 256 * 1024;
  Start(options);
  auto c = OpenStream(0, /*rcvbuf=*/4096);  // and never read again
  auto stream = handler_.stream(0);
  Body event = MakeBody(std::string(64 * 1024, 'e'));
  bool refused = false;
  // Far more than the socket buffers and the queue can hold together.
  for (int i = 0; i < 100000 && !refused; ++i) refused = !stream->Write({event});
  EXPECT_TRUE(refused);
  ASSERT_TRUE(handler_.WaitForClosed(1));
  EXPECT_TRUE(stream->closed());
  // The client, reading at last, finds the stream cut off without the final chunk, as a
  // watcher that must relist should.
  std::optional<std::string> rest = c->ReadToEof();
  ASSERT_TRUE(rest);
  EXPECT_FALSE(rest->size() >= 5 && rest->compare(rest->size() - 5, 5, "0\r\n\r\n") == 0);
  ExpectHelloServed();
}

TEST_F(HttpServerTest, TwoHundredOpenStreamsAndNewRequests) {
  HttpServerOptions options;
  options.io_threads = 2;
  Start(options);
  constexpr size_t kStreams = 200;
  std::vector<std::unique_ptr<TestClient>> watchers;
  for (size_t i = 0; i < kStreams; ++i) {
    watchers.push_back(OpenStream(i));
    ASSERT_FALSE(HasFailure()) << "stream " << i;
  }
  for (int i = 0; i < 20; ++i) ExpectHelloServed();
  Body event = MakeBody("{\"type\":\"BOOKMARK\"}\n");
  for (size_t i = 0; i < kStreams; ++i) ASSERT_TRUE(handler_.stream(i)->Write({event}));
  for (size_t i = 0; i < kStreams; ++i) {
    ASSERT_EQ(watchers[i]->ReadChunk(), *event) << "stream " << i;
  }
  EXPECT_EQ(handler_.closed_count(), 0u);
}

TEST_F(HttpServerTest, StopEndsStreamsWithFinalChunkAndReturns) {
  Start();
  std::vector<std::unique_ptr<TestClient>> watchers;
  for (size_t i = 0; i < 3; ++i) watchers.push_back(OpenStream(i));
  TestClient idle(port_);  // a keep-alive connection between requests
  ASSERT_TRUE(idle.Send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(idle.ReadResponse());
  ASSERT_TRUE(handler_.stream(0)->Write({MakeBody("{\"n\":1}\n")}));
  EXPECT_EQ(watchers[0]->ReadChunk(), "{\"n\":1}\n");

  // As the serve command does on SIGTERM: from another thread.
  std::thread stopper([&] { server_->Stop(); });
  for (auto& w : watchers) {
    EXPECT_EQ(w->ReadChunk(), "") << "the final chunk: a clean end";
    EXPECT_TRUE(w->ReadEof());
  }
  EXPECT_TRUE(idle.ReadEof());
  stopper.join();
  EXPECT_EQ(handler_.closed_count(), 3u) << "every OnClose ran before Stop returned";
  EXPECT_FALSE(handler_.stream(1)->Write({MakeBody("{}\n")}));
  server_->Stop();  // idempotent
  TestClient late(port_);
  EXPECT_FALSE(late.connected()) << "no longer accepting";
}

TEST_F(HttpServerTest, StopLetsInFlightResponseFinish) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::shared_ptr<HttpResponder> responder = handler_.WaitForSlow();
  ASSERT_TRUE(responder);

  auto start = Clock::now();
  std::thread stopper([&] { server_->Stop(/*grace_ms=*/20000); });
  // Once new connections are refused, Stop has begun; then the handler answers.
  bool refusing = false;
  while (!refusing && Clock::now() < start + kTimeout) {
    refusing = !TestClient(port_).connected();
    if (!refusing) std::this_thread::yield();
  }
  ASSERT_TRUE(refusing);
  responder->Respond(200, "text/plain", MakeBody("done"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "done");
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_TRUE(c.ReadEof());
  stopper.join();
  // Stop returned once the last response was written, not at the end of its grace period.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(15));
}

TEST_F(HttpServerTest, StopWithoutGraceClosesStuckRequests) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::shared_ptr<HttpResponder> responder = handler_.WaitForSlow();
  ASSERT_TRUE(responder);
  server_->Stop(/*grace_ms=*/0);
  EXPECT_TRUE(c.ReadEof());
  // Answering after Stop is harmless.
  responder->Respond(200, "text/plain", MakeBody("too late"));
  responder.reset();
}

TEST_F(HttpServerTest, StopEndsStreamOfClientThatDoesNotRead) {
  HttpServerOptions options;
  options.max_stream_queue_bytes = 64 << 20;  // no overflow: the queue just grows
  Start(options);
  auto c = OpenStream(0, /*rcvbuf=*/4096);
  Body event = MakeBody(std::string(64 * 1024, 'e'));
  for (int i = 0; i < 128; ++i) ASSERT_TRUE(handler_.stream(0)->Write({event}));
  server_->Stop(/*grace_ms=*/100);  // the final chunk may never get out: forced after grace
  EXPECT_EQ(handler_.closed_count(), 1u);
  EXPECT_TRUE(handler_.stream(0)->closed());
}

TEST_F(HttpServerTest, StreamStartedAfterStopIsBornClosed) {
  Start();
  TestClient c(port_);
  ASSERT_TRUE(c.Send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::shared_ptr<HttpResponder> responder = handler_.WaitForSlow();
  ASSERT_TRUE(responder);
  server_->Stop(/*grace_ms=*/0);
  std::shared_ptr<HttpStream> stream = responder->StartStream(200, "application/json");
  EXPECT_TRUE(stream->closed());
  EXPECT_FALSE(stream->Write({MakeBody("{}\n")}));
  bool called = false;
  stream->OnClose([&] { called = true; });
  EXPECT_TRUE(called);
}

TEST_F(HttpServerTest, StreamHandleOutlivingTheServerIsSafe) {
  Start();
  auto c = OpenStream(0);
  std::shared_ptr<HttpStream> stream = handler_.stream(0);
  server_.reset();  // stops, and destroys the server
  EXPECT_TRUE(stream->closed());
  EXPECT_FALSE(stream->Write({MakeBody("{}\n")}));
  bool called = false;
  stream->OnClose([&] { called = true; });
  EXPECT_TRUE(called) << "a callback set after the close runs at once";
}

TEST_F(HttpServerTest, AccessLogHasOneLinePerRequest) {
  HttpServerOptions options;
  options.access_log = true;
  ::testing::internal::CaptureStderr();
  Start(options);
  {
    TestClient c(port_);
    ASSERT_TRUE(c.Send("GET /hello?x=1 HTTP/1.1\r\nHost: t\r\n\r\n"));
    ASSERT_TRUE(c.ReadResponse());
    ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"));
    ASSERT_TRUE(c.ReadResponse());
  }
  {
    auto w = OpenStream(0);
    ASSERT_TRUE(handler_.stream(0)->Write({MakeBody("0123456789")}));
    handler_.stream(0)->Close();
    ASSERT_TRUE(handler_.WaitForClosed(1));
  }
  server_->Stop();
  std::string log = ::testing::internal::GetCapturedStderr();
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << log;
  const std::string peer = R"(^127\.0\.0\.1:\d+ )";
  EXPECT_TRUE(
      std::regex_match(lines[0], std::regex(peer + R"("GET /hello\?x=1" 200 5 \d+\.\d{3}ms$)")))
      << lines[0];
  EXPECT_TRUE(std::regex_match(lines[1], std::regex(peer + R"("POST /echo" 200 3 \d+\.\d{3}ms$)")))
      << lines[1];
  EXPECT_TRUE(std::regex_match(
      lines[2], std::regex(peer + R"("GET /stream\?watch=true" 200 10 \d+\.\d{3}ms$)")))
      << lines[2];
}

}  // namespace
}  // namespace kt::server
