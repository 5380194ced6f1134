#pragma once
// One client's session with the gateway. Included by gateway*.cpp only.

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/gateway/gateway_impl.h"
#include "core/mcp/request_ledger.h"
#include "core/policy/approval.h"

namespace kaja::core::gateway {

/// Asks the client's person through elicitation/create, or declines with how to approve
/// when the client cannot ask anyone.
class ElicitingApprover final : public policy::AsyncApprover {
 public:
  explicit ElicitingApprover(GatewaySession& session) : session_(session) {}
  void ask(const policy::ApprovalRequest& request,
           std::function<void(policy::ApprovalReply)> done) override;
  [[nodiscard]] bool isPerson() const override;

  /// The client request whose call is being decided: the pipeline asks synchronously inside
  /// ToolCatalog::call(), so the session sets this around that call.
  mcp::Json relatedTo;

 private:
  GatewaySession& session_;
};

class GatewaySession final : public server::Session,
                             public std::enable_shared_from_this<GatewaySession> {
 public:
  GatewaySession(std::shared_ptr<Gateway::Impl> gateway, std::shared_ptr<server::Outbox> outbox);
  ~GatewaySession() override;

  void receive(mcp::Message message) override;
  void end() override;
  /// Checks a tools/call's Mcp-Param-* headers against the x-mcp-header parameters of the
  /// tool it names, as the catalog lists it.
  [[nodiscard]] std::optional<std::string> paramHeaderMismatch(
      const mcp::Request& request, const server::ParamHeaders& headers) const override;

  /// Sends a request to the client; `done` gets its result, or an error after `timeout`,
  /// when the session ends, or when the client answers with an error.
  /// To a 2026-07-28 client it goes in an input round, under `inputKey` when given (the
  /// server's own key, when it asked in an input_required result).
  void sendRequest(const std::string& method, mcp::Json params, const mcp::Json& relatedTo,
                   std::chrono::milliseconds timeout, std::function<void(Result<mcp::Json>)> done,
                   const std::string& inputKey = {});
  /// The client capabilities a 2026-07-28 server behind `ability` is told: the questions
  /// this client can answer (elicitation, sampling), and roots when kaja gives the server
  /// the persona's folders.
  [[nodiscard]] mcp::Json capabilitiesFor(const std::string& ability) const;
  /// Sends a notification; `relatedTo` null puts it on the session's own stream.
  void sendNotification(const std::string& method, mcp::Json params,
                        const mcp::Json& relatedTo = nullptr);
  /// Returns true when `call` is one of this session's requests in flight.
  [[nodiscard]] bool runs(const HostCall& call) const {
    return std::ranges::any_of(inFlight_, [&](const auto& entry) {
      return entry.second.call.ability == call.ability && entry.second.call.id == call.id &&
             entry.second.call.connection == call.connection;
    });
  }
  /// Returns true when the client declared `capability` (elicitation, sampling, …).
  [[nodiscard]] bool clientHas(const std::string& capability) const;
  /// Returns true once the client has initialized (or speaks 2026-07-28).
  [[nodiscard]] bool started() const { return started_; }
  [[nodiscard]] bool ended() const { return ended_; }
  [[nodiscard]] bool stateless() const { return stateless_; }
  /// Returns true when the client subscribed to updates of `uri`.
  [[nodiscard]] bool subscribedTo(const std::string& uri) const {
    return subscribed_.contains(uri);
  }
  /// Returns true while the client follows `uri`: a 2025 client's subscription, or a
  /// 2026-07-28 client's open listen stream naming it.
  [[nodiscard]] bool holds(const std::string& uri) const {
    return !ended_ && (subscribed_.contains(uri) || (listening_ && listening_->uris.contains(uri)));
  }
  /// Returns the level a 2025 client chose for the log messages sent outside any call.
  [[nodiscard]] const std::string& logLevel() const { return logLevel_; }
  /// Returns true when the client holds a subscription served by `ability`, which keeps
  /// that server from being stopped for idleness.
  [[nodiscard]] bool subscribesTo(const std::string& ability) const {
    return std::ranges::any_of(subscribed_,
                               [&](const auto& entry) { return entry.second == ability; });
  }
  /// Passes a change notification (tools, prompts or resources list_changed, or
  /// resources/updated) to a 2026-07-28 client's subscriptions/listen stream, tagged with its
  /// subscription id, when the client asked for that kind (and that URI); else does nothing.
  void notifyListener(const std::string& method, const mcp::Json& params);
  /// How long a person gets to answer an approval.
  [[nodiscard]] std::chrono::milliseconds approvalTimeout() const {
    return gateway_->options.approvalTimeout;
  }

  // 2026-07-28 input rounds (gateway_input_rounds.cpp). A stateless client cannot be sent a
  // request, so what kaja or a server asks it during a request (an approval, elicitation,
  // sampling) is answered with an input_required result. The session that runs the request
  // waits in Gateway::Impl::suspended under the requestState it gave; the client's retry
  // arrives in a new session, which hands this one its reply stream and the answers.
  /// Gives this session's waiting request the retry's stream, id and answers.
  void resumeRound(std::shared_ptr<server::Outbox> outbox, const mcp::Json& retryId,
                   const mcp::Json& inputResponses, mcp::Json clientCapabilities);
  /// Ends a request that waits for its retry (the gateway is stopping).
  void abandonRound();
  /// Called by the session that carried a retry when its stream ends.
  void retryStreamEnded(const std::shared_ptr<server::Outbox>& outbox);
  /// The method and name (tool, prompt or URI) a retry must repeat.
  [[nodiscard]] const std::string& roundMethod() const { return roundMethod_; }
  [[nodiscard]] const std::string& roundName() const { return roundName_; }

 private:
  struct InFlight {
    std::string ability;
    HostCall call;
    bool cancelled = false;
  };
  /// What a subscriptions/listen request asked for and kaja honours.
  struct Listening {
    mcp::Json id;       ///< the listen request's id: its subscription id
    mcp::Json honored;  ///< the filter kaja acknowledged
    std::set<std::string> uris;
  };
  /// A request kaja sent the client, and who waits for its answer.
  struct Asked {
    std::function<void(Result<mcp::Json>)> done;
    std::chrono::milliseconds timeout{0};
    mcp::Json relatedTo;  ///< the client's request it was sent for, whose stream it took
  };
  /// Something a stateless client is asked in an input_required result, and who waits.
  struct InputAsk {
    std::string key;
    std::string method;
    mcp::Json params;
    std::function<void(Result<mcp::Json>)> done;
  };

  void onRequest(const mcp::Request& request);
  void onNotification(const mcp::Notification& notification);
  void onResponse(const mcp::Response& response);
  /// The client did not answer request `id` in time: it is told to stop, and who waits hears.
  void onAskExpired(std::int64_t id, const Asked& asked);
  void respond(const mcp::Json& id, Result<mcp::Json> result);
  /// Adds what a result carries at the client's protocol version (resultType, cache hints,
  /// serverInfo at 2026-07-28), or removes what it must not.
  void finishBody(mcp::Json& body) const;
  /// Answers an error and returns true when request `id` (as `key`) is still running.
  bool refusedAsRunning(const mcp::Json& id, const std::string& key);
  void respondError(const mcp::Json& id, std::int64_t code, const std::string& message,
                    mcp::Json data = nullptr);
  void adoptMeta(const mcp::Json& params);
  [[nodiscard]] mcp::Json capabilities() const;
  [[nodiscard]] mcp::Json serverInfo() const;
  void initialize(const mcp::Request& request);
  void discover(const mcp::Request& request);
  void listTools(const mcp::Request& request);
  void callTool(const mcp::Request& request);
  void proxyCall(const mcp::Json& id, const mcp::Json& arguments, const mcp::Json& progressToken);
  void runCall(const mcp::Json& id, const std::string& name, mcp::Json arguments,
               const mcp::Json& progressToken);
  void forward(const mcp::Request& request);
  void listen(const mcp::Request& request);
  /// Returns the ability that serves resource `uri`, or "" when none is known.
  [[nodiscard]] std::string resourceAbility(const std::string& uri) const;
  void listEverywhere(const mcp::Request& request, const std::string& capability,
                      const std::string& key);
  void callFinished(const mcp::Json& id, const policy::CallOutcome& outcome);
  /// Sends `message` (a reply or a notification) to the client, on the stream of request
  /// `relatedTo`: after a retry, that of the retry.
  void deliver(mcp::Json message, const mcp::Json& relatedTo);
  /// Removes the entry of `gateway_->running` for this session's request `id` on `ability`.
  void forgetRunning(const std::string& ability, const mcp::Json& id);
  // Input rounds (gateway_input_rounds.cpp).
  /// Remembers the first request of a stateless session: the one its input rounds belong to.
  void noteRoundRequest(const mcp::Request& request);
  /// Handles a retry (a request with requestState); returns false when it is none.
  bool takeRetry(const mcp::Request& request);
  /// Returns why `inputResponses` cannot answer this session's open questions, or "".
  [[nodiscard]] std::string answersProblem(const mcp::Json& inputResponses) const;
  void askInput(const std::string& method, mcp::Json params,
                std::function<void(Result<mcp::Json>)> done, const std::string& inputKey);
  void sendInputRound();
  void expireRound();
  /// Answers every open ask with `why` (the client went away, the round expired).
  void failAsks(const std::string& why, ErrorCode code);
  /// Ends kaja's subscription to each resource this client followed that no other client
  /// follows, once the client is gone.
  void releaseSubscriptions();

  std::shared_ptr<Gateway::Impl> gateway_;
  std::shared_ptr<server::Outbox> outbox_;
  ElicitingApprover approver_;
  policy::ApprovalSession approvals_;
  bool started_ = false;
  bool initialized_ = false;  // an initialize was answered
  bool ended_ = false;
  bool stateless_ = false;
  std::string version_;
  mcp::Json clientCapabilities_ = mcp::Json::object();
  /// The level a 2025 client chose with logging/setLevel; "" until it chooses one.
  std::string logLevel_;
  /// The log level the request being handled asks of the server: a 2026-07-28 client names
  /// it in each request, a 2025 client once for its session; "" asks for no log messages.
  std::string requestLogLevel_;
  std::map<std::string, InFlight> inFlight_;  ///< by the client's request id, as JSON text
  mcp::RequestLedger<Asked> asked_;           ///< requests kaja sent the client
  /// Resource URIs the client subscribed to, with the ability that serves each.
  std::map<std::string, std::string> subscribed_;
  /// The subscribes and unsubscribes of one resource in flight: the latest alone says
  /// whether the client follows it once they end (an earlier answer may come later).
  struct SubscriptionChange {
    std::uint64_t latest = 0;
    int inFlight = 0;
  };
  std::map<std::string, SubscriptionChange> subscriptionChanges_;
  std::uint64_t lastChange_ = 0;
  /// Records the end of change `change` to `uri`; returns true when it was the latest.
  bool endChange(const std::string& uri, std::uint64_t change);
  std::optional<Listening> listening_;  ///< a 2026-07-28 client's open listen stream

  // Input rounds of a stateless session's one request.
  mcp::Json roundRequestId_;  ///< that request's id (null: none yet, or not stateless)
  mcp::Json replyId_;         ///< where its answer goes: the id of the latest retry
  std::string roundMethod_;
  std::string roundName_;
  std::size_t roundFingerprint_ = 0;  ///< of the request's params, which a retry repeats
  std::size_t roundBytes_ = 0;        ///< their size, counted while the request waits
  bool answered_ = false;             ///< the request has its final answer
  bool suspended_ = false;            ///< answered input_required; waits for the retry
  bool roundPosted_ = false;
  std::string roundToken_;
  std::unique_ptr<boost::asio::steady_timer> roundTimer_;
  std::vector<InputAsk> inputAsks_;
  int nextAskKey_ = 1;
  std::optional<mcp::Json> heldReply_;  ///< the final answer, when it came while suspended
  /// The session whose retry this one carries: held, since no front holds it any more.
  std::shared_ptr<GatewaySession> carrying_;
};

/// Returns a progress callback that passes a server's progress on to `session`'s client as
/// notifications/progress for `progressToken`, on the stream of request `requestId`; it
/// sends nothing when the client gave no token.
std::function<void(const mcp::Progress&)> progressRelay(std::weak_ptr<GatewaySession> session,
                                                        mcp::Json requestId,
                                                        mcp::Json progressToken);

}  // namespace kaja::core::gateway
