#include "cli/doctor_checks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "cli/output.h"
#include "cli/prompt.h"
#include "core/manifest/field_reader.h"
#include "core/manifest/toml_value.h"
#include "core/paths.h"
#include "core/util/sys.h"
#include "core/util/unique_fd.h"
#include "personas/persona_resolver.h"

namespace kaja::cli {
namespace {

/// Where each entry of a persona file is written, to point the user at the line.
struct EntryLines {
  std::map<std::string, int> ability;                        ///< ability → line
  std::map<std::pair<std::string, std::string>, int> roots;  ///< (ability, path) → line
};

const std::string* textOf(const core::TomlValue& item, std::string_view key) {
  if (item.type == core::TomlValue::Type::kString) return &item.text;
  if (item.type != core::TomlValue::Type::kTable) return nullptr;
  const core::TomlValue* field = item.find(key);
  return field != nullptr && field->type == core::TomlValue::Type::kString ? &field->text : nullptr;
}

// The persona loaded, so the file parses; lines are a courtesy, and none is fine.
EntryLines entryLines(const std::string& file) {
  EntryLines lines;
  auto root = core::parseTomlFile(file);
  if (!root) return lines;
  const core::TomlValue* abilities = root->find("abilities");
  if (abilities == nullptr) return lines;
  for (const auto& item : abilities->items) {
    const std::string* name = textOf(item, "name");
    if (name == nullptr) continue;
    lines.ability.emplace(*name, item.line);
    const core::TomlValue* roots =
        item.type == core::TomlValue::Type::kTable ? item.find("roots") : nullptr;
    if (roots == nullptr) continue;
    for (const auto& folder : roots->items) {
      if (const std::string* path = textOf(folder, "path")) {
        lines.roots.emplace(std::make_pair(*name, *path), folder.line);
      }
    }
  }
  return lines;
}

// "/x/work.toml:3" → 3.
int lineOf(const std::string& context) {
  size_t colon = context.rfind(':');
  if (colon == std::string::npos || colon + 1 == context.size()) return 0;
  int line = 0;
  for (char c : context.substr(colon + 1)) {
    if (c < '0' || c > '9' || line > 1'000'000) return 0;
    line = line * 10 + (c - '0');
  }
  return line;
}

bool hasDotParts(const std::string& path) {
  for (const auto& part : std::filesystem::path(path)) {
    if (part == "." || part == "..") return true;
  }
  return false;
}

// The first symlink in `path` whose target is missing, or nullopt.
std::optional<std::pair<std::string, std::string>> danglingLink(const std::string& path) {
  std::string prefix;
  for (const auto& part : std::filesystem::path(path).relative_path()) {
    prefix += "/" + part.string();
    struct stat info {};
    if (::lstat(prefix.c_str(), &info) != 0) return std::nullopt;
    if (!S_ISLNK(info.st_mode)) continue;
    if (::stat(prefix.c_str(), &info) == 0) continue;
    std::string target(PATH_MAX, '\0');
    ssize_t size = ::readlink(prefix.c_str(), target.data(), target.size());
    target.resize(size > 0 ? static_cast<size_t>(size) : 0);
    return std::make_pair(prefix, target);
  }
  return std::nullopt;
}

// What is wrong with one folder a persona gives `ability`, if anything.
std::optional<PersonaProblem> checkFolder(const PersonaProblem& base, const std::string& ability,
                                          const std::string& written) {
  PersonaProblem problem = base;
  problem.written = written;
  problem.folder = core::expandHome(written, core::homeDir());
  const std::string gives = "gives " + ability + " " + written + ", which ";
  struct stat info {};
  if (::stat(problem.folder.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return std::nullopt;
    problem.kind = "not-a-folder";
    problem.detail = gives + "is a file, not a folder; give it a folder instead.";
    return problem;
  }
  const int err = errno;
  if (err != ENOENT && err != ENOTDIR) {
    problem.kind = "unreachable-folder";
    problem.detail = gives + "kaja cannot reach (" + std::strerror(err) +
                     "); fix the permissions of the folders above it.";
    return problem;
  }
  problem.kind = "missing-folder";
  if (auto link = danglingLink(problem.folder)) {
    problem.detail = gives + "does not exist: " + tildePath(link->first) + " is a symlink to " +
                     link->second + ", which is missing; create that or fix the path.";
    return problem;
  }
  if (err == ENOTDIR) {
    problem.kind = "not-a-folder";
    problem.detail = gives + "cannot exist, since a part of it is a file; fix the path.";
    return problem;
  }
  problem.creatable = !hasDotParts(problem.folder);
  const std::string mkdir = "mkdir -p " + shellWord(written);
  problem.command = mkdir;
  problem.detail = base.shipped ? gives +
                                      "does not exist on this machine; it is left out until "
                                      "you create it with " +
                                      mkdir + "."
                                : gives + "does not exist; create it with " + mkdir + ".";
  return problem;
}

void checkEntry(const Context& context, const PersonaProblem& base, const EntryLines& lines,
                const core::PersonaEntry& entry, std::vector<PersonaProblem>& problems) {
  PersonaProblem here = base;
  if (auto line = lines.ability.find(entry.ability); line != lines.ability.end()) {
    here.line = line->second;
  }
  const marketplace::AbilityRecord* record = context.catalog.findAbilityRecord(entry.ability);
  if (record == nullptr) {
    std::vector<std::string_view> names;
    for (const auto& ability : context.catalog.abilities()) names.push_back(ability.name);
    std::string near = core::nearestWord(entry.ability, std::span(names.data(), names.size()));
    here.kind = "unknown-ability";
    here.detail = "lists \"" + entry.ability + "\", which is no ability" +
                  (near.empty() ? "; fix the name or remove it (`kaja abilities` lists them)."
                                : "; did you mean \"" + near + "\"?");
    problems.push_back(std::move(here));
    return;
  }
  if (!record->ability) {
    here.kind = "broken-ability";
    here.detail =
        "lists \"" + entry.ability + "\", whose mcp.toml does not load; its row above says why.";
    problems.push_back(std::move(here));
    return;
  }
  const bool guarded = std::any_of(entry.roots.begin(), entry.roots.end(),
                                   [](const auto& root) { return root.readOnly || root.backup; });
  if (guarded && record->ability->pathArgs.empty()) {
    // The persona's rules cannot be kept, whoever shipped the persona: the ability stays off.
    PersonaProblem unguarded = here;
    unguarded.kind = "unguarded-folders";
    unguarded.fails = true;
    unguarded.detail =
        "gives " + entry.ability + " read-only or backed-up folders, but its manifest (" +
        record->ability->manifestPath +
        ") names no pathArgs, so kaja could not keep it to them and leaves it off; add "
        "pathArgs and roots = true to that manifest, or drop --read-only and --backup.";
    problems.push_back(std::move(unguarded));
  }
  for (const auto& root : entry.roots) {
    PersonaProblem folderBase = base;
    if (auto line = lines.roots.find({entry.ability, root.path}); line != lines.roots.end()) {
      folderBase.line = line->second;
    } else {
      folderBase.line = here.line;
    }
    if (auto problem = checkFolder(folderBase, entry.ability, root.path)) {
      problems.push_back(std::move(*problem));
    }
  }
}

// The persona chosen with `kaja persona use` must still exist.
void checkActive(const Context& context, std::vector<PersonaProblem>& problems) {
  const std::string file = context.paths.configDir + "/persona";
  if (!core::readTextFile(file)) return;
  const std::string name = personas::activePersona(context.paths.configDir);
  const auto& records = context.catalog.personas();
  if (std::any_of(records.begin(), records.end(),
                  [&](const marketplace::PersonaRecord& record) { return record.name == name; })) {
    return;
  }
  PersonaProblem problem;
  problem.kind = "unknown-active";
  problem.persona = name;
  problem.file = file;
  problem.fails = true;
  problem.detail =
      "is the one chosen with `kaja persona use`, but there is no such persona; choose another "
      "with `kaja persona use NAME` (`kaja personas` lists them).";
  problems.push_back(std::move(problem));
}

}  // namespace

std::vector<PersonaProblem> checkPersonas(const Context& context,
                                          const std::vector<std::string>& only) {
  std::vector<PersonaProblem> problems;
  for (const auto& record : context.catalog.personas()) {
    PersonaProblem base;
    base.persona = record.name;
    base.file = record.file;
    base.shipped = record.shipped;
    // Whoever wrote a shipped persona did not know this machine: its problems are hints.
    base.fails = !record.shipped;
    if (!record.persona) {
      if (!only.empty()) continue;
      base.kind = "broken";
      base.line = lineOf(record.error.context);
      base.detail = "does not load, so no command can use it: " + record.error.message;
      problems.push_back(std::move(base));
      continue;
    }
    const EntryLines lines = entryLines(record.file);
    for (const auto& entry : record.persona->abilities) {
      if (!only.empty() && std::find(only.begin(), only.end(), entry.ability) == only.end()) {
        continue;
      }
      checkEntry(context, base, lines, entry, problems);
    }
  }
  if (only.empty()) checkActive(context, problems);
  // What the user must fix reads first; hints about shipped personas follow.
  std::stable_partition(problems.begin(), problems.end(),
                        [](const PersonaProblem& problem) { return problem.fails; });
  return problems;
}

std::string describe(const PersonaProblem& problem) {
  std::string where = tildePath(problem.file);
  if (problem.line > 0) where += ":" + std::to_string(problem.line);
  if (problem.shipped) where = "shipped, " + where;
  return "persona \"" + problem.persona + "\" (" + where + ") " + problem.detail;
}

nlohmann::json personasJson(const std::vector<PersonaProblem>& problems) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& problem : problems) {
    nlohmann::json item = {{"kind", problem.kind},
                           {"persona", problem.persona},
                           {"file", problem.file},
                           {"line", problem.line > 0 ? nlohmann::json(problem.line) : nullptr},
                           {"detail", problem.detail},
                           {"shipped", problem.shipped},
                           {"fails", problem.fails}};
    if (!problem.folder.empty()) {
      item["folder"] = problem.folder;
      item["created"] = problem.created;
    }
    out.push_back(std::move(item));
  }
  return out;
}

void printPersonaSection(const std::vector<PersonaProblem>& problems, size_t checked) {
  if (problems.empty()) {
    if (checked > 0) {
      std::printf(
          "\nPersonas: %zu checked; each loads, names abilities that exist and gives "
          "folders that exist.\n",
          checked);
    }
    return;
  }
  const bool colourful = useColour(stdout);
  std::printf("\nPersonas:\n");
  for (const auto& problem : problems) {
    const std::string label = problem.fails ? "problem" : "hint";
    // The command is kept on one line, so it can be copied as it is.
    std::string text = oneLine(describe(problem));
    const std::string command = oneLine(problem.command);
    std::string glued = command;
    std::replace(glued.begin(), glued.end(), ' ', '\x01');
    if (size_t at = command.empty() ? std::string::npos : text.find(command);
        at != std::string::npos) {
      text.replace(at, command.size(), glued);
    }
    auto lines = wrapWords(text, 96 - label.size());
    for (auto& line : lines) std::replace(line.begin(), line.end(), '\x01', ' ');
    std::printf("  %s %s\n", colour(label + ":", problem.fails ? "31" : "33", colourful).c_str(),
                lines[0].c_str());
    for (size_t i = 1; i < lines.size(); ++i) {
      std::printf("  %*s%s\n", static_cast<int>(label.size() + 2), "", lines[i].c_str());
    }
  }
}

void offerFolders(std::vector<PersonaProblem>& problems) {
  std::vector<std::string> asked;
  for (auto& problem : problems) {
    if (!problem.creatable || problem.created) continue;
    if (std::find(asked.begin(), asked.end(), problem.folder) != asked.end()) continue;
    asked.push_back(problem.folder);
    if (!askYesNo("create " + oneLine(problem.written) + "?")) continue;
    if (auto made = createFolder(problem.folder); !made) {
      printError(made.error());
      continue;
    }
    std::fprintf(stderr, "kaja: created %s (mode 0700).\n", oneLine(problem.written).c_str());
    for (auto& same : problems) {
      if (same.folder == problem.folder) same.created = true;
    }
  }
}

core::Result<void> createFolder(const std::string& folder) {
  const std::string shown = tildePath(folder);
  if (folder.empty() || folder.front() != '/' || hasDotParts(folder)) {
    return core::fail(core::ErrorCode::kUsage,
                      "doctor creates only absolute folders without "
                      "\".\" or \"..\" in them, not " +
                          shown + "; create it yourself.");
  }
  // Walk down what exists; the parts below it are made here.
  std::filesystem::path existing("/");
  std::vector<std::string> missing;
  for (const auto& part : std::filesystem::path(folder).relative_path()) {
    if (part.empty()) continue;
    if (!missing.empty()) {
      missing.push_back(part.string());
      continue;
    }
    std::filesystem::path next = existing / part;
    struct stat info {};
    if (::lstat(next.c_str(), &info) != 0) {
      if (errno != ENOENT) {
        return core::fail(core::ErrorCode::kIo,
                          "could not create " + shown + ": " +
                              core::syscallMessage("lstat", next.string(), errno) + ".");
      }
      missing.push_back(part.string());
      continue;
    }
    if (::stat(next.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      return core::fail(core::ErrorCode::kIo,
                        "could not create " + shown + ": " + tildePath(next.string()) +
                            " is not a folder (or a symlink to a missing one); nothing was "
                            "created.");
    }
    existing = next;
  }
  core::UniqueFd dir(::open(existing.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    return core::fail(core::ErrorCode::kIo,
                      "could not create " + shown + ": " +
                          core::syscallMessage("open", existing.string(), errno) + ".");
  }
  std::filesystem::path made = existing;
  for (const auto& part : missing) {
    made /= part;
    if (::mkdirat(dir.get(), part.c_str(), 0700) != 0 && errno != EEXIST) {
      return core::fail(core::ErrorCode::kIo,
                        "could not create " + shown + ": " +
                            core::syscallMessage("mkdir", made.string(), errno) + ".");
    }
    // O_NOFOLLOW: a symlink put here since the mkdir is not followed somewhere else.
    core::UniqueFd next(
        ::openat(dir.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      return core::fail(core::ErrorCode::kIo,
                        "could not create " + shown + ": " +
                            core::syscallMessage("open", made.string(), errno) +
                            "; it may have been replaced by a symlink, which doctor does not "
                            "follow.");
    }
    dir = std::move(next);
  }
  return {};
}

std::string tildePath(const std::string& path) {
  const std::string home = core::homeDir();
  if (home.empty() || home == "/") return path;
  if (path == home) return "~";
  if (path.starts_with(home) && path[home.size()] == '/') return "~" + path.substr(home.size());
  return path;
}

std::string shellWord(const std::string& path) {
  auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && std::strchr("/._-+,:@%=", c) != nullptr);
  };
  std::string_view rest(path);
  std::string out;
  if (rest.starts_with("~/") || rest == "~") {
    out = std::string(rest.substr(0, std::min<size_t>(2, rest.size())));
    rest.remove_prefix(out.size());
  }
  if (std::all_of(rest.begin(), rest.end(), plain)) return out + std::string(rest);
  out += '\'';
  for (char c : rest) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + '\'';
}

}  // namespace kaja::cli
