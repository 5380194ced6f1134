#include "marketplace/sync/registry.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/net/address_guard.h"
#include "core/net/url.h"
#include "core/policy/injection_scanner.h"
#include "core/util/quote.h"
#include "marketplace/sync/fetch.h"
#include "marketplace/sync/verify.h"

namespace kaja::marketplace::sync {
namespace {

using core::ErrorCode;
using nlohmann::json;
namespace net = core::net;

constexpr std::size_t kMaxNameChars = 64;
constexpr std::size_t kSuffixHexDigits = 6;
// T7's bound: a longer description is itself a reason not to show it.
constexpr std::size_t kMaxDescriptionChars = 4000;
// The registry's largest page; hits are filtered by token afterwards, so ask for many.
constexpr int kRegistryPage = 100;
constexpr std::size_t kNpmMinPage = 20;
constexpr std::size_t kNpmMaxPage = 250;
constexpr std::array<std::string_view, 4> kReservedNames = {"kaja", "shipped", "user", "workspace"};
constexpr std::string_view kOfficialMeta = "io.modelcontextprotocol.registry/official";

bool isWordByte(unsigned char c) { return std::isalnum(c) != 0 || c >= 0x80; }

char lowerAscii(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::vector<std::string> tokensOf(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : text) {
    if (isWordByte(static_cast<unsigned char>(c))) {
      current += lowerAscii(c);
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

std::string percentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

bool isLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  auto address = net::parseIpAddress(host);
  return address && net::classify(*address) == net::AddressClass::kLoopback;
}

// The first of `keys` that `object` holds as a string, or "".
std::string stringField(const json& object, std::initializer_list<const char*> keys) {
  if (!object.is_object()) return {};
  for (const char* key : keys) {
    auto it = object.find(key);
    if (it != object.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

// The first of `keys` that `object` holds as a boolean, or nullopt.
std::optional<bool> boolField(const json& object, std::initializer_list<const char*> keys) {
  if (!object.is_object()) return std::nullopt;
  for (const char* key : keys) {
    auto it = object.find(key);
    if (it != object.end() && it->is_boolean()) return it->get<bool>();
  }
  return std::nullopt;
}

// The first of `keys` that `object` holds as an array; an empty array otherwise.
const json& arrayField(const json& object, std::initializer_list<const char*> keys) {
  static const json kEmpty = json::array();
  if (!object.is_object()) return kEmpty;
  for (const char* key : keys) {
    auto it = object.find(key);
    if (it != object.end() && it->is_array()) return *it;
  }
  return kEmpty;
}

void addSecrets(const json& variables, std::vector<std::string>& secrets) {
  for (const auto& variable : variables) {
    if (!boolField(variable, {"isSecret", "is_secret"}).value_or(false)) continue;
    std::string name = stringField(variable, {"name"});
    if (name.empty()) continue;
    if (std::find(secrets.begin(), secrets.end(), name) == secrets.end()) {
      secrets.push_back(std::move(name));
    }
  }
}

void readPackages(const json& server, ServerHit& hit) {
  for (const auto& package : arrayField(server, {"packages"})) {
    HitRunner runner;
    runner.kind = stringField(package, {"registryType", "registry_type", "registry_name"});
    std::transform(runner.kind.begin(), runner.kind.end(), runner.kind.begin(), lowerAscii);
    runner.identifier = stringField(package, {"identifier", "name"});
    if (runner.kind.empty() || runner.identifier.empty()) continue;
    runner.version = stringField(package, {"version"});
    auto transport = package.find("transport");
    if (transport != package.end() && transport->is_string()) {
      runner.transport = transport->get<std::string>();
    } else if (transport != package.end()) {
      runner.transport = stringField(*transport, {"type"});
    }
    if (runner.transport.empty()) runner.transport = "stdio";
    addSecrets(arrayField(package, {"environmentVariables", "environment_variables"}), hit.secrets);
    hit.runners.push_back(std::move(runner));
  }
  for (const auto& remote : arrayField(server, {"remotes"})) {
    HitRunner runner;
    runner.kind = "remote";
    runner.identifier = stringField(remote, {"url"});
    runner.transport = stringField(remote, {"type", "transport_type"});
    if (runner.identifier.empty()) continue;
    addSecrets(arrayField(remote, {"headers"}), hit.secrets);
    hit.runners.push_back(std::move(runner));
  }
}

// Reads one entry of `servers`; nullopt for an entry to skip (not a server, deleted, or a
// version that is not the latest).
std::optional<ServerHit> readRegistryEntry(const json& entry) {
  if (!entry.is_object()) return std::nullopt;
  auto wrapped = entry.find("server");
  const json& server = wrapped != entry.end() && wrapped->is_object() ? *wrapped : entry;
  ServerHit hit;
  hit.verified = true;
  hit.fullName = stringField(server, {"name"});
  if (hit.fullName.empty()) return std::nullopt;
  hit.description = stringField(server, {"description"});
  hit.version = stringField(server, {"version"});
  auto detail = server.find("version_detail");
  if (hit.version.empty() && detail != server.end())
    hit.version = stringField(*detail, {"version"});
  // The newer shape keeps _meta beside the server; the older one inside it.
  const json* meta = nullptr;
  if (auto it = entry.find("_meta"); it != entry.end() && it->is_object()) {
    meta = &*it;
  } else if (auto inner = server.find("_meta"); inner != server.end() && inner->is_object()) {
    meta = &*inner;
  }
  json official = json::object();
  if (meta != nullptr) {
    auto it = meta->find(std::string(kOfficialMeta));
    if (it != meta->end() && it->is_object()) official = *it;
  }
  hit.status = stringField(official, {"status"});
  if (hit.status.empty()) hit.status = stringField(server, {"status"});
  std::optional<bool> latest = boolField(official, {"isLatest", "is_latest"});
  if (!latest && detail != server.end()) latest = boolField(*detail, {"is_latest", "isLatest"});
  if (hit.status == "deleted" || latest == false) return std::nullopt;
  readPackages(server, hit);
  return hit;
}

json parseJson(std::string_view body) { return json::parse(body, nullptr, false); }

std::string base(std::string_view fullName) {
  std::string_view tail = fullName.substr(fullName.rfind('/') + 1);
  std::string name;
  for (char c : tail) {
    char lower = lowerAscii(c);
    bool kept = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') || lower == '_' ||
                lower == '-';
    name += kept ? lower : '-';
  }
  auto first = name.find_first_not_of('-');
  if (first == std::string::npos) return "server";
  name = name.substr(first, kMaxNameChars);
  while (name.back() == '-') name.pop_back();
  return name;
}

bool isReserved(const std::string& name) {
  return std::find(kReservedNames.begin(), kReservedNames.end(), name) != kReservedNames.end();
}

std::string withSuffix(const std::string& name, std::string_view fullName) {
  std::string cut = name.substr(0, kMaxNameChars - kSuffixHexDigits - 1);
  while (!cut.empty() && cut.back() == '-') cut.pop_back();
  return cut + "-" + sha256Hex(fullName).substr(0, kSuffixHexDigits);
}

bool unreachable(const core::Error& error) {
  return error.code == ErrorCode::kConnect || error.code == ErrorCode::kTimeout ||
         error.code == ErrorCode::kRefused;
}

core::Result<std::vector<ServerHit>> searchRegistry(const std::string& word,
                                                    const FindOptions& options) {
  std::string url = options.registryUrl + "/v0/servers?search=" + percentEncode(word) +
                    "&limit=" + std::to_string(kRegistryPage) + "&version=latest";
  FetchLimits limits{.maxBytes = options.maxBodyBytes, .timeout = options.timeout};
  auto body = fetchUrl(url, limits, {.accept = "application/json", .what = "search results"});
  if (!body) return std::unexpected(body.error());
  auto hits = parseRegistryAnswer(*body);
  if (!hits) hits.error().message = url + " " + hits.error().message;
  return hits;
}

core::Result<std::vector<ServerHit>> searchNpm(const std::string& word,
                                               const FindOptions& options) {
  std::size_t size = std::clamp(options.limit, kNpmMinPage, kNpmMaxPage);
  std::string url = options.npmRegistryUrl + "/-/v1/search?text=" + percentEncode(word) +
                    "&size=" + std::to_string(size);
  FetchLimits limits{.maxBytes = options.maxBodyBytes, .timeout = options.timeout};
  auto body = fetchUrl(url, limits, {.accept = "application/json", .what = "search results"});
  if (!body) return std::unexpected(body.error());
  auto hits = parseNpmAnswer(*body);
  if (!hits) hits.error().message = url + " " + hits.error().message;
  return hits;
}

// Keeps what carries `word`, at most `limit`, drops names that carry an injection, and
// gives each hit its short name and each description its verdict.
FindReport select(std::vector<ServerHit> found, const std::string& word,
                  const FindOptions& options) {
  FindReport report;
  for (auto& hit : found) {
    if (report.hits.size() >= options.limit) break;
    if (!hasToken(hit.fullName, word) && !hasToken(hit.description, word)) continue;
    if (!core::policy::scanText(hit.fullName, "name", true).empty()) {
      ++report.leftOut;
      continue;
    }
    if (hit.description.size() > kMaxDescriptionChars) {
      hit.withheld = "it is over " + std::to_string(kMaxDescriptionChars) + " characters long";
    } else if (auto findings = core::policy::scanText(hit.description, "description");
               !findings.empty()) {
      std::set<std::string> patterns;
      for (const auto& finding : findings) patterns.insert(finding.pattern);
      hit.findings.assign(patterns.begin(), patterns.end());
      hit.withheld = "it looked like instructions to a model";
    }
    report.hits.push_back(std::move(hit));
  }
  std::map<std::string, int> shared;
  for (const auto& hit : report.hits) ++shared[base(hit.fullName)];
  for (auto& hit : report.hits) {
    std::string name = shortServerName(hit.fullName, options.isTaken);
    // Two hits of one short name are told apart the same way on every run.
    if (shared[name] > 1) name = withSuffix(name, hit.fullName);
    hit.name = std::move(name);
  }
  return report;
}

}  // namespace

core::Result<std::string> checkSearchWord(std::string_view word) {
  auto tokens = tokensOf(word);
  if (tokens.empty()) {
    return core::fail(ErrorCode::kUsage,
                      "kaja find needs one word of letters or digits, such as weather");
  }
  if (tokens.size() == 1 && tokens.front().size() == word.size()) return tokens.front();
  std::string list;
  for (const auto& token : tokens) list += (list.empty() ? "" : ", ") + token;
  return core::fail(ErrorCode::kUsage,
                    "kaja find matches one word by token, and " + core::quoteForMessage(word) +
                        " holds " + (tokens.size() == 1 ? "the word " : "the words ") + list +
                        " with other characters; search for one word alone");
}

core::Result<std::string> checkRegistryUrl(std::string_view given, std::string_view flag) {
  std::string text(given);
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  auto url = net::parseUrl(text);
  if (!url || text.find_first_of("?#") != std::string::npos) {
    return core::fail(ErrorCode::kUsage, std::string(flag) + " takes an http(s) URL, and " +
                                             core::quoteForMessage(given) + " is none");
  }
  if (url->scheme == "http" && !isLoopbackHost(url->host)) {
    return core::fail(ErrorCode::kUsage,
                      "kaja searches a registry over https (plain http only on this machine's "
                      "loopback); give " +
                          std::string(flag) + " an https:// URL instead of " +
                          core::quoteForMessage(given));
  }
  while (url->text.size() > 1 && url->text.back() == '/') url->text.pop_back();
  return url->text;
}

bool hasToken(std::string_view text, std::string_view word) {
  std::string wanted(word);
  std::transform(wanted.begin(), wanted.end(), wanted.begin(), lowerAscii);
  auto tokens = tokensOf(text);
  return std::find(tokens.begin(), tokens.end(), wanted) != tokens.end();
}

std::string shortServerName(std::string_view fullName,
                            const std::function<bool(const std::string&)>& isTaken) {
  std::string name = base(fullName);
  if (isReserved(name) || (isTaken && isTaken(name))) return withSuffix(name, fullName);
  return name;
}

core::Result<std::vector<ServerHit>> parseRegistryAnswer(std::string_view body) {
  json answer = parseJson(body);
  if (answer.is_discarded()) {
    return core::fail(ErrorCode::kProtocol, "answered with something that is not JSON");
  }
  auto servers = answer.is_object() ? answer.find("servers") : answer.end();
  if (!answer.is_object() || servers == answer.end() || !servers->is_array()) {
    return core::fail(ErrorCode::kProtocol,
                      "answered JSON without a servers list, which is no registry search answer");
  }
  std::vector<ServerHit> hits;
  std::set<std::string> seen;
  for (const auto& entry : *servers) {
    auto hit = readRegistryEntry(entry);
    if (!hit || !seen.insert(hit->fullName).second) continue;
    hits.push_back(std::move(*hit));
  }
  return hits;
}

core::Result<std::vector<ServerHit>> parseNpmAnswer(std::string_view body) {
  json answer = parseJson(body);
  if (answer.is_discarded()) {
    return core::fail(ErrorCode::kProtocol, "answered with something that is not JSON");
  }
  auto objects = answer.is_object() ? answer.find("objects") : answer.end();
  if (!answer.is_object() || objects == answer.end() || !objects->is_array()) {
    return core::fail(ErrorCode::kProtocol,
                      "answered JSON without an objects list, which is no npm search answer");
  }
  std::vector<ServerHit> hits;
  std::set<std::string> seen;
  for (const auto& object : *objects) {
    if (!object.is_object() || !object.contains("package")) continue;
    const json& package = object["package"];
    ServerHit hit;
    hit.fullName = stringField(package, {"name"});
    if (hit.fullName.empty() || !seen.insert(hit.fullName).second) continue;
    hit.description = stringField(package, {"description"});
    hit.version = stringField(package, {"version"});
    std::string words = hit.fullName + " " + hit.description;
    for (const auto& keyword : arrayField(package, {"keywords"})) {
      if (keyword.is_string()) words += " " + keyword.get<std::string>();
    }
    // npm holds every kind of package; only those that call themselves MCP servers count.
    if (!hasToken(words, "mcp") && !hasToken(words, "modelcontextprotocol")) continue;
    hit.runners.push_back({"npm", hit.fullName, hit.version, "stdio"});
    hits.push_back(std::move(hit));
  }
  return hits;
}

core::Result<FindReport> findServers(const std::string& word, const FindOptions& options) {
  auto checked = checkSearchWord(word);
  if (!checked) return std::unexpected(checked.error());
  auto registry = searchRegistry(*checked, options);
  if (registry) return select(std::move(*registry), *checked, options);
  auto npm = searchNpm(*checked, options);
  if (!npm) {
    bool neither = unreachable(registry.error()) && unreachable(npm.error());
    return core::fail(neither ? ErrorCode::kConnect : ErrorCode::kProtocol,
                      "neither the MCP registry nor npm could be searched: " +
                          registry.error().message + "; and " + npm.error().message,
                      {}, registry.error().detail + npm.error().detail);
  }
  FindReport report = select(std::move(*npm), *checked, options);
  report.registryError = registry.error();
  return report;
}

}  // namespace kaja::marketplace::sync
