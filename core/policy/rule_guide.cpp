#include "core/policy/rule_guide.h"

#include "core/policy/refusal.h"

namespace kaja::core::policy {
namespace {

constexpr RuleGuide kGuides[] = {
    {rule::kAbilityTools,
     "the ability does not offer this tool to kaja: its manifest's tools list leaves it out, "
     "or the server is not connected",
     "for an ability of your own, add the tool to the tools list of its mcp.toml; kaja tools "
     "ABILITY shows what it offers"},
    {rule::kPersonaTools, "the persona narrows the ability to some of its tools, and not this one",
     "kaja persona add PERSONA ABILITY --tools a,b,c sets the tools it may use"},
    {rule::kReadOnlyPersona,
     "every folder the persona gives the ability is read-only, so its writing tools are left "
     "out",
     "give a folder without --read-only (kaja persona folder add PERSONA PATH)"},
    {rule::kReadOnlyFolder,
     "a path in the call's arguments lands in a folder the persona marks read-only (checked "
     "after ~, .., symlinks and look-alike spellings are resolved)",
     "write elsewhere, or give that folder without --read-only"},
    {rule::kOutsideFolders,
     "a path in the call's arguments lands outside every folder the persona gives the ability",
     "kaja persona folder add PERSONA PATH gives it another folder"},
    {rule::kRelativePath,
     "a path in the call's arguments is relative, so kaja cannot tell where it lands (that "
     "depends on the server's working folder)",
     "give the path as an absolute path or as ~/…"},
    {rule::kUnsafePath,
     "a path in the call's arguments holds a character no path kaja lets a server write may "
     "hold (a control character, an invisible or direction-changing one), or kaja cannot tell "
     "where it lands: it passes through a link in /proc (/proc/self, /dev/fd), which each "
     "process reads as its own, or through a symlink loop or a folder kaja cannot read",
     "spell the path plainly, as the absolute path it means"},
    {rule::kLinkedFile,
     "a path in the call's arguments names a file with more than one name (hard links); "
     "writing it changes the file under every name, and kaja cannot tell whether another "
     "lies in a read-only folder or in kaja's own, so it changes no such file",
     "if the file is yours to change, give it a name of its own first (cp F F.new && mv F.new "
     "F), then call again"},
    {rule::kKajaFiles,
     "the call or request names a file in kaja's own folders (its settings with the keys and "
     "sign-in tokens, its data with the audit log and backups), by any spelling, symlink or "
     "hard link: kaja gives no server those files, whatever folders the persona gives",
     "use kaja's own commands for them (kaja config, kaja audit, kaja backups); the whole "
     "text of a cut result, kept in the outputs folder, stays readable"},
    {rule::kArguments, "the arguments nest deeper than kaja checks paths in",
     "flatten the arguments; no real tool needs that depth"},
    {rule::kBackup,
     "the persona backs the folder up and kaja could not keep a copy of the file before the "
     "call changed it, so the call did not run",
     "make room in the data dir (kaja config paths shows it) or fix its permissions"},
    {rule::kApproval,
     "the call may write and needs a person's yes: it was declined, or no person could be "
     "asked (no terminal, or a client without elicitation)",
     "answer y or a at the prompt, pass --yes to kaja call, or set approval in the manifest "
     "of an ability of your own"},
    {rule::kConfirmList,
     "the tool is on the ability's confirm list: a person approves every call, and --yes or "
     "\"allow for the session\" never does",
     "approve the call at the prompt each time"},
    {rule::kPromptInjection,
     "text the server wrote for the model (a tool's name, description or schema) tries to "
     "give the model instructions, so the tool is left out",
     "report it to the server's author; kaja tools shows the finding"},
    {rule::kLocalOnlyArg,
     "the argument is local-only (the manifest's localOnlyArgs) and the server runs in a "
     "sandbox, where it would act on the sandbox's files instead of yours",
     "call the tool without that argument, or run the ability here"},
};

}  // namespace

std::span<const RuleGuide> ruleGuides() { return kGuides; }

const RuleGuide* findRuleGuide(std::string_view rule) {
  for (const auto& guide : kGuides) {
    if (guide.rule == rule) return &guide;
  }
  for (const auto& guide : kGuides) {
    const std::string_view code = guide.rule.substr(0, guide.rule.find(' '));
    if (code == rule) return &guide;
  }
  return nullptr;
}

}  // namespace kaja::core::policy
