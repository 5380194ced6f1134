#include "marketplace/sync/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/manifest/ability_loader.h"
#include "core/manifest/field_reader.h"
#include "core/manifest/toml_value.h"
#include "core/util/sys.h"
#include "marketplace/sync/fetch.h"
#include "marketplace/sync/verify.h"

namespace kaja::marketplace::sync {
namespace {

using core::ErrorCode;
using core::TomlValue;

constexpr const char* kHeader =
    "# The marketplaces kaja syncs, in the order they were added: a later one's ability or\n"
    "# persona takes the place of an earlier one's, and your own folder comes after all.\n"
    "# `kaja marketplace add|sync|rm` keep this file; a hand edit takes effect at the next sync.\n";

core::Result<MarketplaceEntry> readEntry(const TomlValue& value, const std::string& file,
                                         size_t index) {
  const std::string where = "marketplace[" + std::to_string(index) + "]";
  if (value.type != TomlValue::Type::kTable) {
    return core::fail(ErrorCode::kInvalidConfig,
                      where + " must be a table with name and source ([[marketplace]]).",
                      file + ":" + std::to_string(value.line));
  }
  core::FieldReader table(value, file, where);
  if (auto ok = table.onlyKeys({"name", "source", "sha256", "public_key", "signature"}); !ok) {
    return std::unexpected(ok.error());
  }
  MarketplaceEntry entry;
  KAJA_READ(entry.name, table.string("name"));
  if (!isValidMarketplaceName(entry.name)) {
    return std::unexpected(table.errorHere(
        "needs name: 1 to 64 letters, digits, '-' or '_', and not shipped, user or workspace."));
  }
  KAJA_READ(entry.source, table.string("source"));
  bool absolute = entry.source.starts_with("/") || isUrlSource(entry.source);
  if (!absolute) {
    return std::unexpected(table.errorHere("needs source: an https URL or an absolute path."));
  }
  std::optional<std::string> pin;
  KAJA_READ(pin, table.string("sha256"));
  if (pin) {
    auto parsed = parseSha256(*pin);
    if (!parsed) {
      return std::unexpected(table.errorAt(*table.get("sha256"), "sha256",
                                           "must be 64 hex digits, the archive's SHA-256."));
    }
    entry.sha256 = *parsed;
  }
  std::optional<std::string> key;
  KAJA_READ(key, table.string("public_key"));
  if (key) {
    auto parsed = parsePublicKey(*key);
    if (!parsed) {
      return std::unexpected(table.errorAt(*table.get("public_key"), "public_key",
                                           "must be the base64 of an Ed25519 public key."));
    }
    entry.publicKey = publicKeyText(*parsed);
  }
  KAJA_READ(entry.signature, table.string("signature"));
  if (!entry.sha256 && !entry.publicKey) {
    return std::unexpected(
        table.errorHere("needs sha256 or public_key: kaja syncs no marketplace unpinned."));
  }
  return entry;
}

TomlValue stringValue(const std::string& text) {
  TomlValue value;
  value.type = TomlValue::Type::kString;
  value.text = text;
  return value;
}

}  // namespace

const MarketplaceEntry* MarketplaceList::find(const std::string& name) const {
  auto it = std::find_if(entries.begin(), entries.end(),
                         [&](const MarketplaceEntry& entry) { return entry.name == name; });
  return it == entries.end() ? nullptr : &*it;
}

MarketplaceEntry* MarketplaceList::find(const std::string& name) {
  return const_cast<MarketplaceEntry*>(std::as_const(*this).find(name));
}

bool isValidMarketplaceName(const std::string& name) {
  return core::isValidName(name) && !core::isReservedName(name) && name != "shipped" &&
         name != "user" && name != "workspace";
}

core::Result<MarketplaceList> loadMarketplaceList(const core::Paths& paths) {
  MarketplaceList list;
  list.file = paths.configDir + "/marketplaces.toml";
  auto text = core::readRegularFile(list.file, std::size_t{1} << 20, list.file);
  if (!text) {
    if (text.error().code == ErrorCode::kNotFound) return list;
    core::Error error = text.error();
    error.code = ErrorCode::kInvalidConfig;
    return std::unexpected(std::move(error));
  }
  auto root = core::parseTomlText(*text, list.file);
  if (!root) return std::unexpected(root.error());
  core::FieldReader top(*root, list.file, "");
  if (auto ok = top.onlyKeys({"marketplace"}); !ok) return std::unexpected(ok.error());
  const TomlValue* array = root->find("marketplace");
  if (array == nullptr) return list;
  if (array->type != TomlValue::Type::kArray) {
    return std::unexpected(
        top.errorAt(*array, "marketplace", "must be an array of tables ([[marketplace]])."));
  }
  for (size_t i = 0; i < array->items.size(); ++i) {
    auto entry = readEntry(array->items[i], list.file, i);
    if (!entry) return std::unexpected(entry.error());
    if (list.find(entry->name) != nullptr) {
      return core::fail(ErrorCode::kInvalidConfig,
                        "names the marketplace \"" + entry->name + "\" twice; remove one.",
                        list.file + ":" + std::to_string(array->items[i].line));
    }
    list.entries.push_back(std::move(*entry));
  }
  return list;
}

core::Result<void> saveMarketplaceList(const MarketplaceList& list) {
  std::string text = kHeader;
  for (const auto& entry : list.entries) {
    TomlValue table;
    table.fields.push_back({"name", stringValue(entry.name)});
    table.fields.push_back({"source", stringValue(entry.source)});
    if (entry.sha256) table.fields.push_back({"sha256", stringValue(*entry.sha256)});
    if (entry.publicKey) table.fields.push_back({"public_key", stringValue(*entry.publicKey)});
    if (entry.signature) table.fields.push_back({"signature", stringValue(*entry.signature)});
    text += "\n[[marketplace]]\n" + core::formatToml(table);
  }
  return core::writeFileAtomically(list.file, text, 0600);
}

core::Result<ListLock> ListLock::take(const core::Paths& paths) {
  if (auto made = core::makeDirectories(paths.dataDir + "/marketplaces", 0700); !made) {
    return std::unexpected(made.error());
  }
  std::string file = paths.dataDir + "/marketplaces/.list.lock";
  ListLock lock;
  lock.fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock.fd_ < 0) return core::fail(ErrorCode::kIo, core::syscallMessage("open", file, errno));
  if (core::retryOnEintr([&] { return ::flock(lock.fd_, LOCK_EX); }) != 0) {
    return core::fail(ErrorCode::kIo, core::syscallMessage("flock", file, errno));
  }
  return lock;
}

ListLock::~ListLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::string marketplaceDir(const core::Paths& paths, const std::string& name) {
  return paths.dataDir + "/marketplaces/" + name;
}

std::string liveDir(const core::Paths& paths, const std::string& name) {
  return marketplaceDir(paths, name) + "/live";
}

std::vector<Layer> catalogLayers(const core::Paths& paths, const MarketplaceList& list) {
  std::vector<Layer> layers{{paths.shippedMarketplace, LayerKind::kShipped, ""}};
  for (const auto& entry : list.entries) {
    layers.push_back({liveDir(paths, entry.name), LayerKind::kMarketplace, entry.name});
  }
  layers.push_back({paths.userMarketplace, LayerKind::kUser, ""});
  return layers;
}

core::Result<Catalog> loadCatalog(const core::Paths& paths) {
  auto list = loadMarketplaceList(paths);
  if (!list) return std::unexpected(list.error());
  return Catalog::loadLayers(catalogLayers(paths, *list));
}

}  // namespace kaja::marketplace::sync
