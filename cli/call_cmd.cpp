#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/json_input.h"
#include "cli/output.h"
#include "cli/persona_session.h"
#include "cli/prompt.h"
#include "core/manifest/field_reader.h"
#include "core/policy/audit_log.h"
#include "core/policy/backup.h"
#include "core/policy/backup_tools.h"
#include "core/policy/call_pipeline.h"
#include "core/policy/terminal_approver.h"
#include "core/policy/tool_filter.h"
#include "core/util/quote.h"

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

// Prints the refusal with the rule it came from, which `kaja help rules` explains.
int refusedExit(const std::string& message, const std::string& rule = "") {
  if (rule.empty()) {
    printRefusal(message);
  } else {
    const std::string code = rule.substr(0, rule.find(' '));
    printRefusal(asSentence(message) + " (rule " + rule + "; kaja help rules " + code +
                 " says more)");
  }
  return kExitRefused;
}

// Parses ARGS_JSON; a parse error names the line and column where it failed.
core::Result<json> parseArguments(const std::string& text) {
  auto value = parseJsonInput(text);
  if (!value) {
    return core::fail(core::ErrorCode::kUsage, "ARGS_JSON: " + value.error().message +
                                                   "; write it like '{\"path\": \"~/a.md\"}'");
  }
  if (!value->is_object()) {
    return core::fail(core::ErrorCode::kUsage, "ARGS_JSON must be a JSON object, not " +
                                                   std::string(value->type_name()) +
                                                   "; write it like '{\"path\": \"~/a.md\"}'");
  }
  return std::move(*value);
}

// Says what an ability name that the persona does not list is: a typo (usage) or an
// ability that exists but is not turned on (a refusal by the persona).
int unlistedAbility(const PersonaSession& session, const std::string& ability) {
  const std::string& persona = session.persona.name;
  const auto* record = session.context.catalog.findAbilityRecord(ability);
  if (record != nullptr && !record->ability) {
    // Listed or not, a manifest that did not load is the thing to fix first.
    printError("ability " + core::quoteForMessage(ability) +
               " is broken: " + record->error.describe());
    return kExitUsage;
  }
  if (record != nullptr) {
    return refusedExit("persona \"" + persona + "\" does not include " + ability +
                       "; turn it on with `kaja enable " + ability +
                       "` or choose a persona that has it (`kaja personas`)");
  }
  std::vector<std::string_view> names{policy::kKajaAbility};
  for (const auto& active : session.persona.abilities) names.push_back(active.ability.name);
  std::string near = core::didYouMean(ability, std::span(names.data(), names.size()));
  if (near.empty()) {
    for (const auto& record : session.context.catalog.abilities()) names.push_back(record.name);
    near = core::didYouMean(ability, std::span(names.data(), names.size()));
  }
  printError("there is no ability named \"" + ability + "\"" +
             (near.empty() ? "; `kaja abilities` lists them" : near));
  return kExitUsage;
}

// A tool the server does not offer at all is a typo (usage); one it offers but a rule
// left out is the catalog's refusal. Returns nullopt when the server offers `tool`.
std::optional<int> unknownTool(const core::ConnectReport& report, const std::string& tool) {
  std::vector<std::string_view> names;
  for (const auto& offered : report.tools) {
    if (offered.name == tool) return std::nullopt;
    names.push_back(offered.name);
  }
  if (!report.notes.empty()) {
    // The list was cut (V7): the tool may well exist past the cut, and it is kaja's rule
    // that keeps it out.
    return refusedExit(report.ability + " offers no tool named \"" + mcp::clip(tool, 80) +
                       "\" among the ones kaja takes: " + report.notes.front());
  }
  std::string near = core::didYouMean(tool, std::span(names.data(), names.size()));
  printError(report.ability + " has no tool named \"" + mcp::clip(tool, 80) + "\"" +
             (near.empty() ? "; `kaja tools " + report.ability + "` lists what it offers" : near));
  return kExitUsage;
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
    auto given = parseArguments(words[2]);
    if (!given) return reportError(given.error());
    arguments = std::move(*given);
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

  if (builtIn) {
    core::gateway::ToolCatalog catalog = session->catalog(core::gateway::NameStyle::kCli);
    return finishCall(catalog, ability, tool, std::move(arguments), approvals,
                      audit ? &*audit : nullptr, *session->host, parsed->has("--json"));
  }
  const personas::ActiveAbility* active = session->active(ability);
  if (active == nullptr) return unlistedAbility(*session, ability);
  int exitCode = kExitOk;
  const core::ConnectReport* report = session->connected(ability, exitCode);
  if (report == nullptr) return exitCode;
  if (auto typo = unknownTool(*report, tool)) return *typo;

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
  // Told whatever became of the call: one that failed midway may still have changed a file.
  auto paths = core::Paths::fromEnvironment();
  policy::BackupStore store(paths ? paths->backupsDir : std::string());
  json kept = json::array();
  for (const auto& copy : outcome.backups) {
    auto described = store.describeCopy(copy);
    if (!described) {
      printNote("kept a copy at " + copy + " before the call.");
      continue;
    }
    // Single-quoted for a shell unless it plainly needs no quotes.
    std::string shell = described->original;
    if (shell.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                "/._+-,@:%=") != std::string::npos) {
      shell.clear();
      for (char c : described->original)
        shell += c == '\'' ? std::string("'\\''") : std::string(1, c);
      shell = "'" + shell + "'";
    }
    printNote("kept a copy of " + described->original + " before the call (kaja backups restore " +
              shell + " to undo it).");
    kept.push_back(
        {{"path", described->original}, {"copy", copy}, {"stamp", described->entry.stamp}});
  }
  if (outcome.refusal) return refusedExit(outcome.refusal->message, outcome.refusal->rule);
  if (outcome.error || !outcome.result) {
    const core::Error error =
        outcome.error.value_or(core::Error{core::ErrorCode::kInternal,
                                           "the call ended with neither a result nor an error",
                                           ability,
                                           {}});
    printError(error);
    return exitCodeFor(error);
  }
  // kaja's own key in _meta, where no server's key can collide; one a server set is dropped.
  json& raw = outcome.result->raw;
  if (raw.is_object() && (!raw.contains("_meta") || raw["_meta"].is_object())) {
    if (kept.empty() && raw.contains("_meta")) raw["_meta"].erase("kaja/backups");
    if (!kept.empty()) raw["_meta"]["kaja/backups"] = std::move(kept);
  }
  printResult(*outcome.result, asJson);
  return outcome.result->isError() ? kExitFailed : kExitOk;
}

}  // namespace

}  // namespace kaja::cli
