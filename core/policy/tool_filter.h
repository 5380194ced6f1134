#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/manifest/ability.h"
#include "core/manifest/persona.h"
#include "core/mcp/types.h"
#include "core/policy/injection_scanner.h"
#include "core/policy/refusal.h"

namespace kaja::core::policy {

/// A tool the filter kept from the model, and why.
struct DroppedTool {
  std::string name;
  Refusal refusal;
  std::vector<InjectionFinding> findings;  ///< set when the rule is T7
};

/// The filter step's result: the tools to offer, in server order, and the dropped ones.
struct FilteredTools {
  std::vector<mcp::Tool> offered;
  std::vector<DroppedTool> dropped;
};

/// Returns true when `entry` gives folders and every one of them is read-only (K15).
bool allFoldersReadOnly(const PersonaEntry& entry);

/// The first step of the pipeline: returns the server's `tools` minus, in this order, the
/// ones not in the ability's `tools` allow-list (K1), not in the persona entry's `tools`
/// (K13), writing tools (see isWritingTool) when every folder the entry gives is read-only
/// (K15), and tools whose model-facing text has a prompt-injection finding (T7). The offered
/// tools are copies with invisible characters (see stripInvisible) taken out of every string
/// but the name, so the model is shown exactly the text that was scanned.
/// `entry` may be null (no persona narrows the ability); it is not kept.
FilteredTools filterTools(const Ability& ability, const PersonaEntry* entry,
                          const std::vector<mcp::Tool>& tools, const ScanLimits& limits = {});

/// For an ability that runs in a sandbox worker (K24): takes each of its `localOnlyArgs` out
/// of every offered tool's input schema (`properties` and `required`, in `inputSchema` and
/// in `raw`), so the model is never shown an argument that would act on the sandbox's files.
void hideLocalOnlyArgs(const Ability& ability, FilteredTools& tools);

/// For an ability that runs in a sandbox worker (K24): returns the refusal for a call whose
/// `arguments` pass one of its `localOnlyArgs`, or nullopt when they pass none.
std::optional<Refusal> localOnlyArgRefusal(const Ability& ability, const std::string& tool,
                                           const mcp::Json& arguments);

}  // namespace kaja::core::policy
