#include "core/gateway/metadata_cache.h"

#include <fcntl.h>
#include <nettle/sha2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <set>

#include "core/util/sys.h"

namespace kaja::core::gateway {
namespace {

namespace fs = std::filesystem;
using mcp::Json;

// Bumped when the file layout changes, so that old files are never misread.
constexpr int kFormat = 1;

// Nettle rather than OpenSSL: OpenSSL's first digest loads its configuration and providers,
// which costs kaja serve about 2 MB of memory for a hash of a few hundred bytes; nettle is
// mapped anyway (GnuTLS, which libcurl's LDAP support brings, links it) and needs no set-up.
std::string sha256Hex(const std::string& text) {
  sha256_ctx context{};
  sha256_init(&context);
  sha256_update(&context, text.size(), reinterpret_cast<const std::uint8_t*>(text.data()));
  std::array<std::uint8_t, SHA256_DIGEST_SIZE> digest{};
  sha256_digest(&context, digest.size(), digest.data());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (const std::uint8_t byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

// Returns true when `file` (a name in the cache folder) is an entry of `ability`, for any
// configuration: "<ability>-<32 hex>.json".
bool isEntryOf(const std::string& file, const std::string& ability) {
  return file.starts_with(ability + "-") && file.ends_with(".json") &&
         file.size() == ability.size() + 1 + 32 + 5;
}

// The largest entry kaja reads; a server's tool list is far smaller.
constexpr std::size_t kMaxEntryBytes = std::size_t{8} * 1024 * 1024;

// Reads a cache entry that is a regular file of at most kMaxEntryBytes; nullopt for
// anything else (a folder, a FIFO, a device, a link to one), without blocking or throwing.
std::optional<std::string> readEntry(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat info {};
  std::optional<std::string> text;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<std::size_t>(info.st_size) <= kMaxEntryBytes) {
    std::string buffer(static_cast<std::size_t>(info.st_size), '\0');
    std::size_t got = 0;
    while (got < buffer.size()) {
      const ssize_t n = ::read(fd, buffer.data() + got, buffer.size() - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got == buffer.size()) text = std::move(buffer);
  }
  ::close(fd);
  return text;
}

Json serverToJson(const mcp::ServerInfo& server) {
  return {{"name", server.name},
          {"version", server.version},
          {"protocolVersion", server.protocolVersion},
          {"instructions", server.instructions},
          {"capabilities", server.capabilities}};
}

std::optional<mcp::ServerInfo> serverFromJson(const Json& value) {
  if (!value.is_object()) return std::nullopt;
  mcp::ServerInfo server;
  const auto text = [&](const char* key, std::string& to) {
    if (!value.contains(key)) return true;
    if (!value[key].is_string()) return false;
    to = value[key].get<std::string>();
    return true;
  };
  if (!text("name", server.name) || !text("version", server.version) ||
      !text("protocolVersion", server.protocolVersion) ||
      !text("instructions", server.instructions)) {
    return std::nullopt;
  }
  if (value.contains("capabilities")) {
    if (!value["capabilities"].is_object()) return std::nullopt;
    server.capabilities = value["capabilities"];
  }
  return server;
}

}  // namespace

std::int64_t unixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string MetadataCache::keyOf(const Activation& activation) {
  Json what = {{"ability", activation.ability.name},
               {"transport", toString(activation.ability.transport)}};
  // A server may offer other tools at another protocol version. Added only when set, so
  // the entries of abilities without it stay where they were.
  if (!activation.ability.protocol.empty()) what["protocol"] = activation.ability.protocol;
  const Resolution& resolution = activation.resolution;
  if (resolution.launch) {
    what["argv"] = resolution.launch->argv;
    Json env = Json::array();
    // PATH differs between the terminals and apps that start kaja, and says where programs
    // are found, not what the server offers: it would make every client miss the cache.
    for (const auto& var : resolution.launch->env) {
      if (var.name != "PATH") env.push_back({var.name, var.value});
    }
    what["env"] = std::move(env);
  }
  if (resolution.remote) {
    what["url"] = resolution.remote->url;
    // Headers made afresh for each request (a sandbox token) change at every resolution.
    if (!resolution.remote->freshHeaders) what["headers"] = resolution.remote->headers;
  }
  return sha256Hex(what.dump());
}

std::string MetadataCache::fileOf(const Activation& activation) const {
  return dir_ + "/" + activation.ability.name + "-" + keyOf(activation).substr(0, 32) + ".json";
}

std::optional<CachedMetadata> MetadataCache::load(const Activation& activation) const {
  if (dir_.empty()) return std::nullopt;
  const auto text = readEntry(fileOf(activation));
  if (!text) return std::nullopt;
  const Json file = Json::parse(*text, nullptr, false);
  if (!file.is_object() || file.value("format", 0) != kFormat ||
      file.value("key", std::string()) != keyOf(activation) || !file.contains("tools") ||
      !file["tools"].is_array() || !file.contains("savedAt") ||
      !file["savedAt"].is_number_integer() || !file.contains("ttlSeconds") ||
      !file["ttlSeconds"].is_number_integer()) {
    return std::nullopt;
  }
  CachedMetadata entry;
  entry.savedAt = file["savedAt"].get<std::int64_t>();
  entry.ttlSeconds = file["ttlSeconds"].get<std::int64_t>();
  // kaja writes the time it saved and its own TTL; an entry from the future, or that claims
  // a longer life, was written by someone else.
  if (entry.savedAt > unixSeconds() + 60 || entry.ttlSeconds < 0 ||
      entry.ttlSeconds > kMetadataTtl.count()) {
    return std::nullopt;
  }
  auto server = serverFromJson(file.value("server", Json()));
  if (!server) return std::nullopt;
  entry.server = std::move(*server);
  std::set<std::string> names;
  for (const Json& raw : file["tools"]) {
    auto tool = mcp::Tool::fromJson(raw);
    if (!tool || tool->name.empty() || !names.insert(tool->name).second) return std::nullopt;
    entry.tools.push_back(std::move(*tool));
  }
  return entry;
}

std::int64_t MetadataCache::freshFor(std::optional<std::chrono::milliseconds> serverTtl) {
  if (!serverTtl) return kMetadataTtl.count();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(*serverTtl).count();
  return std::clamp<std::int64_t>(seconds, 0, kMetadataTtl.count());
}

Result<void> MetadataCache::save(const Activation& activation, const mcp::ServerInfo& server,
                                 const std::vector<mcp::Tool>& tools,
                                 std::int64_t ttlSeconds) const {
  if (dir_.empty()) return {};
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    return fail(ErrorCode::kIo,
                "could not make the metadata cache folder: " + ec.message() +
                    "; check the data folder's permissions",
                dir_);
  }
  const std::string file = fileOf(activation);
  // Something other than a file where the entry goes (a folder, a FIFO, a link) is cleared
  // away, so that it cannot block the cache for good.
  if (const auto status = fs::symlink_status(file, ec);
      !ec && fs::exists(status) && !fs::is_regular_file(status)) {
    fs::remove_all(file, ec);
  }
  ec.clear();
  Json list = Json::array();
  for (const mcp::Tool& tool : tools) list.push_back(tool.raw.is_object() ? tool.raw : Json());
  const Json entry = {{"format", kFormat},
                      {"key", keyOf(activation)},
                      {"ability", activation.ability.name},
                      {"savedAt", unixSeconds()},
                      {"ttlSeconds", std::clamp<std::int64_t>(ttlSeconds, 0, kMetadataTtl.count())},
                      {"server", serverToJson(server)},
                      {"tools", std::move(list)}};
  if (auto written = writeFileAtomically(file, entry.dump(), 0600); !written) return written;
  // Entries for the ability's earlier configurations can never be read again.
  for (const auto& old : fs::directory_iterator(dir_, ec)) {
    if (isEntryOf(old.path().filename().string(), activation.ability.name) &&
        old.path().string() != file) {
      fs::remove(old.path(), ec);
    }
  }
  return {};
}

std::vector<std::string> MetadataCache::toolNames(const std::string& ability) const {
  std::vector<std::string> names;
  if (dir_.empty() || ability.empty()) return names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (!isEntryOf(entry.path().filename().string(), ability)) continue;
    const auto text = readEntry(entry.path().string());
    if (!text) continue;
    const Json parsed = Json::parse(*text, nullptr, false);
    if (!parsed.is_object() || parsed.value("ability", std::string()) != ability ||
        !parsed.contains("tools") || !parsed["tools"].is_array()) {
      continue;
    }
    for (const Json& tool : parsed["tools"]) {
      if (!tool.is_object() || !tool.contains("name") || !tool["name"].is_string()) continue;
      const std::string name = tool["name"].get<std::string>();
      const bool plain = !name.empty() && name.size() <= 128 &&
                         std::all_of(name.begin(), name.end(), [](unsigned char c) {
                           return std::isalnum(c) != 0 || c == '_' || c == '-' || c == '.';
                         });
      if (plain) names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace kaja::core::gateway
