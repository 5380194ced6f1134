// ToolCatalog with a fake call function and fake approvers: naming, routing, kaja's own
// tools, and that no call reaches the server before every rule and the person said yes.
#include "core/gateway/tool_catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/policy/approval.h"
#include "core/policy/audit_log.h"
#include "core/policy/backup_tools.h"
#include "tests/core/policy/policy_test_support.h"
#include "tests/support/temp_dir.h"

namespace kaja::core::gateway {
namespace {

using kaja::testing::makeTool;
using mcp::Json;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// The call function a catalog sends with: records each call and answers a canned result or
// an error, at once or when answer() is called.
class FakeSend {
 public:
  struct Sent {
    std::string tool;
    Json arguments;
  };

  policy::AsyncCallFunction function() {
    return [this](const std::string& tool, const Json& arguments,
                  std::function<void(Result<mcp::ToolResult>)> done) {
      sent.push_back({tool, arguments});
      if (deferred) {
        pending.push_back(std::move(done));
        return;
      }
      done(reply());
    };
  }
  Result<mcp::ToolResult> reply() const {
    if (error) return std::unexpected(*error);
    return result;
  }
  void answerAll() {
    auto waiting = std::move(pending);
    pending.clear();
    for (auto& done : waiting) done(reply());
  }

  std::vector<Sent> sent;
  mcp::ToolResult result{Json{{"content", Json::array({{{"type", "text"}, {"text", "done"}}})}}};
  std::optional<Error> error;
  bool deferred = false;
  std::vector<std::function<void(Result<mcp::ToolResult>)>> pending;
};

// A synchronous approver with a fixed answer that counts what it was asked.
class FixedApprover final : public policy::Approver {
 public:
  explicit FixedApprover(policy::ApprovalAnswer answer) : answer_(answer) {}
  policy::ApprovalReply ask(const policy::ApprovalRequest& request) override {
    asked.push_back(request);
    return {answer_, answer_ == policy::ApprovalAnswer::kNo ? "was declined by the user" : ""};
  }
  [[nodiscard]] bool isPerson() const override { return true; }
  std::vector<policy::ApprovalRequest> asked;

 private:
  policy::ApprovalAnswer answer_;
};

// An approver that answers later, as an elicitation round trip does: it keeps the callback.
class LaterApprover final : public policy::AsyncApprover {
 public:
  void ask(const policy::ApprovalRequest& request,
           std::function<void(policy::ApprovalReply)> done) override {
    asked.push_back(request);
    waiting.push_back(std::move(done));
  }
  [[nodiscard]] bool isPerson() const override { return true; }
  void answer(policy::ApprovalAnswer answer) {
    ASSERT_FALSE(waiting.empty());
    auto done = std::move(waiting.front());
    waiting.erase(waiting.begin());
    done({answer, answer == policy::ApprovalAnswer::kNo ? "was declined by the user" : ""});
  }
  std::vector<policy::ApprovalRequest> asked;
  std::vector<std::function<void(policy::ApprovalReply)>> waiting;
};

mcp::Tool readTool(const std::string& name) { return makeTool(name, "Reads a file.", true); }
mcp::Tool writeTool(const std::string& name) { return makeTool(name, "Writes a file.", false); }

class ToolCatalogTest : public ::testing::Test {
 protected:
  ToolCatalogTest() {
    home_ = fs::canonical(dir_.path()).string() + "/home";
    dir_.write("home/rw/keep.txt", "rw");
    dir_.write("home/ro/secret.txt", "read only");
    dir_.write("home/bk/notes.txt", "version 1");
    backups_ = fs::canonical(dir_.path()).string() + "/data/backups";
  }

  // An ability with path arguments, so the folder check can judge its calls.
  policy::CallScope scope(const std::string& ability, std::vector<PersonaRoot> roots) const {
    policy::CallScope made;
    made.persona = "work";
    made.ability.name = ability;
    made.ability.pathArgs = {"path"};
    made.entry.ability = ability;
    made.entry.roots = std::move(roots);
    made.home = home_;
    return made;
  }
  std::vector<PersonaRoot> workRoots() const {
    return {{"~/rw", false, false}, {"~/ro", true, false}, {"~/bk", false, true}};
  }

  ToolCatalog catalog(std::vector<policy::CallScope> scopes,
                      NameStyle names = NameStyle::kPrefixed) const {
    CatalogSettings settings;
    settings.persona = "work";
    settings.home = home_;
    settings.pipeline.backupsDir = backups_;
    settings.names = names;
    return ToolCatalog(std::move(settings), std::move(scopes));
  }

  // A catalog of one filesystem-like ability "fs" with the work folders, tools listed.
  ToolCatalog fsCatalog(NameStyle names = NameStyle::kPrefixed) const {
    ToolCatalog made = catalog({scope("fs", workRoots())}, names);
    made.setTools("fs", {readTool("read_file"), writeTool("write_file")});
    return made;
  }

  policy::CallOutcome callNow(ToolCatalog& tools, const std::string& ability,
                              const std::string& tool, const Json& arguments,
                              policy::ApprovalSession& approvals,
                              policy::AuditLog* audit = nullptr) {
    std::optional<policy::CallOutcome> outcome;
    tools.call(ability, tool, arguments, approvals, audit, send_.function(),
               [&outcome](policy::CallOutcome done) { outcome = std::move(done); });
    EXPECT_TRUE(outcome.has_value()) << "the call did not finish at once";
    return outcome.value_or(policy::CallOutcome{});
  }

  Json writeArgs(const std::string& relative, const std::string& content) const {
    return {{"path", home_ + "/" + relative}, {"content", content}};
  }

  kaja::testing::TempDir dir_;
  std::string home_;
  std::string backups_;
  FakeSend send_;
};

std::vector<std::string> names(const std::vector<CatalogTool>& tools) {
  std::vector<std::string> all;
  for (const auto& tool : tools) all.push_back(tool.name);
  return all;
}

TEST(ExposedNameTest, EachStyleJoinsAsItSays) {
  EXPECT_EQ(exposedName(NameStyle::kPrefixed, "fs", "read_file"), "fs__read_file");
  EXPECT_EQ(exposedName(NameStyle::kCli, "fs", "read_file"), "mcp__fs__read_file");
  EXPECT_EQ(exposedName(NameStyle::kBare, "fs", "read_file"), "read_file");
  EXPECT_EQ(exposedName(NameStyle::kPrefixed, "my-ability.v2", "a.b-c"), "my-ability.v2__a.b-c");
}

TEST(ExposedNameTest, LongNamesAreShortenedStablyAndStayDistinct) {
  const std::string ability(30, 'a');
  const std::string exact = std::string(kMaxToolNameLength - ability.size() - 2, 't');
  EXPECT_EQ(exposedName(NameStyle::kPrefixed, ability, exact), ability + "__" + exact);

  const std::string common(70, 'x');
  const std::string first = exposedName(NameStyle::kPrefixed, ability, common + "_one");
  const std::string second = exposedName(NameStyle::kPrefixed, ability, common + "_two");
  EXPECT_EQ(first.size(), kMaxToolNameLength);
  EXPECT_EQ(second.size(), kMaxToolNameLength);
  EXPECT_NE(first, second);
  EXPECT_EQ(first, exposedName(NameStyle::kPrefixed, ability, common + "_one"));
  EXPECT_TRUE(first.starts_with(ability + "__xxx"));
  // A suffix of hex digits after one underscore.
  EXPECT_EQ(first[kMaxToolNameLength - 9], '_');
  EXPECT_EQ(first.substr(kMaxToolNameLength - 8).find_first_not_of("0123456789abcdef"),
            std::string::npos);

  // One past the limit is shortened too, and bare names follow the same rule.
  const std::string over(kMaxToolNameLength + 1, 'b');
  EXPECT_EQ(exposedName(NameStyle::kBare, "fs", over).size(), kMaxToolNameLength);
  EXPECT_EQ(exposedName(NameStyle::kBare, "fs", std::string(kMaxToolNameLength, 'b')),
            std::string(kMaxToolNameLength, 'b'));
}

TEST(ExposedNameTest, DisallowedCharactersAreReplacedWithoutMergingNames) {
  const std::string spaced = exposedName(NameStyle::kPrefixed, "fs", "read file");
  const std::string slashed = exposedName(NameStyle::kPrefixed, "fs", "read/file");
  const std::string clean = exposedName(NameStyle::kPrefixed, "fs", "read_file");
  for (const auto& name : {spaced, slashed}) {
    EXPECT_TRUE(name.starts_with("fs__read_file_")) << name;
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789_.-"),
              std::string::npos)
        << name;
  }
  EXPECT_NE(spaced, slashed);
  EXPECT_NE(spaced, clean);
  EXPECT_NE(exposedName(NameStyle::kBare, "fs", "é"), exposedName(NameStyle::kBare, "fs", "è"));
  EXPECT_FALSE(exposedName(NameStyle::kBare, "fs", "").empty());
}

TEST_F(ToolCatalogTest, ListsInPersonaOrderWithKajaToolsLastOnlyWithABackedUpFolder) {
  ToolCatalog tools = catalog({scope("fs", workRoots()), scope("web", {})});
  tools.setTools("web", {readTool("fetch")});
  tools.setTools("fs", {readTool("read_file"), writeTool("write_file")});
  EXPECT_TRUE(tools.offersBackupTools());
  EXPECT_THAT(names(tools.list()), ElementsAre("fs__read_file", "fs__write_file", "web__fetch",
                                               "kaja__list_backups", "kaja__restore_backup"));
  auto listed = tools.list();
  EXPECT_TRUE(listed[0].readOnly);
  EXPECT_FALSE(listed[1].readOnly);
  EXPECT_EQ(listed[3].ability, policy::kKajaAbility);

  ToolCatalog plain = catalog({scope("fs", {{"~/rw", false, false}})});
  plain.setTools("fs", {readTool("read_file")});
  EXPECT_FALSE(plain.offersBackupTools());
  EXPECT_THAT(names(plain.list()), ElementsAre("fs__read_file"));
  FixedApprover approver(policy::ApprovalAnswer::kYes);
  policy::ApprovalSession approvals(approver);
  auto outcome = callNow(plain, policy::kKajaAbility, "list_backups",
                         {{"path", home_ + "/rw/keep.txt"}}, approvals);
  ASSERT_TRUE(outcome.refusal);
  EXPECT_THAT(outcome.refusal->message, HasSubstr("no backed-up folder"));

  // The CLI names and a forgotten ability.
  ToolCatalog cli = fsCatalog(NameStyle::kCli);
  EXPECT_THAT(names(cli.list()), Contains("mcp__kaja__restore_backup"));
  EXPECT_THAT(names(cli.list()), Contains("mcp__fs__write_file"));
  cli.clearTools("fs");
  EXPECT_THAT(names(cli.list()), Not(Contains("mcp__fs__write_file")));
}

TEST_F(ToolCatalogTest, RoutesNamesAndNamesWhatExistsForAnUnknownOne) {
  ToolCatalog tools = fsCatalog();
  auto route = tools.route("fs__write_file");
  ASSERT_TRUE(route) << route.error().describe();
  EXPECT_EQ(route->ability, "fs");
  EXPECT_EQ(route->tool, "write_file");
  auto own = tools.route("kaja__list_backups");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->ability, policy::kKajaAbility);
  EXPECT_EQ(own->tool, "list_backups");

  auto unknown = tools.route("fs__delete_everything");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(unknown.error().message,
              AllOf(HasSubstr("fs__delete_everything"), HasSubstr("fs__read_file"),
                    HasSubstr("fs__write_file"), HasSubstr("kaja__list_backups")));
  // The server's own name is not a route under prefixed names.
  EXPECT_FALSE(tools.route("write_file"));

  // A long list is cut, and a huge name is clipped in the message.
  ToolCatalog many = catalog({scope("big", {})});
  std::vector<mcp::Tool> listed;
  for (int i = 0; i < 30; ++i) listed.push_back(readTool("tool" + std::to_string(i)));
  many.setTools("big", listed);
  auto missing = many.route(std::string(100000, 'z'));
  ASSERT_FALSE(missing);
  EXPECT_LT(missing.error().message.size(), 2000u);
  EXPECT_THAT(missing.error().message, HasSubstr("18 more"));

  ToolCatalog empty = catalog({scope("big", {})});
  EXPECT_THAT(empty.route("x").error().message, HasSubstr("no tools at all"));
}

TEST_F(ToolCatalogTest, ShortenedNamesRouteToTheServersOwnName) {
  ToolCatalog tools = catalog({scope("fs", {})});
  const std::string common(80, 'r');
  tools.setTools("fs", {readTool(common + "1"), readTool(common + "2"), readTool("a tool")});
  auto listed = tools.list();
  ASSERT_EQ(listed.size(), 3u);
  std::set<std::string> distinct;
  for (const auto& tool : listed) {
    distinct.insert(tool.name);
    EXPECT_LE(tool.name.size(), kMaxToolNameLength);
    auto route = tools.route(tool.name);
    ASSERT_TRUE(route) << tool.name;
    EXPECT_EQ(route->tool, tool.tool.name);
  }
  EXPECT_EQ(distinct.size(), 3u);
}

TEST_F(ToolCatalogTest, AnAbilityNamedWithADoubleUnderscoreCannotTakeAnothersName) {
  // "a__b" + "c" and "a" + "b__c" would both be a__b__c. Neither gets that name: the tool
  // "b__c" of a hostile server must not take it from the ability "a__b" (an outside review
  // showed the hostile tool holding the plain name while the genuine one carried a hash).
  ToolCatalog tools = catalog({scope("a__b", {}), scope("a", {})});
  tools.setTools("a__b", {readTool("c")});
  tools.setTools("a", {readTool("b__c")});
  EXPECT_TRUE(tools.checkNames()) << tools.checkNames().error().message;
  auto listed = names(tools.list());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_NE(listed[0], listed[1]);
  for (const auto& name : listed) {
    EXPECT_NE(name, "a__b__c");
    EXPECT_TRUE(name.starts_with("a__b__c_")) << name;
  }
  std::map<std::string, std::string> nameOf;  // ability -> its tool's name
  for (const auto& name : listed) nameOf[tools.route(name)->ability] = name;
  EXPECT_EQ(nameOf["a__b"], exposedName(NameStyle::kPrefixed, "a__b", "c"));
  EXPECT_EQ(nameOf["a"], exposedName(NameStyle::kPrefixed, "a", "b__c"));

  // Two tools of one ability with the same listed name are no collision, under any style.
  ToolCatalog twice = catalog({scope("fs", {})});
  twice.setTools("fs", {readTool("read"), readTool("read")});
  EXPECT_TRUE(twice.checkNames());
}

TEST_F(ToolCatalogTest, BareNamesThatCollideNameBothAbilities) {
  ToolCatalog tools = catalog({scope("alpha", {}), scope("beta", {})}, NameStyle::kBare);
  tools.setTools("alpha", {readTool("search"), readTool("only_alpha")});
  tools.setTools("beta", {readTool("fetch")});
  EXPECT_TRUE(tools.checkNames());
  EXPECT_THAT(names(tools.list()), ElementsAre("search", "only_alpha", "fetch"));
  ASSERT_TRUE(tools.route("only_alpha"));
  EXPECT_EQ(tools.route("only_alpha")->ability, "alpha");

  tools.setTools("beta", {readTool("fetch"), readTool("search")});
  auto checked = tools.checkNames();
  ASSERT_FALSE(checked);
  EXPECT_THAT(checked.error().message,
              AllOf(HasSubstr("alpha"), HasSubstr("beta"), HasSubstr("\"search\"")));
  // Found by an outside review: once a reload brought the two together, the running gateway
  // listed "search" twice. A name two abilities share is now listed for neither, and a call
  // to it names both.
  EXPECT_THAT(names(tools.list()), ElementsAre("only_alpha", "fetch"));
  auto routed = tools.route("search");
  ASSERT_FALSE(routed);
  EXPECT_THAT(routed.error().message, AllOf(HasSubstr("alpha"), HasSubstr("beta")));

  // Under prefixed names the same two never collide.
  ToolCatalog prefixed = catalog({scope("alpha", {}), scope("beta", {})});
  prefixed.setTools("alpha", {readTool("search")});
  prefixed.setTools("beta", {readTool("search")});
  EXPECT_TRUE(prefixed.checkNames());

  // kaja's own tools collide with a server's too.
  ToolCatalog own = catalog({scope("fs", workRoots())}, NameStyle::kBare);
  own.setTools("fs", {readTool("list_backups")});
  auto clash = own.checkNames();
  ASSERT_FALSE(clash);
  EXPECT_THAT(clash.error().message, AllOf(HasSubstr("fs"), HasSubstr("kaja")));
}

TEST_F(ToolCatalogTest, AReadRunsWithoutAskingAndIsAudited) {
  auto audit = policy::AuditLog::open(dir_.path() + "/data");
  ASSERT_TRUE(audit) << audit.error().describe();
  ToolCatalog tools = fsCatalog();
  FixedApprover approver(policy::ApprovalAnswer::kNo);
  policy::ApprovalSession approvals(approver);
  auto outcome =
      callNow(tools, "fs", "read_file", {{"path", home_ + "/ro/secret.txt"}}, approvals, &*audit);
  EXPECT_EQ(outcome.decision, policy::AuditDecision::kAllowed);
  ASSERT_TRUE(outcome.result);
  EXPECT_EQ(outcome.result->text(), "done");
  EXPECT_TRUE(approver.asked.empty());
  ASSERT_EQ(send_.sent.size(), 1u);
  EXPECT_EQ(send_.sent[0].tool, "read_file");
  EXPECT_EQ(send_.sent[0].arguments["path"], home_ + "/ro/secret.txt");

  // A server error is a failed call, audited as one.
  send_.error = Error{ErrorCode::kConnect, "the server went away", "fs", {}};
  auto failed = callNow(tools, "fs", "read_file", {{"path", "x"}}, approvals, &*audit);
  EXPECT_EQ(failed.decision, policy::AuditDecision::kFailed);
  ASSERT_TRUE(failed.error);
  EXPECT_EQ(failed.error->message, "the server went away");

  std::string rows = kaja::testing::readFile(audit->path());
  EXPECT_THAT(rows, HasSubstr("\"decision\":\"allowed\""));
  EXPECT_THAT(rows, HasSubstr("\"decision\":\"failed\""));
  EXPECT_THAT(rows, HasSubstr("\"tool\":\"read_file\""));
  EXPECT_THAT(rows, Not(HasSubstr("secret.txt")));
}

TEST_F(ToolCatalogTest, AWriteIntoAReadOnlyFolderNeverReachesTheServerNorTheApprover) {
  auto audit = policy::AuditLog::open(dir_.path() + "/data");
  ASSERT_TRUE(audit);
  ToolCatalog tools = fsCatalog();
  FixedApprover approver(policy::ApprovalAnswer::kYes);
  policy::ApprovalSession approvals(approver);
  auto outcome =
      callNow(tools, "fs", "write_file", writeArgs("ro/secret.txt", "x"), approvals, &*audit);
  EXPECT_EQ(outcome.decision, policy::AuditDecision::kRefused);
  ASSERT_TRUE(outcome.refusal);
  EXPECT_EQ(outcome.refusal->rule, policy::rule::kReadOnlyFolder);
  EXPECT_THAT(outcome.refusal->message, HasSubstr("read-only"));
  EXPECT_TRUE(send_.sent.empty());
  EXPECT_TRUE(approver.asked.empty());

  // Nor does a path outside every folder, nor a tool the server never listed.
  auto outside = callNow(tools, "fs", "write_file", {{"path", "/etc/passwd"}}, approvals);
  ASSERT_TRUE(outside.refusal);
  auto unlisted =
      callNow(tools, "fs", "delete_file", {{"path", home_ + "/rw/keep.txt"}}, approvals);
  ASSERT_TRUE(unlisted.refusal);
  EXPECT_THAT(unlisted.refusal->message, HasSubstr("delete_file"));
  auto absent = callNow(tools, "web", "fetch", Json::object(), approvals);
  ASSERT_TRUE(absent.refusal);
  EXPECT_THAT(absent.refusal->message, HasSubstr("does not include web"));
  tools.clearTools("fs");
  auto gone = callNow(tools, "fs", "read_file", {{"path", "x"}}, approvals);
  ASSERT_TRUE(gone.refusal);
  EXPECT_THAT(gone.refusal->message, HasSubstr("not connected"));
  EXPECT_TRUE(send_.sent.empty());

  std::string rows = kaja::testing::readFile(audit->path());
  EXPECT_THAT(rows, HasSubstr("\"decision\":\"refused\""));
  EXPECT_THAT(rows, HasSubstr(std::string(policy::rule::kReadOnlyFolder)));
}

TEST_F(ToolCatalogTest, ADeclineNeverReachesTheServer) {
  auto audit = policy::AuditLog::open(dir_.path() + "/data");
  ASSERT_TRUE(audit);
  ToolCatalog tools = fsCatalog();
  FixedApprover approver(policy::ApprovalAnswer::kNo);
  policy::ApprovalSession approvals(approver);
  auto outcome =
      callNow(tools, "fs", "write_file", writeArgs("rw/new.txt", "x"), approvals, &*audit);
  EXPECT_EQ(outcome.decision, policy::AuditDecision::kDeclined);
  ASSERT_TRUE(outcome.refusal);
  EXPECT_THAT(outcome.refusal->message, HasSubstr("declined"));
  ASSERT_EQ(approver.asked.size(), 1u);
  EXPECT_EQ(approver.asked[0].server, "fs");
  EXPECT_EQ(approver.asked[0].tool, "write_file");
  EXPECT_EQ(approver.asked[0].arguments["content"], "x");
  EXPECT_THAT(approver.asked[0].writesTo, Contains(home_ + "/rw/new.txt"));
  EXPECT_TRUE(send_.sent.empty());
  EXPECT_THAT(kaja::testing::readFile(audit->path()), HasSubstr("\"decision\":\"declined\""));
}

TEST_F(ToolCatalogTest, ACallWaitsForALaterYesAndAllowForSessionIsRemembered) {
  ToolCatalog tools = fsCatalog();
  LaterApprover approver;
  policy::ApprovalSession approvals(approver);
  std::vector<policy::CallOutcome> outcomes;
  auto collect = [&outcomes](policy::CallOutcome outcome) {
    outcomes.push_back(std::move(outcome));
  };
  tools.call("fs", "write_file", writeArgs("rw/a.txt", "a"), approvals, nullptr, send_.function(),
             collect);
  ASSERT_EQ(approver.asked.size(), 1u);
  EXPECT_TRUE(send_.sent.empty()) << "sent before the person answered";
  EXPECT_TRUE(outcomes.empty());
  approver.answer(policy::ApprovalAnswer::kYes);
  ASSERT_EQ(send_.sent.size(), 1u);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].decision, policy::AuditDecision::kAllowed);

  // A plain yes is not remembered: the next write asks again, and a no stops it.
  tools.call("fs", "write_file", writeArgs("rw/b.txt", "b"), approvals, nullptr, send_.function(),
             collect);
  ASSERT_EQ(approver.asked.size(), 2u);
  approver.answer(policy::ApprovalAnswer::kNo);
  EXPECT_EQ(send_.sent.size(), 1u);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[1].decision, policy::AuditDecision::kDeclined);

  // "Allow for the session": this call and later ones of the tool run without asking.
  tools.call("fs", "write_file", writeArgs("rw/c.txt", "c"), approvals, nullptr, send_.function(),
             collect);
  approver.answer(policy::ApprovalAnswer::kYesForSession);
  EXPECT_EQ(send_.sent.size(), 2u);
  EXPECT_TRUE(approvals.remembers("fs", "write_file"));
  tools.call("fs", "write_file", writeArgs("rw/d.txt", "d"), approvals, nullptr, send_.function(),
             collect);
  EXPECT_EQ(approver.asked.size(), 3u);
  ASSERT_EQ(send_.sent.size(), 3u);
  EXPECT_EQ(send_.sent[2].arguments["content"], "d");
  // Still, a read-only folder is refused whatever was remembered.
  tools.call("fs", "write_file", writeArgs("ro/secret.txt", "e"), approvals, nullptr,
             send_.function(), collect);
  EXPECT_EQ(send_.sent.size(), 3u);
  EXPECT_EQ(outcomes.back().decision, policy::AuditDecision::kRefused);
}

// What a path means can change while a person is asked: another call moves a folder that
// holds a link to a read-only folder into place, or something swaps a folder for a link.
// The folders are judged again once the yes comes, and the call does not run.
TEST_F(ToolCatalogTest, AFolderChangedWhileApprovalWaitsIsJudgedAgain) {
  ToolCatalog tools = fsCatalog();
  LaterApprover approver;
  policy::ApprovalSession approvals(approver);
  std::vector<policy::CallOutcome> outcomes;
  auto collect = [&outcomes](policy::CallOutcome outcome) {
    outcomes.push_back(std::move(outcome));
  };
  // 1. rw/target does not exist yet: a new file in ~/rw, allowed, and asked.
  fs::create_directories(home_ + "/rw/holder");
  fs::create_directory_symlink(home_ + "/ro", home_ + "/rw/holder/lnk");
  tools.call("fs", "write_file", writeArgs("rw/target/lnk/x.txt", "x"), approvals, nullptr,
             send_.function(), collect);
  ASSERT_EQ(approver.asked.size(), 1u);
  // Meanwhile the folder holding the link is moved into place.
  fs::rename(home_ + "/rw/holder", home_ + "/rw/target");
  approver.answer(policy::ApprovalAnswer::kYes);
  ASSERT_EQ(outcomes.size(), 1u);
  ASSERT_TRUE(outcomes[0].refusal.has_value());
  EXPECT_EQ(outcomes[0].refusal->rule, policy::rule::kReadOnlyFolder);
  EXPECT_THAT(outcomes[0].refusal->message, HasSubstr("After it was approved"));
  EXPECT_TRUE(send_.sent.empty()) << "sent after the folder changed under it";

  // 2. A folder swapped for a link to the read-only folder while the question is open.
  fs::create_directories(home_ + "/rw/swap");
  tools.call("fs", "write_file", writeArgs("rw/swap/y.txt", "y"), approvals, nullptr,
             send_.function(), collect);
  ASSERT_EQ(approver.asked.size(), 2u);
  fs::remove(home_ + "/rw/swap");
  fs::create_directory_symlink(home_ + "/ro", home_ + "/rw/swap");
  approver.answer(policy::ApprovalAnswer::kYesForSession);
  ASSERT_EQ(outcomes.size(), 2u);
  ASSERT_TRUE(outcomes[1].refusal.has_value());
  EXPECT_EQ(outcomes[1].refusal->rule, policy::rule::kReadOnlyFolder);
  EXPECT_TRUE(send_.sent.empty());

  // 3. Unchanged folders: the same yes lets the call through.
  tools.call("fs", "write_file", writeArgs("rw/z.txt", "z"), approvals, nullptr, send_.function(),
             collect);
  EXPECT_EQ(send_.sent.size(), 1u) << "remembered for the session, asked no more";
}

// A persona that gives a server the whole home read-only also holds kaja's own folders:
// reading kaja's keys or audit log through any spelling of the path is refused, while the
// rest of the home reads as before.
TEST_F(ToolCatalogTest, KajasOwnFoldersCannotBeReadThroughAPersonaFolder) {
  dir_.write("home/.config/kaja/secrets.toml", "api_key = \"SECRET\"\n");
  dir_.write("home/.local/share/kaja/audit.jsonl", "{}\n");
  dir_.write("home/notes.txt", "mine");
  fs::create_directory_symlink(home_ + "/.config/kaja", home_ + "/keys");
  CatalogSettings settings;
  settings.persona = "work";
  settings.home = home_;
  settings.pipeline.backupsDir = backups_;
  settings.pipeline.kajaFolders = {home_ + "/.config/kaja", home_ + "/.local/share/kaja"};
  ToolCatalog tools(std::move(settings), {scope("fs", {{"~", true, false}})});
  tools.setTools("fs", {readTool("read_file")});
  FixedApprover approver(policy::ApprovalAnswer::kYes);
  policy::ApprovalSession approvals(approver);
  for (const std::string& path :
       {std::string("~/.config/kaja/secrets.toml"), home_ + "/.config/kaja/secrets.toml",
        home_ + "/.config/../.config/kaja/secrets.toml", home_ + "/keys/secrets.toml",
        home_ + "/.config/KAJA/secrets.toml", home_ + "//.local/share/kaja/audit.jsonl",
        std::string(".config/kaja/secrets.toml")}) {
    auto outcome = callNow(tools, "fs", "read_file", Json{{"path", path}}, approvals);
    EXPECT_TRUE(outcome.refusal.has_value()) << path << " was read";
  }
  auto many = callNow(tools, "fs", "read_file",
                      Json{{"path", Json::array({home_ + "/notes.txt", "~/keys/secrets.toml"})}},
                      approvals);
  EXPECT_TRUE(many.refusal.has_value()) << "one kaja file among several was read";
  EXPECT_TRUE(send_.sent.empty());
  auto mine = callNow(tools, "fs", "read_file", Json{{"path", home_ + "/notes.txt"}}, approvals);
  EXPECT_FALSE(mine.refusal.has_value());
  EXPECT_EQ(send_.sent.size(), 1u);
  EXPECT_TRUE(approver.asked.empty()) << "a read is never asked about";
}

TEST_F(ToolCatalogTest, ASlowServerAnswerFinishesTheCallLater) {
  ToolCatalog tools = fsCatalog();
  FixedApprover approver(policy::ApprovalAnswer::kYes);
  policy::ApprovalSession approvals(approver);
  send_.deferred = true;
  std::optional<policy::CallOutcome> outcome;
  tools.call("fs", "read_file", {{"path", "x"}}, approvals, nullptr, send_.function(),
             [&outcome](policy::CallOutcome done) { outcome = std::move(done); });
  EXPECT_EQ(send_.sent.size(), 1u);
  EXPECT_FALSE(outcome.has_value());
  send_.answerAll();
  ASSERT_TRUE(outcome.has_value());
  ASSERT_TRUE(outcome->result);
  EXPECT_EQ(outcome->result->text(), "done");
}

TEST_F(ToolCatalogTest, AWriteIntoABackedUpFolderIsCopiedFirst) {
  ToolCatalog tools = fsCatalog();
  FixedApprover approver(policy::ApprovalAnswer::kYes);
  policy::ApprovalSession approvals(approver);
  auto outcome = callNow(tools, "fs", "write_file", writeArgs("bk/notes.txt", "v2"), approvals);
  EXPECT_EQ(outcome.decision, policy::AuditDecision::kAllowed);
  ASSERT_EQ(outcome.backups.size(), 1u);
  EXPECT_EQ(kaja::testing::readFile(outcome.backups[0]), "version 1");
  ASSERT_EQ(send_.sent.size(), 1u);

  // kaja's own list_backups finds the copy, and a restore is asked for.
  auto listed =
      callNow(tools, policy::kKajaAbility, "list_backups", {{"path", "~/bk/notes.txt"}}, approvals);
  ASSERT_TRUE(listed.result) << (listed.refusal ? listed.refusal->message : "");
  EXPECT_THAT(listed.result->text(), HasSubstr(fs::path(outcome.backups[0]).filename().string()));
  FixedApprover no(policy::ApprovalAnswer::kNo);
  policy::ApprovalSession declining(no);
  auto restore = callNow(
      tools, policy::kKajaAbility, "restore_backup",
      {{"path", "~/bk/notes.txt"}, {"stamp", fs::path(outcome.backups[0]).filename().string()}},
      declining);
  ASSERT_TRUE(restore.refusal);
  EXPECT_EQ(no.asked.size(), 1u);
  EXPECT_EQ(send_.sent.size(), 1u);
  // A stamp that cannot name a copy is refused before anyone is asked, and shown escaped.
  for (const std::string stamp : {"../../etc/hostname", "20261129T193000.123Z/../x", "\x1b[2J"}) {
    auto bad = callNow(tools, policy::kKajaAbility, "restore_backup",
                       {{"path", "~/bk/notes.txt"}, {"stamp", stamp}}, declining);
    ASSERT_TRUE(bad.error) << stamp;
    EXPECT_THAT(bad.error->message, HasSubstr("is not a backup stamp")) << stamp;
    EXPECT_EQ(bad.error->message.find('\x1b'), std::string::npos) << bad.error->message;
  }
  EXPECT_EQ(no.asked.size(), 1u);
  EXPECT_EQ(kaja::testing::readFile(home_ + "/bk/notes.txt"), "version 1");
}

}  // namespace
}  // namespace kaja::core::gateway
