#include "core/policy/own_files.h"

#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "core/mcp/json_rpc.h"
#include "core/paths.h"
#include "core/policy/path_resolver.h"
#include "core/util/percent.h"
#include "core/util/quote.h"
#include "core/util/unicode.h"

namespace kaja::core::policy {
namespace {

// More path-like strings than this in one call are refused rather than each resolved.
constexpr std::size_t kMaxPathsPerCall = 1024;
// A longer path cannot be opened in one system call (PATH_MAX), so it names nothing.
constexpr std::size_t kMaxPathBytes = 4096;
// Text longer than this is not folded (NFKC) in search of a path: no path is this long.
constexpr std::size_t kMaxFoldedBytes = 4 * kMaxPathBytes;
// The entries of kaja's folders read, at most, to compare with a file that has other names.
constexpr std::size_t kMaxFilesCompared = 50000;

// Returns `text` without the spaces and control characters at its ends, which URL parsers
// (WHATWG's, Node's, Python's) drop before reading a URL.
std::string_view trimUrlEdges(std::string_view text) {
  const auto edge = [](char c) { return static_cast<unsigned char>(c) <= 0x20; };
  while (!text.empty() && edge(text.front())) text.remove_prefix(1);
  while (!text.empty() && edge(text.back())) text.remove_suffix(1);
  return text;
}

// `text` as a URL parser reads it before its scheme: ends trimmed, and tabs and line breaks
// dropped anywhere, so "fi\tle:" is "file:".
std::string urlParserText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : trimUrlEdges(text)) {
    if (c != '\t' && c != '\n' && c != '\r') out += c;
  }
  return out;
}

bool startsWithFileScheme(std::string_view text) {
  // Cheap first: a file: URI holds a colon.
  if (text.find(':') == std::string_view::npos) return false;
  const std::string clean = urlParserText(text);
  return clean.size() >= 5 &&
         std::equal(clean.begin(), clean.begin() + 5, "file:", [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

// The white space Python's str.strip() and JavaScript's trim() remove, beyond ASCII: U+0085,
// U+00A0, U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF, in
// UTF-8.
constexpr std::string_view kUnicodeSpaces[] = {
    "\xC2\x85",     "\xC2\xA0",     "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x81",
    "\xE2\x80\x82", "\xE2\x80\x83", "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86",
    "\xE2\x80\x87", "\xE2\x80\x88", "\xE2\x80\x89", "\xE2\x80\x8A", "\xE2\x80\xA8",
    "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80", "\xEF\xBB\xBF"};

// Returns `text` without the white space and control characters at its ends: what a server
// that strips its input (Python's strip(), JavaScript's trim()) opens.
std::string_view trimSpaces(std::string_view text) {
  bool trimmed = true;
  while (trimmed && !text.empty()) {
    trimmed = false;
    if (static_cast<unsigned char>(text.front()) <= 0x20 || text.front() == 0x7F) {
      text.remove_prefix(1);
      trimmed = true;
    } else if (static_cast<unsigned char>(text.back()) <= 0x20 || text.back() == 0x7F) {
      text.remove_suffix(1);
      trimmed = true;
    } else {
      for (const auto space : kUnicodeSpaces) {
        if (text.starts_with(space)) {
          text.remove_prefix(space.size());
          trimmed = true;
        } else if (text.ends_with(space)) {
          text.remove_suffix(space.size());
          trimmed = true;
        }
        if (trimmed) break;
      }
    }
  }
  return text;
}

// The strings a server may take `text` for, `text` first: trimmed at its ends; with fullwidth
// and other compatibility forms folded (NFKC, so "／" is "/", "～" is "~" and "ｆｉｌｅ:" is
// "file:"); with backslashes read as slashes; percent-decoded. Each is listed once.
std::vector<std::string> readingsOf(std::string_view text) {
  std::vector<std::string> out{std::string(text)};
  const auto add = [&](std::string_view reading) {
    if (std::find(out.begin(), out.end(), reading) == out.end()) out.emplace_back(reading);
  };
  add(trimSpaces(text));
  const std::size_t plain = out.size();
  for (std::size_t i = 0; i < plain; ++i) {
    const std::string current = out[i];
    // Folding is the one costly reading, so text far longer than any path is not folded.
    if (current.size() <= kMaxFoldedBytes &&
        std::any_of(current.begin(), current.end(),
                    [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
      add(trimSpaces(unicode::nfkcCasefold(current)));
    }
    if (current.find('\\') != std::string::npos) {
      std::string slashed = current;
      std::replace(slashed.begin(), slashed.end(), '\\', '/');
      add(trimSpaces(slashed));
    }
    if (current.find('%') != std::string::npos) add(trimSpaces(percentDecode(current)));
  }
  return out;
}

// Returns true when `reading` may be meant as a path: a file: URI (any spelling a URL parser
// reads), or text that starts with `/` or `~` and has no control character, which no path a
// person types holds.
bool readsAsPath(std::string_view reading) {
  if (startsWithFileScheme(reading)) return true;
  if (reading.empty() || (reading.front() != '/' && reading.front() != '~')) return false;
  return std::none_of(reading.begin(), reading.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; });
}

std::vector<std::string> filePathsOf(std::string_view uri);

// Each reading of `text` (readingsOf) as the path a server opens: a file: URI's paths, or the
// reading itself, each listed once. With `pathLikeOnly`, readings that read as no path are
// left out.
std::vector<std::string> readingPaths(std::string_view text, bool pathLikeOnly) {
  std::vector<std::string> paths;
  const auto add = [&](std::string path) {
    if (std::find(paths.begin(), paths.end(), path) == paths.end())
      paths.push_back(std::move(path));
  };
  for (auto& reading : readingsOf(text)) {
    if (pathLikeOnly && !readsAsPath(reading)) continue;
    if (!startsWithFileScheme(reading)) {
      add(std::move(reading));
      continue;
    }
    for (auto& path : filePathsOf(reading)) add(std::move(path));
  }
  return paths;
}

// The readings of `text` that may be meant as paths, as paths. Empty when none is.
std::vector<std::string> pathReadingsOf(std::string_view text) {
  // Cheap first: most strings hold none of the characters any reading of a path starts with.
  if (text.find_first_of("/~:\\%") == std::string_view::npos &&
      std::none_of(text.begin(), text.end(),
                   [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return {};
  }
  return readingPaths(text, true);
}

bool looksLikePath(std::string_view text) { return !pathReadingsOf(text).empty(); }

// Returns `text`, trimmed, when it may be a relative path a server resolves from its working
// folder: it holds a `/` (a bare name is too common a word to guess at) and no control
// character. Empty otherwise.
std::string relativePathIn(std::string_view text) {
  if (text.find('/') == std::string_view::npos) return {};
  const std::string_view trimmed = trimSpaces(text);
  if (trimmed.empty() || std::any_of(trimmed.begin(), trimmed.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
      })) {
    return {};
  }
  return std::string(trimmed);
}

// Returns true when a component of `path` is longer than any file name (NAME_MAX), so that
// no process can open it, however it follows links.
bool hasOverlongComponent(std::string_view path) {
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end - start > 255) return true;
    start = end + 1;
  }
  return false;
}

// Returns `path` with a leading `~name/` replaced by that user's home, as Python's
// expanduser does; `~/` is left to expandHome.
std::string expandUserHome(const std::string& path) {
  if (!path.starts_with("~") || path == "~" || path.starts_with("~/")) return path;
  const std::size_t slash = path.find('/');
  const std::string name =
      path.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 ||
      found == nullptr || found->pw_dir == nullptr) {
    return path;
  }
  return std::string(found->pw_dir) + (slash == std::string::npos ? "" : path.substr(slash));
}

Refusal refusal(std::string message) {
  return Refusal{std::string(rule::kKajaFiles), std::move(message)};
}

// A path kaja cannot resolve safely (a link in /proc, a loop, too many readings): kaja cannot
// tell where it lands, so it is not handed on.
Refusal unchecked(std::string message) {
  return Refusal{std::string(rule::kUnsafePath), std::move(message)};
}

}  // namespace

std::optional<std::string> fileUriPath(std::string_view uri) {
  if (!startsWithFileScheme(uri)) return std::nullopt;
  // Read as a URL parser reads it: ends trimmed, tabs and line breaks dropped anywhere, and a
  // backslash taken for a slash.
  std::string text = urlParserText(uri).substr(5);
  std::replace(text.begin(), text.end(), '\\', '/');
  std::string_view rest = text;
  if (rest.starts_with("//")) {
    rest.remove_prefix(2);
    const std::size_t slash = rest.find('/');
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  // A query or fragment is not part of the path.
  rest = rest.substr(0, rest.find_first_of("?#"));
  std::string path = percentDecode(rest);
  // "file:home/u" is "/home/u" to a URL parser.
  return path.starts_with("/") ? path : "/" + path;
}

namespace {

// The paths a server may open for the file: URI `uri`: the URI's path, and, when the URI
// names a host, the host and path together, which a server that only strips "file://" opens
// ("file://tmp/x" is "/tmp/x" to it).
std::vector<std::string> filePathsOf(std::string_view uri) {
  std::vector<std::string> paths{*fileUriPath(uri)};
  std::string text = urlParserText(uri).substr(5);
  std::replace(text.begin(), text.end(), '\\', '/');
  if (!text.starts_with("//")) return paths;
  std::string_view rest = std::string_view(text).substr(2);
  rest = rest.substr(0, rest.find_first_of("?#"));
  std::string kept = percentDecode(rest);
  if (kept.empty() || kept.starts_with("/")) return paths;
  kept = "/" + kept;
  if (kept != paths.front()) paths.push_back(std::move(kept));
  return paths;
}

}  // namespace

OwnFiles::OwnFiles(std::vector<std::string> folders, std::vector<std::string> readable,
                   std::string home)
    : givenFolders_(std::move(folders)),
      givenReadable_(std::move(readable)),
      home_(std::move(home)) {}

void OwnFiles::resolveFolders() const {
  if (resolved_) return;
  resolved_ = true;
  for (const auto& folder : givenFolders_) {
    if (auto resolved = resolvePath(folder)) folders_.push_back({folder, std::move(*resolved)});
  }
  for (const auto& folder : givenReadable_) {
    if (auto resolved = resolvePath(folder)) readable_.push_back(std::move(*resolved));
  }
}

const OwnFiles::Folder* OwnFiles::landing(const std::string& reading) const {
  // Only the physical spelling of a readable folder is readable: an equivalent one
  // ("OUTPUTS") may be another folder on a case-sensitive disk.
  if (std::any_of(readable_.begin(), readable_.end(),
                  [&](const std::string& open) { return isWithin(reading, open); })) {
    return nullptr;
  }
  for (const auto& folder : folders_) {
    if (isWithinEquivalent(reading, folder.resolved)) return &folder;
  }
  return nullptr;
}

std::string OwnFiles::sameFileAs(const std::string& reading, bool& unsure) const {
  struct stat target {};
  if (::stat(reading.c_str(), &target) != 0 || !S_ISREG(target.st_mode) || target.st_nlink < 2) {
    return "";
  }
  // Any file in kaja's folders (its secrets, its audit log, the copies in its backups) may
  // be the other name; the whole tree is looked through once per check, up to a bound.
  if (!ownFiles_) {
    namespace fs = std::filesystem;
    ownFiles_.emplace();
    std::size_t seen = 0;
    for (const auto& folder : folders_) {
      std::error_code ec;
      fs::recursive_directory_iterator it(folder.resolved,
                                          fs::directory_options::skip_permission_denied, ec);
      if (ec) {
        // A folder not made yet holds nothing; one kaja cannot open leaves it unsure.
        if (ec != std::errc::no_such_file_or_directory) tooManyOwnFiles_ = true;
        continue;
      }
      for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (++seen > kMaxFilesCompared) {
          tooManyOwnFiles_ = true;
          break;
        }
        // The packages kaja installs for its runners hold no secret, and many files.
        std::error_code kind;
        if (it->path().filename() == "node_modules" && it->is_directory(kind)) {
          it.disable_recursion_pending();
          continue;
        }
        std::string path = it->path().string();
        struct stat own {};
        if (::lstat(path.c_str(), &own) == 0 && S_ISREG(own.st_mode)) {
          ownFiles_->emplace(std::make_pair(own.st_dev, own.st_ino), std::move(path));
        }
      }
      // A folder that could not be read through leaves kaja unsure, as too many files do.
      if (ec) tooManyOwnFiles_ = true;
    }
  }
  if (const auto found = ownFiles_->find({target.st_dev, target.st_ino});
      found != ownFiles_->end()) {
    return found->second;
  }
  unsure = tooManyOwnFiles_;
  return "";
}

std::optional<Refusal> OwnFiles::checkPath(const std::string& what, const std::string& given,
                                           bool strict, std::string_view who,
                                           bool passUnresolvable) const {
  // kaja's folders are resolved when the first path is checked: most calls name none.
  resolveFolders();
  if (folders_.empty()) return std::nullopt;
  const std::string expanded = expandUserHome(expandHome(given, home_));
  if (!expanded.starts_with("/")) return std::nullopt;
  Result<std::vector<std::string>> readings = std::vector<std::string>();
  if (expanded.size() >= kMaxPathBytes) {
    // Too long to open in one call, but a server that tidies a path first (path.resolve,
    // normpath) opens what the text collapses to.
    const std::string collapsed = collapseLexically(expanded);
    if (collapsed.size() >= kMaxPathBytes) return std::nullopt;
    readings = resolveInterpretations(collapsed);
  } else {
    readings = resolveInterpretations(expanded);
  }
  if (!readings && passUnresolvable) return std::nullopt;
  if (!readings) {
    // A name longer than any file's no process can open, so outside a path argument its text
    // alone is judged. Any other failure (a link in /proc, a loop, a folder kaja may not
    // read, more readings than kaja follows) may hide where a server lands.
    if (strict || readings.error().code == ErrorCode::kRefused || !hasOverlongComponent(expanded)) {
      return unchecked(
          what + " cannot be checked against kaja's own files: " + readings.error().message + ".");
    }
    readings = std::vector<std::string>{collapseLexically(expanded)};
  }
  for (const auto& reading : *readings) {
    if (const Folder* folder = landing(reading)) {
      return refusal(what + (reading == readings->front() ? " is in" : " may be read as ") +
                     (reading == readings->front() ? "" : quoteForMessage(reading) + ", in") +
                     " kaja's own folder " + quoteForMessage(folder->given) +
                     " (its settings, keys, audit log and backups), which kaja gives no server; " +
                     std::string(who) + " may not read or change it.");
    }
    bool unsure = false;
    const std::string same = sameFileAs(reading, unsure);
    if (unsure) {
      return refusal(what +
                     " names a file with other names (hard links), and kaja could not look "
                     "through all of its own folders (more than " +
                     std::to_string(kMaxFilesCompared) +
                     " entries, or one it cannot read) to tell that none of them is one; give "
                     "the file a name of its own (cp F F.new && mv F.new F).");
    }
    if (!same.empty()) {
      return refusal(what + " is another name (a hard link) of kaja's own file " +
                     quoteForMessage(same) + ", which kaja gives no server; " + std::string(who) +
                     " may not read or change it.");
    }
  }
  return std::nullopt;
}

std::optional<Refusal> OwnFiles::checkArguments(
    const mcp::Json& arguments, const std::vector<std::string>& pathArgs, bool refuseRelative,
    std::string_view who, const std::vector<std::string>& workingFolders) const {
  if (empty()) return std::nullopt;
  std::size_t checked = 0;
  const auto tooMany = [&] {
    return refusal("The arguments hold more than " + std::to_string(kMaxPathsPerCall) +
                   " paths, more than kaja checks against its own files in one call; send "
                   "fewer at a time.");
  };
  // The path arguments: every value is a path, however it is spelled.
  std::vector<const mcp::Json*> skipped;
  if (arguments.is_object()) {
    for (const auto& name : pathArgs) {
      const auto it = arguments.find(name);
      if (it == arguments.end()) continue;
      std::vector<const mcp::Json*> values;
      if (it->is_string()) values.push_back(&*it);
      if (it->is_array()) {
        for (const auto& value : *it) {
          if (value.is_string()) values.push_back(&value);
        }
      }
      for (const mcp::Json* value : values) {
        // Judged here; whatever else the argument holds is scanned below.
        skipped.push_back(value);
        const auto& given = value->get_ref<const std::string&>();
        if (++checked > kMaxPathsPerCall) return tooMany();
        const std::string what =
            "Argument " + name + " (" + quoteForMessage(mcp::clip(given, 200)) + ")";
        // Each reading a server may give it: as it is, trimmed, folded, decoded.
        for (const auto& path : readingPaths(given, false)) {
          if (!expandUserHome(expandHome(path, home_)).starts_with("/")) {
            if (refuseRelative) {
              return refusal(what +
                             " is a relative path; while a persona folder holds kaja's own "
                             "files, paths must be absolute or start with ~/.");
            }
            // Where it lands depends on the folder the server resolves it from: each kaja
            // knows of (its working folder, the folders it was given).
            for (const auto& folder : workingFolders) {
              if (auto refused = checkPath(what, folder + "/" + path, true, who)) return refused;
            }
            continue;
          }
          if (auto refused = checkPath(what, path, true, who)) return refused;
        }
      }
    }
  }
  // Judges `text`, a string or key outside the path arguments: each reading of it as a path,
  // else, if it may be a relative path, that path from each working folder.
  const auto judgeText = [&](const std::string& what,
                             const std::string& text) -> std::optional<Refusal> {
    const auto paths = pathReadingsOf(text);
    if (!paths.empty()) {
      if (++checked > kMaxPathsPerCall) return tooMany();
      for (const auto& path : paths) {
        if (auto refused = checkPath(what, path, false, who)) return refused;
      }
      return std::nullopt;
    }
    const std::string relative = workingFolders.empty() ? "" : relativePathIn(text);
    if (relative.empty()) return std::nullopt;
    if (++checked > kMaxPathsPerCall) return tooMany();
    for (const auto& folder : workingFolders) {
      if (auto refused = checkPath(what, folder + "/" + relative, false, who, true)) return refused;
    }
    return std::nullopt;
  };
  // Every other string that reads as a path: a server may take any argument as one.
  std::vector<std::pair<const mcp::Json*, std::string>> pending = {{&arguments, ""}};
  while (!pending.empty()) {
    auto [value, where] = std::move(pending.back());
    pending.pop_back();
    if (std::find(skipped.begin(), skipped.end(), value) != skipped.end()) continue;
    if (value->is_object()) {
      for (const auto& item : value->items()) {
        // A server may take a key as a path too (a map of paths to contents).
        if (auto refused = judgeText(
                "The argument name " + quoteForMessage(mcp::clip(item.key(), 200)), item.key())) {
          return refused;
        }
        pending.emplace_back(&item.value(), where.empty() ? item.key() : where + "." + item.key());
      }
    } else if (value->is_array()) {
      std::size_t index = 0;
      for (const auto& item : *value) {
        pending.emplace_back(&item, where + "[" + std::to_string(index++) + "]");
      }
    } else if (value->is_string()) {
      const auto& text = value->get_ref<const std::string&>();
      if (auto refused = judgeText("Argument " + quoteForMessage(mcp::clip(where, 120)) + " (" +
                                       quoteForMessage(mcp::clip(text, 200)) + ")",
                                   text)) {
        return refused;
      }
    }
  }
  return std::nullopt;
}

bool mayNamePaths(const mcp::Json& arguments, const std::vector<std::string>& pathArgs) {
  if (arguments.is_object()) {
    for (const auto& name : pathArgs) {
      const auto it = arguments.find(name);
      if (it != arguments.end() && (it->is_string() || it->is_array())) return true;
    }
  }
  std::vector<const mcp::Json*> pending = {&arguments};
  while (!pending.empty()) {
    const mcp::Json* value = pending.back();
    pending.pop_back();
    if (value->is_object()) {
      for (const auto& item : value->items()) {
        if (looksLikePath(item.key()) || !relativePathIn(item.key()).empty()) return true;
        pending.push_back(&item.value());
      }
    } else if (value->is_array()) {
      for (const auto& item : *value) pending.push_back(&item);
    } else if (value->is_string()) {
      const auto& text = value->get_ref<const std::string&>();
      if (looksLikePath(text) || !relativePathIn(text).empty()) return true;
    }
  }
  return false;
}

std::optional<Refusal> OwnFiles::checkFolder(const std::string& folder, const std::string& what,
                                             std::string_view who) const {
  if (empty()) return std::nullopt;
  return checkPath(what + " (" + quoteForMessage(mcp::clip(folder, 200)) + ")", folder, true, who);
}

std::optional<Refusal> OwnFiles::checkUri(std::string_view uri, std::string_view who) const {
  const auto path = fileUriPath(uri);
  if (!path || empty()) return std::nullopt;
  return checkPath("The URI " + quoteForMessage(mcp::clip(uri, 200)), *path, true, who);
}

}  // namespace kaja::core::policy
