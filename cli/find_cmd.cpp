// `kaja find WORD`: servers in the official MCP registry (or, when it cannot answer, npm's
// search) that carry WORD, each shown in the server's own words, quoted and flattened.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "core/paths.h"
#include "core/util/quote.h"
#include "marketplace/sync/registry.h"
#include "marketplace/sync/store.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
namespace msync = marketplace::sync;

constexpr std::int64_t kMaxLimit = 100;
// Columns of a server's text that are shown: enough to judge it, not a page of its prose.
constexpr size_t kDescriptionColumns = 200;
constexpr size_t kFieldColumns = 120;
constexpr size_t kVersionColumns = 40;

// Returns the URL `flag` gives, else the one `envName` holds, else `fallback`, checked.
core::Result<std::string> registryUrl(const ParsedArgs& parsed, std::string_view flag,
                                      const char* envName, std::string_view fallback) {
  if (auto given = parsed.value(flag)) return msync::checkRegistryUrl(*given, flag);
  const char* value = std::getenv(envName);
  if (value != nullptr && *value != '\0') return msync::checkRegistryUrl(value, envName);
  return std::string(fallback);
}

std::string field(std::string_view text, size_t columns = kFieldColumns) {
  return fitWidth(oneLine(text), columns);
}

std::string runText(const msync::HitRunner& runner) {
  if (runner.kind == "remote") return "remote:" + field(runner.identifier);
  std::string text = field(runner.kind, 16) + ":" + field(runner.identifier);
  if (runner.version.empty()) return text;
  if (runner.kind == "pypi") return text + "==" + field(runner.version, kVersionColumns);
  if (runner.kind == "oci") return text;  // the image's tag is in its identifier
  return text + "@" + field(runner.version, kVersionColumns);
}

std::string runsCell(const msync::ServerHit& hit) {
  if (hit.runners.empty()) return "(not said)";
  std::string text = runText(hit.runners.front());
  if (hit.runners.size() > 1) text += " (+" + std::to_string(hit.runners.size() - 1) + " more)";
  return text;
}

std::string needsCell(const msync::ServerHit& hit) {
  if (hit.secrets.empty()) return "-";
  std::string text = "secret:";
  for (size_t i = 0; i < hit.secrets.size(); ++i) {
    text += (i == 0 ? " " : ", ") + field(hit.secrets[i], 64);
  }
  return text;
}

std::string descriptionCell(const msync::ServerHit& hit) {
  std::string prefix =
      hit.status.empty() || hit.status == "active" ? "" : "[" + field(hit.status, 16) + "] ";
  if (!hit.withheld.empty()) {
    return prefix + "(withheld: " + hit.withheld + ")";
  }
  if (hit.description.empty()) return prefix + "(no description)";
  // Quoted and escaped, so that nothing it holds can pass for kaja's own words.
  return prefix + "says: " + core::quoteForMessage(fitWidth(hit.description, kDescriptionColumns));
}

json hitJson(const msync::ServerHit& hit) {
  json runs = json::array();
  for (const auto& runner : hit.runners) {
    runs.push_back({{"kind", field(runner.kind, 16)},
                    {"identifier", field(runner.identifier)},
                    {"version", field(runner.version, kVersionColumns)},
                    {"transport", field(runner.transport, 32)}});
  }
  json secrets = json::array();
  for (const auto& secret : hit.secrets) secrets.push_back(field(secret, 64));
  json findings = json::array();
  for (const auto& finding : hit.findings) findings.push_back(finding);
  json description = nullptr;
  if (hit.withheld.empty()) description = fitWidth(oneLine(hit.description), kDescriptionColumns);
  return {{"name", hit.name},
          {"fullName", field(hit.fullName)},
          {"source", hit.verified ? "registry" : "npm"},
          {"verified", hit.verified},
          {"version", field(hit.version, kVersionColumns)},
          {"status", field(hit.status, 16)},
          {"description", description},
          {"withheld", hit.withheld.empty() ? json(nullptr) : json(hit.withheld)},
          {"findings", findings},
          {"runs", runs},
          {"secrets", secrets}};
}

void printHits(const std::vector<msync::ServerHit>& hits) {
  Table table({"NAME", "SOURCE", "RUNS", "NEEDS", "DESCRIPTION"});
  // The short name is the one kaja gives the server: broken onto lines, never cut.
  table.wrapColumn(0, 24);
  table.wrapColumn(2, 30);
  table.wrapColumn(3, 24);
  for (const auto& hit : hits) {
    table.addRow({hit.name, hit.verified ? "registry" : "npm (unverified)", runsCell(hit),
                  needsCell(hit), descriptionCell(hit)});
  }
  std::fputs(table.render(terminalWidth(), useColour(stdout)).c_str(), stdout);
}

core::Result<msync::FindOptions> optionsFrom(const ParsedArgs& parsed) {
  msync::FindOptions options;
  auto registry =
      registryUrl(parsed, "--registry", "KAJA_REGISTRY_URL", msync::kDefaultRegistryUrl);
  if (!registry) return std::unexpected(registry.error());
  options.registryUrl = *registry;
  auto npm =
      registryUrl(parsed, "--npm-registry", "KAJA_NPM_REGISTRY_URL", msync::kDefaultNpmRegistryUrl);
  if (!npm) return std::unexpected(npm.error());
  options.npmRegistryUrl = *npm;
  if (auto limit = parsed.value("--limit")) {
    auto n = parsePositive("--limit", *limit, "a positive number of servers");
    if (!n) return std::unexpected(n.error());
    if (*n > kMaxLimit) {
      return core::fail(core::ErrorCode::kUsage,
                        "--limit is at most " + std::to_string(kMaxLimit) + "; give a smaller N");
    }
    options.limit = static_cast<size_t>(*n);
  }
  return options;
}

}  // namespace

int runFind(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"}, {"--registry", "--npm-registry", "--limit"});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 1) {
    printError(parsed->positional.empty()
                   ? "kaja find needs one WORD to search for, such as `kaja find weather`"
                   : "kaja find searches for one word, and got " +
                         std::to_string(parsed->positional.size()) + "; give one of them");
    return kExitUsage;
  }
  const std::string& word = parsed->positional[0];
  if (auto checked = msync::checkSearchWord(word); !checked) return reportError(checked.error());
  auto options = optionsFrom(*parsed);
  if (!options) return reportError(options.error());
  auto paths = core::Paths::fromEnvironment();
  if (!paths) return reportError(paths.error());
  auto catalog = msync::loadCatalog(*paths);
  if (!catalog) return reportError(catalog.error());
  options->isTaken = [&](const std::string& name) {
    return catalog->findAbilityRecord(name) != nullptr;
  };

  auto report = msync::findServers(word, *options);
  if (!report) return reportError(report.error());
  if (report->registryError) {
    printWarning("the MCP registry could not be searched (" + report->registryError->message +
                 "), so these results come from npm's search and are NOT verified: nobody "
                 "checked that they are MCP servers or safe to run, so read each package "
                 "before you use it");
  }
  if (report->leftOut > 0) {
    printWarning("left out " + std::to_string(report->leftOut) +
                 (report->leftOut == 1 ? " server whose name" : " servers whose names") +
                 " looked like instructions to a model");
  }
  if (parsed->has("--json")) {
    json rows = json::array();
    for (const auto& hit : report->hits) rows.push_back(hitJson(hit));
    std::printf("%s\n", jsonText(rows).c_str());
  } else if (!report->hits.empty()) {
    printHits(report->hits);
  }
  if (report->hits.empty()) {
    printNote(std::string("no server in ") +
              (report->registryError ? "npm's search" : "the MCP registry") + " has the word " +
              core::quoteForMessage(word) + " in its name or description; try another word");
  }
  return kExitOk;
}

}  // namespace kaja::cli
