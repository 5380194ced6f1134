#include "core/policy/approval.h"

#include <algorithm>

namespace kaja::core::policy {
namespace {

bool isPresent(const mcp::Json& arguments, const std::string& name) {
  if (!arguments.is_object()) return false;
  auto it = arguments.find(name);
  return it != arguments.end() && !it->is_null();
}

std::string callName(const ApprovalRequest& request) {
  return "The call to " + request.tool + " on " + request.server;
}

}  // namespace

const ReadOnlyRule* findReadOnlyRule(const Ability& ability, std::string_view toolName) {
  for (const auto& rule : ability.readOnly) {
    if (rule.tool == toolName) return &rule;
  }
  return nullptr;
}

bool isWritingTool(const mcp::Tool& tool, const Ability& ability) {
  return !tool.readOnlyHint() && findReadOnlyRule(ability, tool.name) == nullptr;
}

bool isWrite(const mcp::Tool& tool, const Ability& ability, const mcp::Json& arguments) {
  if (tool.readOnlyHint()) return false;
  const ReadOnlyRule* rule = findReadOnlyRule(ability, tool.name);
  if (rule == nullptr) return true;
  return std::any_of(rule->unless.begin(), rule->unless.end(),
                     [&](const std::string& name) { return isPresent(arguments, name); });
}

ApprovalNeed approvalNeed(const ApprovalPolicy& policy, std::string_view toolName, bool write) {
  if (std::find(policy.confirmList.begin(), policy.confirmList.end(), toolName) !=
      policy.confirmList.end()) {
    return ApprovalNeed::kPerson;
  }
  switch (policy.mode) {
    case ApprovalMode::kNever:
      return ApprovalNeed::kNone;
    case ApprovalMode::kWrites:
      return write ? ApprovalNeed::kAsk : ApprovalNeed::kNone;
    case ApprovalMode::kAlways:
      return ApprovalNeed::kAsk;
  }
  return ApprovalNeed::kAsk;
}

ApprovalReply AutoApprover::ask(const ApprovalRequest& request) {
  if (request.confirmListed) {
    return {ApprovalAnswer::kNo, "is on the confirm list, so --yes cannot approve it"};
  }
  return {ApprovalAnswer::kYes, {}};
}

ApprovalReply DecliningApprover::ask(const ApprovalRequest& /*request*/) {
  return {ApprovalAnswer::kNo,
          "needs approval and there is no one to ask here; run it from a terminal or pass --yes"};
}

namespace {

// Lets a synchronous Approver stand where an AsyncApprover is expected.
class SyncAdapter final : public AsyncApprover {
 public:
  explicit SyncAdapter(Approver& approver) : approver_(approver) {}
  void ask(const ApprovalRequest& request, std::function<void(ApprovalReply)> done) override {
    done(approver_.ask(request));
  }
  [[nodiscard]] bool isPerson() const override { return approver_.isPerson(); }

 private:
  Approver& approver_;
};

}  // namespace

ApprovalSession::ApprovalSession(Approver& approver)
    : adapter_(std::make_unique<SyncAdapter>(approver)), approver_(adapter_.get()) {}

ApprovalSession::~ApprovalSession() = default;

ApprovalOutcome ApprovalSession::decide(const ApprovalPolicy& policy,
                                        const ApprovalRequest& request) {
  std::optional<ApprovalOutcome> answer;
  decideAsync(policy, request, [&answer](ApprovalOutcome outcome) { answer = std::move(outcome); });
  if (answer) return std::move(*answer);
  return {ApprovalOutcome::Kind::kDeclined,
          Refusal{std::string(rule::kApproval),
                  callName(request) + " needs an answer that kaja cannot wait for here."}};
}

void ApprovalSession::decideAsync(const ApprovalPolicy& policy, const ApprovalRequest& request,
                                  std::function<void(ApprovalOutcome)> done) {
  using Kind = ApprovalOutcome::Kind;
  ApprovalNeed need = approvalNeed(policy, request.tool, request.write);
  if (need == ApprovalNeed::kNone) {
    done({Kind::kNotNeeded, std::nullopt});
    return;
  }
  if (need == ApprovalNeed::kPerson) {
    if (!approver_->isPerson()) {
      done({Kind::kDeclined,
            Refusal{std::string(rule::kConfirmList),
                    callName(request) +
                        " is on the confirm list and needs a person to approve it; ask the "
                        "user to run it."}});
      return;
    }
    ApprovalRequest asked = request;
    asked.confirmListed = true;
    approver_->ask(
        asked, [name = callName(request), done = std::move(done)](const ApprovalReply& reply) {
          // "Always" is not offered for a confirm-listed tool; if it comes anyway it counts once.
          if (reply.answer == ApprovalAnswer::kNo) {
            done({Kind::kDeclined,
                  Refusal{std::string(rule::kConfirmList), name + " " + reply.reason + "."}});
            return;
          }
          done({Kind::kApproved, std::nullopt});
        });
    return;
  }
  if (remembers(request.server, request.tool)) {
    done({Kind::kRemembered, std::nullopt});
    return;
  }
  approver_->ask(request, [this, server = request.server, tool = request.tool,
                           name = callName(request),
                           done = std::move(done)](const ApprovalReply& reply) {
    switch (reply.answer) {
      case ApprovalAnswer::kYesForSession:
        alwaysAllowed_.emplace(server, tool);
        done({Kind::kApproved, std::nullopt});
        return;
      case ApprovalAnswer::kYes:
        done({Kind::kApproved, std::nullopt});
        return;
      case ApprovalAnswer::kNo:
        break;
    }
    done({Kind::kDeclined, Refusal{std::string(rule::kApproval), name + " " + reply.reason + "."}});
  });
}

bool ApprovalSession::remembers(const std::string& server, const std::string& tool) const {
  return alwaysAllowed_.contains({server, tool});
}

}  // namespace kaja::core::policy
