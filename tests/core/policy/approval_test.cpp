#include "core/policy/approval.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "core/policy/terminal_approver.h"
#include "tests/core/policy/policy_test_support.h"

namespace kaja::core::policy {
namespace {

using kaja::testing::makeTool;
using ::testing::HasSubstr;
using ::testing::Not;
using Kind = ApprovalOutcome::Kind;

// The Approver seam's fake: answers from a script and records what it was asked.
class ScriptedApprover final : public Approver {
 public:
  explicit ScriptedApprover(std::vector<ApprovalAnswer> answers, bool person = true)
      : answers_(std::move(answers)), person_(person) {}
  ApprovalReply ask(const ApprovalRequest& request) override {
    asked.push_back(request);
    ApprovalAnswer answer = answers_.empty() ? ApprovalAnswer::kNo : answers_.front();
    if (!answers_.empty()) answers_.erase(answers_.begin());
    return {answer, "was declined by the script"};
  }
  [[nodiscard]] bool isPerson() const override { return person_; }
  std::vector<ApprovalRequest> asked;

 private:
  std::vector<ApprovalAnswer> answers_;
  bool person_;
};

Ability devtools() {
  Ability ability;
  ability.name = "chrome-devtools";
  ability.readOnly = {{"list_pages", {}}, {"take_screenshot", {"filePath"}}};
  return ability;
}

ApprovalRequest request(const std::string& tool, bool write = true) {
  return {"chrome-devtools", tool, mcp::Json{{"url", "https://example.com"}}, write, false};
}

TEST(ApprovalTest, IsWriteFollowsHintsAndReadOnlyRules) {
  Ability ability = devtools();
  EXPECT_FALSE(isWrite(makeTool("anything", "", true), ability, mcp::Json::object()));
  EXPECT_TRUE(isWrite(makeTool("click"), ability, mcp::Json::object()));
  EXPECT_FALSE(isWrite(makeTool("list_pages"), ability, {{"x", 1}}));
  auto screenshot = makeTool("take_screenshot");
  EXPECT_FALSE(isWrite(screenshot, ability, mcp::Json::object()));
  EXPECT_FALSE(isWrite(screenshot, ability, {{"filePath", nullptr}}));  // null is absent
  EXPECT_TRUE(isWrite(screenshot, ability, {{"filePath", "/tmp/a.png"}}));
  EXPECT_TRUE(isWrite(screenshot, ability, {{"filePath", ""}}));  // present, even if empty
  EXPECT_TRUE(isWritingTool(makeTool("click"), ability));
  EXPECT_FALSE(isWritingTool(screenshot, ability));
}

TEST(ApprovalTest, ModesDecideWhatIsAsked) {
  ApprovalPolicy never{ApprovalMode::kNever, {}};
  ApprovalPolicy writes{ApprovalMode::kWrites, {}};
  ApprovalPolicy always{ApprovalMode::kAlways, {}};
  EXPECT_EQ(approvalNeed(never, "click", true), ApprovalNeed::kNone);
  EXPECT_EQ(approvalNeed(writes, "click", true), ApprovalNeed::kAsk);
  EXPECT_EQ(approvalNeed(writes, "list_pages", false), ApprovalNeed::kNone);
  EXPECT_EQ(approvalNeed(always, "list_pages", false), ApprovalNeed::kAsk);
  ApprovalPolicy confirm{ApprovalMode::kNever, {"evaluate_script"}};
  EXPECT_EQ(approvalNeed(confirm, "evaluate_script", false), ApprovalNeed::kPerson);
  EXPECT_EQ(approvalNeed(confirm, "click", true), ApprovalNeed::kNone);
}

TEST(ApprovalTest, SessionRemembersAlwaysForThatToolOnly) {
  ScriptedApprover approver({ApprovalAnswer::kYesForSession, ApprovalAnswer::kNo});
  ApprovalSession session(approver);
  ApprovalPolicy writes{ApprovalMode::kWrites, {}};
  EXPECT_EQ(session.decide(writes, request("click")).kind, Kind::kApproved);
  EXPECT_TRUE(session.remembers("chrome-devtools", "click"));
  EXPECT_EQ(session.decide(writes, request("click")).kind, Kind::kRemembered);
  EXPECT_EQ(approver.asked.size(), 1u);
  auto other = session.decide(writes, request("fill"));
  EXPECT_EQ(other.kind, Kind::kDeclined);
  ASSERT_TRUE(other.refusal);
  EXPECT_EQ(other.refusal->rule, rule::kApproval);
  EXPECT_EQ(other.refusal->message,
            "The call to fill on chrome-devtools was declined by the script.");
  // A read under `writes` is not asked at all.
  EXPECT_EQ(session.decide(writes, request("list_pages", false)).kind, Kind::kNotNeeded);
  EXPECT_EQ(approver.asked.size(), 2u);
}

TEST(ApprovalTest, ConfirmListNeedsAPersonEveryTime) {
  ApprovalPolicy policy{ApprovalMode::kNever, {"evaluate_script"}};
  ScriptedApprover person({ApprovalAnswer::kYesForSession, ApprovalAnswer::kNo});
  ApprovalSession session(person);
  EXPECT_EQ(session.decide(policy, request("evaluate_script")).kind, Kind::kApproved);
  EXPECT_FALSE(session.remembers("chrome-devtools", "evaluate_script"));
  EXPECT_TRUE(person.asked.at(0).confirmListed);
  auto second = session.decide(policy, request("evaluate_script"));
  EXPECT_EQ(second.kind, Kind::kDeclined);
  EXPECT_EQ(second.refusal->rule, rule::kConfirmList);

  AutoApprover yes;
  ApprovalSession automatic(yes);
  auto refused = automatic.decide(policy, request("evaluate_script"));
  EXPECT_EQ(refused.kind, Kind::kDeclined);
  EXPECT_THAT(refused.refusal->message, HasSubstr("needs a person"));
  EXPECT_EQ(automatic.decide(ApprovalPolicy{ApprovalMode::kAlways, {}}, request("click")).kind,
            Kind::kApproved);
}

TEST(ApprovalTest, NonInteractiveDefaultDeclinesWithNeedsApproval) {
  DecliningApprover nobody;
  ApprovalSession session(nobody);
  auto outcome = session.decide(ApprovalPolicy{ApprovalMode::kWrites, {}}, request("click"));
  EXPECT_FALSE(outcome.allowed());
  EXPECT_THAT(outcome.refusal->message, HasSubstr("needs approval"));
  EXPECT_TRUE(session.decide(ApprovalPolicy{ApprovalMode::kNever, {}}, request("click")).allowed());
}

TEST(TerminalApproverTest, ShowsServerToolAndExactArguments) {
  std::istringstream in("y\n");
  std::ostringstream out;
  TerminalApprover approver(in, out);
  ApprovalRequest asked{"filesystem", "write_file",
                        mcp::Json{{"path", "/home/u/notes/a.md"}, {"content", "line \"1\"\n"}},
                        true, false};
  EXPECT_EQ(approver.ask(asked).answer, ApprovalAnswer::kYes);
  EXPECT_THAT(out.str(), HasSubstr("filesystem wants to run write_file"));
  EXPECT_THAT(out.str(), HasSubstr("\"path\": \"/home/u/notes/a.md\""));
  EXPECT_THAT(out.str(), HasSubstr("\"content\": \"line \\\"1\\\"\\n\""));
  EXPECT_THAT(out.str(), HasSubstr("[a]lways write_file"));
}

TEST(TerminalApproverTest, ReadsNoAlwaysEndOfInputAndRetries) {
  auto answer = [](const std::string& input, bool confirmListed = false) {
    std::istringstream in(input);
    std::ostringstream out;
    TerminalApprover approver(in, out);
    return approver.ask({"s", "t", mcp::Json::object(), true, confirmListed});
  };
  EXPECT_EQ(answer("n\n").answer, ApprovalAnswer::kNo);
  EXPECT_EQ(answer("\n").answer, ApprovalAnswer::kNo);
  EXPECT_EQ(answer(" A \n").answer, ApprovalAnswer::kYesForSession);
  EXPECT_EQ(answer("maybe\nyes\n").answer, ApprovalAnswer::kYes);
  auto eof = answer("");
  EXPECT_EQ(eof.answer, ApprovalAnswer::kNo);
  EXPECT_THAT(eof.reason, HasSubstr("not answered"));
  EXPECT_EQ(answer("x\nx\nx\ny\n").answer, ApprovalAnswer::kNo);  // three strikes
  // "a" is not offered for a confirm-listed tool, so it does not count as yes.
  EXPECT_EQ(answer("a\nn\n", true).answer, ApprovalAnswer::kNo);
}

TEST(TerminalApproverTest, EscapesControlAndInvisibleCharacters) {
  std::istringstream in("n\n");
  std::ostringstream out;
  TerminalApprover approver(in, out);
  approver.ask({"evil\x1b[2Jserver", "to\u202Eol", mcp::Json{{"p", "a\u200Bb\x1b"}}, true, false});
  EXPECT_THAT(out.str(), Not(HasSubstr("\x1b")));
  EXPECT_THAT(out.str(), Not(HasSubstr("\u202E")));
  EXPECT_THAT(out.str(), HasSubstr("evil?[2Jserver wants to run to?ol"));
  EXPECT_THAT(out.str(), HasSubstr("a\\u200Bb\\u001b"));
}

TEST(TerminalApproverTest, BulkCannotBuryWhereTheCallWrites) {
  std::istringstream in("n\n");
  std::ostringstream out;
  TerminalApprover approver(in, out);
  mcp::Json arguments = {{"path", "/home/u/ro/secret.txt"},
                         {"content", std::string(100000, 'x')},
                         {"zz_path_shown", "/home/u/rw/harmless.txt"}};
  for (int i = 0; i < 300; ++i) arguments["q" + std::to_string(1000 + i)] = i;
  mcp::Json deep = mcp::Json::array();
  for (int i = 0; i < 1000; ++i) deep = mcp::Json::array({deep});
  arguments["deep"] = deep;
  ApprovalRequest asked{"filesystem", "write_file", arguments, true, false};
  asked.writesTo = {"/home/u/ro/secret.txt"};
  approver.ask(asked);
  std::string shown = out.str();
  EXPECT_THAT(shown, HasSubstr("with 304 arguments:"));
  EXPECT_THAT(shown, HasSubstr("100000 bytes in all"));
  EXPECT_THAT(shown, HasSubstr("more arguments"));
  EXPECT_THAT(shown, HasSubstr("nested deeper than 8 levels"));
  EXPECT_LT(shown.size(), 5000u);
  // Where it writes is said last, right above the question.
  auto writes = shown.rfind("It would write to:\n  /home/u/ro/secret.txt\n");
  ASSERT_NE(writes, std::string::npos) << shown;
  EXPECT_EQ(shown.find("Allow?"), shown.find('\n', writes + 20) + 1);
}

TEST(TerminalApproverTest, OpenTtyEitherWorksOrNamesTheCall) {
  auto tty = TerminalApprover::openTty();
  if (!tty) {
    EXPECT_THAT(tty.error().message, HasSubstr("open(/dev/tty)"));
  } else {
    EXPECT_TRUE((*tty)->isPerson());
  }
}

}  // namespace
}  // namespace kaja::core::policy
