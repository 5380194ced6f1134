#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/manifest/ability.h"
#include "core/mcp/types.h"
#include "core/policy/refusal.h"

namespace kaja::core::policy {

/// Returns the ability's `readOnly` rule for `toolName`, or null when it lists none. The
/// pointer is into `ability` and lives as long as it does.
const ReadOnlyRule* findReadOnlyRule(const Ability& ability, std::string_view toolName);

/// Returns true for a tool that can write at all (K15): the server does not mark it
/// read-only and the manifest's `readOnly` does not list it (with or without `unless`).
bool isWritingTool(const mcp::Tool& tool, const Ability& ability);

/// Returns true when this call is a write (K11, K12): unless the server marks the tool
/// read-only (annotations.readOnlyHint), or `readOnly` lists it and none of its `unless`
/// arguments is present in `arguments` (present = the key exists and is not null).
bool isWrite(const mcp::Tool& tool, const Ability& ability, const mcp::Json& arguments);

/// Who must agree before a call runs.
enum class ApprovalNeed {
  kNone,    ///< run it
  kAsk,     ///< ask the approver (a session "always" answer counts)
  kPerson,  ///< on the confirm list: a person must say yes to this very call (U4)
};

/// The approval settings for one server: the manifest's `approval` and a confirm list.
struct ApprovalPolicy {
  ApprovalMode mode = ApprovalMode::kWrites;
  std::vector<std::string> confirmList;  ///< tool names that never run without a person (U4)
};

/// Returns what a call needs: `never` asks nothing, `writes` asks for writes, `always` asks
/// for every call; a confirm-listed tool needs a person whatever the mode.
ApprovalNeed approvalNeed(const ApprovalPolicy& policy, std::string_view toolName, bool write);

/// What an approver is shown.
struct ApprovalRequest {
  std::string server;
  std::string tool;
  mcp::Json arguments = mcp::Json::object();  ///< exactly what will be sent
  bool write = true;
  bool confirmListed = false;         ///< the "a" answer is not offered and counts only once
  std::vector<std::string> writesTo;  ///< where the folder check found the call would write
};

/// An approver's answer.
enum class ApprovalAnswer { kYes, kNo, kYesForSession };

/// An answer plus, for a no, the end of a sentence that starts "The call to T on S …",
/// e.g. "was declined by the user".
struct ApprovalReply {
  ApprovalAnswer answer = ApprovalAnswer::kNo;
  std::string reason;
};

/// The seam that asks: a terminal prompt, `--yes`, or a non-interactive default.
class Approver {
 public:
  virtual ~Approver() = default;
  /// Returns the answer for one call.
  virtual ApprovalReply ask(const ApprovalRequest& request) = 0;
  /// Returns true when a person answers (only a person may approve confirm-listed tools).
  [[nodiscard]] virtual bool isPerson() const = 0;
};

/// An approver that answers later: an elicitation round trip to the person behind an MCP
/// client. `done` runs exactly once, on the thread that drives the approver.
class AsyncApprover {
 public:
  virtual ~AsyncApprover() = default;
  /// Asks about one call; `done` gets the answer.
  virtual void ask(const ApprovalRequest& request, std::function<void(ApprovalReply)> done) = 0;
  /// Returns true when a person answers (only a person may approve confirm-listed tools).
  [[nodiscard]] virtual bool isPerson() const = 0;
};

/// `--yes`: approves every call except confirm-listed ones, which it cannot (it is no person).
class AutoApprover final : public Approver {
 public:
  ApprovalReply ask(const ApprovalRequest& request) override;
  [[nodiscard]] bool isPerson() const override { return false; }
};

/// The default when nobody can be asked: declines with "needs approval".
class DecliningApprover final : public Approver {
 public:
  ApprovalReply ask(const ApprovalRequest& request) override;
  [[nodiscard]] bool isPerson() const override { return false; }
};

/// The outcome of the approval step.
struct ApprovalOutcome {
  enum class Kind {
    kNotNeeded,   ///< the policy asks nothing for this call
    kRemembered,  ///< approved earlier with "always this tool" in this session
    kApproved,    ///< the approver said yes
    kDeclined,    ///< refused: see `refusal`
  };
  Kind kind = Kind::kDeclined;
  std::optional<Refusal> refusal;

  /// Returns true when the call may go on.
  [[nodiscard]] bool allowed() const { return kind != Kind::kDeclined; }
};

/// The approval step with its session memory of "yes to this tool for the rest of the
/// session" (S3), keyed by server and tool. Holds a reference to `approver`, which must
/// outlive it. Not thread-safe: one session serves one conversation.
class ApprovalSession {
 public:
  explicit ApprovalSession(Approver& approver);
  explicit ApprovalSession(AsyncApprover& approver) : approver_(&approver) {}
  ~ApprovalSession();
  ApprovalSession(const ApprovalSession&) = delete;
  ApprovalSession& operator=(const ApprovalSession&) = delete;

  /// Returns whether the call in `request` may run under `policy`, asking the approver when
  /// the policy says so. A confirm-listed tool is always asked, and declined outright when the
  /// approver is not a person. With an AsyncApprover that does not answer at once, the call
  /// is declined: use decideAsync() there.
  ApprovalOutcome decide(const ApprovalPolicy& policy, const ApprovalRequest& request);

  /// decide(), with the answer passed to `done` once the approver has given it. The session
  /// must outlive `done`.
  void decideAsync(const ApprovalPolicy& policy, const ApprovalRequest& request,
                   std::function<void(ApprovalOutcome)> done);

  /// Returns true when `tool` on `server` was approved for the rest of the session.
  [[nodiscard]] bool remembers(const std::string& server, const std::string& tool) const;

 private:
  std::unique_ptr<AsyncApprover> adapter_;  ///< wraps a synchronous Approver
  AsyncApprover* approver_;
  std::set<std::pair<std::string, std::string>> alwaysAllowed_;
};

}  // namespace kaja::core::policy
