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

ApprovalOutcome ApprovalSession::decide(const ApprovalPolicy& policy,
                                        const ApprovalRequest& request) {
  using Kind = ApprovalOutcome::Kind;
  ApprovalNeed need = approvalNeed(policy, request.tool, request.write);
  if (need == ApprovalNeed::kNone) return {Kind::kNotNeeded, std::nullopt};
  if (need == ApprovalNeed::kPerson) {
    if (!approver_.isPerson()) {
      return {Kind::kDeclined,
              Refusal{std::string(rule::kConfirmList),
                      callName(request) +
                          " is on the confirm list and needs a person to approve it; ask the "
                          "user to run it."}};
    }
    ApprovalRequest asked = request;
    asked.confirmListed = true;
    ApprovalReply reply = approver_.ask(asked);
    // "Always" is not offered for a confirm-listed tool; if it comes anyway it counts once.
    if (reply.answer == ApprovalAnswer::kNo) {
      return {Kind::kDeclined, Refusal{std::string(rule::kConfirmList),
                                       callName(request) + " " + reply.reason + "."}};
    }
    return {Kind::kApproved, std::nullopt};
  }
  if (remembers(request.server, request.tool)) return {Kind::kRemembered, std::nullopt};
  ApprovalReply reply = approver_.ask(request);
  switch (reply.answer) {
    case ApprovalAnswer::kYesForSession:
      alwaysAllowed_.emplace(request.server, request.tool);
      return {Kind::kApproved, std::nullopt};
    case ApprovalAnswer::kYes:
      return {Kind::kApproved, std::nullopt};
    case ApprovalAnswer::kNo:
      break;
  }
  return {Kind::kDeclined,
          Refusal{std::string(rule::kApproval), callName(request) + " " + reply.reason + "."}};
}

bool ApprovalSession::remembers(const std::string& server, const std::string& tool) const {
  return alwaysAllowed_.contains({server, tool});
}

}  // namespace kaja::core::policy
