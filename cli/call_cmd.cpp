#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "cli/persona_session.h"
#include "cli/prompt.h"
#include "core/policy/audit_log.h"
#include "core/policy/backup_tools.h"
#include "core/policy/call_pipeline.h"
#include "core/policy/terminal_approver.h"
#include "core/policy/tool_filter.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
namespace mcp = core::mcp;
namespace policy = core::policy;

// --yes approves; a person at a terminal is asked; otherwise every ask is declined.
std::unique_ptr<policy::Approver> makeApprover(bool yes) {
  if (yes) return std::make_unique<policy::AutoApprover>();
  if (canPrompt()) {
    if (auto terminal = policy::TerminalApprover::openTty()) return std::move(*terminal);
  }
  return std::make_unique<policy::DecliningApprover>();
}

// Returns the string at `key`, or `fallback` when it is absent or no string: a server's
// result is printed, never trusted.
std::string stringAt(const json& object, const char* key, const std::string& fallback = "") {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

void printBlock(const json& block) {
  std::string type = stringAt(block, "type");
  if (type == "text") {
    std::printf("%s\n", safeText(stringAt(block, "text")).c_str());
  } else if (type == "image" || type == "audio") {
    auto data = block.find("data");
    size_t bytes =
        data != block.end() && data->is_string() ? data->get_ref<const std::string&>().size() : 0;
    std::printf("[%s %s, %zu bytes of base64]\n", type.c_str(),
                oneLine(stringAt(block, "mimeType", "?")).c_str(), bytes);
  } else if (type == "resource_link") {
    std::printf("[link %s]\n", oneLine(stringAt(block, "uri")).c_str());
  } else if (type == "resource" && block.contains("resource") && block["resource"].is_object()) {
    const json& resource = block["resource"];
    if (resource.contains("text")) {
      std::printf("%s\n", safeText(stringAt(resource, "text")).c_str());
    } else {
      std::printf("[resource %s]\n", oneLine(stringAt(resource, "uri")).c_str());
    }
  } else {
    std::printf("%s\n", jsonText(block, -1).c_str());
  }
}

void printResult(const mcp::ToolResult& result, bool asJson) {
  if (asJson) {
    std::printf("%s\n", jsonText(result.raw).c_str());
    return;
  }
  bool printed = false;
  for (const auto& block : result.content()) {
    printBlock(block);
    printed = true;
  }
  if (!printed) {
    if (auto structured = result.structuredContent()) {
      std::printf("%s\n", jsonText(*structured).c_str());
    }
  }
}

int refusedExit(const std::string& message) {
  std::fprintf(stderr, "kaja: refused: %s\n", oneLine(message).c_str());
  return kExitRefused;
}

int finishCall(core::gateway::ToolCatalog& catalog, const std::string& ability,
               const std::string& tool, json arguments, policy::ApprovalSession& approvals,
               policy::AuditLog* audit, core::Host& host, bool asJson);

}  // namespace

int runCall(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json", "--yes"}, {"--persona"});
  if (!parsed) return reportError(parsed.error());
  const auto& words = parsed->positional;
  if (words.size() < 2 || words.size() > 3) {
    printError("usage: kaja call [--persona P] [--yes] [--json] ABILITY TOOL [ARGS_JSON]");
    return kExitUsage;
  }
  const std::string& ability = words[0];
  const std::string& tool = words[1];
  json arguments = json::object();
  if (words.size() == 3) {
    arguments = json::parse(words[2], nullptr, false);
    if (arguments.is_discarded() || !arguments.is_object()) {
      printError("ARGS_JSON must be a JSON object, like '{\"path\": \"~/notes/a.md\"}'");
      return kExitUsage;
    }
  }
  bool builtIn = ability == policy::kKajaAbility;
  // kaja's own tools need no server: connect nothing for them.
  auto session = PersonaSession::open(parsed->value("--persona"),
                                      std::vector<std::string>{builtIn ? "" : ability});
  if (!session) return reportError(session.error());
  auto approver = makeApprover(parsed->has("--yes"));
  policy::ApprovalSession approvals(*approver);
  auto audit = policy::AuditLog::open(session->context.paths.dataDir);
  if (!audit) printWarning("no audit row will be written: " + audit.error().describe());
  const std::string& personaName = session->persona.name;

  if (builtIn) {
    core::gateway::ToolCatalog catalog = session->catalog(core::gateway::NameStyle::kCli);
    return finishCall(catalog, ability, tool, std::move(arguments), approvals,
                      audit ? &*audit : nullptr, *session->host, parsed->has("--json"));
  }
  const personas::ActiveAbility* active = session->active(ability);
  if (active == nullptr) {
    return refusedExit("persona \"" + personaName + "\" does not include " + ability +
                       "; `kaja personas` shows what it has");
  }
  const core::ConnectReport* report = session->report(ability);
  if (report == nullptr) {
    std::string why =
        session->skipped.empty() ? ability + " is not available" : session->skipped.front();
    printError(why);
    return kExitConnect;
  }
  if (report->error) {
    printError(*report->error);
    // A connection kaja refused by a rule of its own (an address, a redirect) is a refusal.
    return report->error->code == core::ErrorCode::kRefused ? kExitRefused : kExitConnect;
  }

  core::gateway::ToolCatalog catalog = session->catalog(core::gateway::NameStyle::kCli);
  return finishCall(catalog, ability, tool, std::move(arguments), approvals,
                    audit ? &*audit : nullptr, *session->host, parsed->has("--json"));
}

namespace {

int finishCall(core::gateway::ToolCatalog& catalog, const std::string& ability,
               const std::string& tool, json arguments, policy::ApprovalSession& approvals,
               policy::AuditLog* audit, core::Host& host, bool asJson) {
  std::optional<policy::CallOutcome> answer;
  catalog.call(
      ability, tool, std::move(arguments), approvals, audit,
      [&host, &ability](const std::string& name, const json& values,
                        const std::function<void(core::Result<mcp::ToolResult>)>& sent) {
        sent(host.callTool(ability, name, values));
      },
      [&answer](policy::CallOutcome outcome) { answer = std::move(outcome); });
  policy::CallOutcome outcome = std::move(answer).value_or(policy::CallOutcome{});
  if (outcome.refusal) return refusedExit(outcome.refusal->message);
  if (outcome.error || !outcome.result) {
    const core::Error error =
        outcome.error.value_or(core::Error{core::ErrorCode::kInternal,
                                           "the call ended with neither a result nor an error",
                                           ability,
                                           {}});
    printError(error);
    return exitCodeFor(error);
  }
  for (const auto& copy : outcome.backups) {
    if (options().verbose) std::fprintf(stderr, "kaja: kept a copy at %s\n", copy.c_str());
  }
  printResult(*outcome.result, asJson);
  return outcome.result->isError() ? kExitFailed : kExitOk;
}

}  // namespace

}  // namespace kaja::cli
