#include "personas/docker_mounts.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/paths.h"
#include "core/util/quote.h"
#include "personas/persona_resolver.h"

namespace kaja::personas {
namespace {

// What `-v SRC:DST[:OPTIONS]` cannot carry: its fields are split at ':', and a ',' would be
// read as an option separator by `--mount`. Nor can `docker run $(kaja docker mounts)`: the
// shell splits the output at whitespace (a folder named "x --privileged" would become
// options) and expands '*', '?' and '['.
bool volumeCanCarry(const std::string& path) {
  return std::none_of(path.begin(), path.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return c == ':' || c == ',' || c == ' ' || c == '*' || c == '?' || c == '[' || byte < 0x20 ||
           byte == 0x7F;
  });
}

struct Gathered {
  std::string source;
  bool readOnly = true;
  std::set<std::string> personas;
  std::set<std::string> abilities;
};

}  // namespace

DockerMountPlan planDockerMounts(const marketplace::Catalog& catalog, const std::string& home,
                                 const std::string& ability) {
  DockerMountPlan plan;
  std::map<std::string, Gathered> folders;
  std::set<std::string> warned;
  std::set<std::string> refused;
  for (const auto& record : catalog.personas()) {
    if (!record.persona) {
      plan.warnings.push_back(
          "persona \"" + record.name + "\" is broken, so its folders are not mounted: " +
          record.error.message + (record.error.message.ends_with('.') ? "" : "."));
      continue;
    }
    for (const auto& entry : record.persona->abilities) {
      if (!ability.empty() && entry.ability != ability) continue;
      for (const auto& root : entry.roots) {
        auto resolved = resolveFolder(root.path, home);
        std::error_code ec;
        if (!resolved || !std::filesystem::is_directory(*resolved, ec)) {
          if (warned.insert(root.path).second) {
            plan.warnings.push_back(
                "skipped " + core::escapeForMessage(root.path) + " (persona \"" + record.name +
                "\"): it is not an existing folder; create " + "it, then run this again.");
          }
          continue;
        }
        // Mounted where the persona names it, so a link to /etc does not cover the image's
        // own /etc, and kaja in the container sees the folder at the path its persona says.
        const std::string target =
            std::filesystem::path(core::expandHome(root.path, home)).lexically_normal().string();
        const std::string shown = *resolved == target ? target : target + " (" + *resolved + ")";
        if (!volumeCanCarry(*resolved) || !volumeCanCarry(target)) {
          if (refused.insert(target).second) {
            plan.refused.push_back(
                "cannot mount " + core::escapeForMessage(shown) + " (persona \"" + record.name +
                "\") with -v: the path holds a space, ':', ',', '*', '?', '[' or a control "
                "character, which -v or the shell would split; mount it with --mount "
                "type=bind,\"source=PATH\",\"target=PATH\" instead, or rename it.");
          }
          continue;
        }
        Gathered& gathered = folders[target];
        gathered.source = *resolved;
        gathered.readOnly = gathered.readOnly && root.readOnly;
        gathered.personas.insert(record.name);
        gathered.abilities.insert(entry.ability);
      }
    }
  }
  for (auto& [path, gathered] : folders) {
    // A link inside another mounted folder stays a link in the container, and Docker would
    // follow it there to mount over whatever it names (the image's /etc, say).
    const bool linkInsideMount =
        gathered.source != path &&
        std::any_of(folders.begin(), folders.end(), [&](const auto& other) {
          return other.first != path && path.starts_with(other.first + "/");
        });
    if (linkInsideMount) {
      plan.refused.push_back("cannot mount " + core::escapeForMessage(path) +
                             ": it is a symlink inside another mounted folder, which Docker "
                             "would follow in the container; give the folder it points to (" +
                             core::escapeForMessage(gathered.source) + ") in the persona instead.");
      continue;
    }
    plan.mounts.push_back({gathered.source,
                           path,
                           gathered.readOnly,
                           {gathered.personas.begin(), gathered.personas.end()},
                           {gathered.abilities.begin(), gathered.abilities.end()}});
  }
  return plan;
}

std::string volumeOf(const DockerMount& mount) {
  return mount.source + ":" + mount.path + (mount.readOnly ? ":ro" : "");
}

}  // namespace kaja::personas
