#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gateway/tool_catalog.h"

namespace kaja::cli {

/// Bounds of the readable view of a schema. A server's schema is untrusted: it may be huge,
/// and a `$ref` may point back at itself.
struct SchemaViewLimits {
  std::size_t maxRows = 200;  ///< argument rows shown per tool
  int maxLevels = 5;          ///< levels of dotted names ("opts.depth" is two)
};

/// One argument of a tool, flattened out of its input schema. The strings are the server's
/// text, not yet made safe for a terminal.
struct ArgumentRow {
  std::string name;  ///< dotted for a nested object ("opts.depth"), "[]" for array items
  std::string type;  ///< e.g. "string", "array of string", "string|null", "string: a|b"
  bool required = false;
  std::string description;  ///< with "(default X)" added when the schema gives one
};

/// A schema's arguments, and what the limits left out.
struct ArgumentList {
  std::vector<ArgumentRow> rows;
  bool tooMany = false;  ///< there were more than maxRows
  bool tooDeep = false;  ///< an object was nested deeper than maxLevels
};

/// Returns the arguments of the JSON Schema `schema`, the required ones first, each nested
/// object's arguments after it. Local `$ref`s ("#/$defs/x") are followed within the
/// limits; nothing else is fetched.
ArgumentList listArguments(const nlohmann::json& schema, const SchemaViewLimits& limits = {});

/// Returns a short type for `schema`, resolving local `$ref`s against `root`: "string",
/// "array of number", "string|null", "string: red|green", "object". Bounded in depth and
/// length.
std::string describeType(const nlohmann::json& schema, const nlohmann::json& root);

/// Returns the readable view of `tool` for a terminal `width` columns wide: its full name,
/// title, whether it reads, annotations, output schema in brief, description and a table of
/// its arguments. Every string from the server is escaped to be safe on a terminal.
std::string renderToolDetail(const core::gateway::CatalogTool& tool, std::size_t width,
                             const SchemaViewLimits& limits = {});

/// Returns `tool` as `kaja tools --json` prints it: its names, readOnly, schema size, and
/// description, title, inputSchema, outputSchema and annotations as the filter step passed
/// them on (each only when the server sent it).
nlohmann::json toolJson(const core::gateway::CatalogTool& tool);

/// Returns the size of `tool`'s name, description and input schema in characters.
std::size_t schemaChars(const core::gateway::CatalogTool& tool);

}  // namespace kaja::cli
