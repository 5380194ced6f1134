#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kaja::core {

/// One folder a persona gives an ability (K3, K14–K16).
struct PersonaRoot {
  std::string path;  ///< as written, `~` not yet expanded
  bool readOnly = false;
  bool backup = false;
};

/// One entry of a persona's `abilities` list.
struct PersonaEntry {
  std::string ability;
  std::optional<std::vector<std::string>> tools;  ///< narrows the ability's tools (K13)
  std::vector<PersonaRoot> roots;
};

/// A parsed `marketplace/personas/<name>.toml`.
struct Persona {
  std::string name;  ///< the file name without `.toml`
  std::string path;
  bool shipped = false;
  std::string description;
  std::vector<PersonaEntry> abilities;
};

}  // namespace kaja::core
