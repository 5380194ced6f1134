#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/help.h"
#include "cli/output.h"
#include "core/manifest/field_reader.h"
#include "core/process/guardian.h"
#include "core/process/subreaper.h"
#include "core/process/temp_folder.h"
#include "core/process/termination_signals.h"

namespace kaja::cli {
namespace {

constexpr Command kCommands[] = {
    {"doctor", "doctor [--json] [--verbose] [--timeout S] [NAME...]",
     "connect every ability and report what works",
     "Connects every ability (or only those named) in parallel, at most 4 stdio servers\n"
     "starting at once, each given 10 s, and prints one row each:\n"
     "  ok        connected; TOOLS is what it offers (offered/listed when its manifest's\n"
     "            tools list narrows it), SCHEMA the size of those tools' schemas in tokens\n"
     "  failed    it did not start or answer; NOTE says why (--verbose adds its stderr)\n"
     "  off       it needs something first: a key (on a terminal doctor offers to add one),\n"
     "            or folders from a persona for a roots server\n"
     "  left-out  nothing here can start it; NOTE says what to install\n"
     "  refused   the stdio allow-list ([stdio] in config.toml) does not allow its command\n"
     "            line; NOTE says how to allow it\n"
     "An ability of your own whose command is missing (not on PATH, or no such file) is\n"
     "failed, not left-out: you wrote it. A crashed server's NOTE quotes the stderr line\n"
     "that says why (an Error: or exception line), not a runtime banner or stack frame.\n"
     "Roots servers get every folder any persona gives them.\n"
     "Doctor remembers the CPU each server needed to start; next time the servers that\n"
     "were cheap start at lower priority so the costliest gets the cores first (their\n"
     "TIME then has a *).\n\n"
     "Then it checks the personas, one line per problem with its file and line: a file\n"
     "that does not load (an unknown key, with the key it may mean), an ability that does\n"
     "not exist or does not load, a folder that does not exist (with the mkdir -p that\n"
     "creates it) or is no folder, and a persona chosen with kaja persona use that is\n"
     "gone. With NAMEs, only the entries for those abilities are checked. Problems in your\n"
     "own personas count as failures; in shipped ones they are hints, since a shipped\n"
     "persona's folder need not exist on every machine. On a terminal doctor asks before\n"
     "creating each missing folder (mode 0700, parents too); it follows a symlink that\n"
     "leads to a folder, never a dangling one. Without a terminal it asks and creates\n"
     "nothing.\n\n"
     "Exit status: 0 when every ability that is on connected and your personas have no\n"
     "problems, 1 otherwise.\n\n"
     "Options:\n"
     "  --json     print {\"ok\", \"abilities\": [...], \"warnings\", \"personas\": [...]}\n"
     "             instead; each persona problem has kind, persona, file, line, detail,\n"
     "             shipped and fails\n"
     "  --verbose  show each failed server's stderr\n"
     "  --timeout S  give each server S seconds to start and list its tools (default 10)\n",
     runDoctor},
    {"abilities", "abilities [--json]", "show every ability and what it runs on this machine",
     "Lists every ability in the marketplace (shipped and your own) with its state:\n"
     "  on        it can start (or be reached) here\n"
     "  off       it needs something from you first, such as an API key\n"
     "  left-out  nothing here can start it; the row says what to install\n"
     "  refused   the stdio allow-list ([stdio] in config.toml) does not allow its command\n"
     "            line; the row says how to allow it\n"
     "  broken    its mcp.toml has an error; the row says which line\n"
     "and the runner it gets (bunx, npx, uvx, pipx, docker, command or remote) with the exact\n"
     "command line (env var names, never values) or URL.\n\n"
     "Options:\n  --json    print an array of objects instead of a table\n",
     runAbilities},
    {"tools", "tools [--persona P] [--json] [ABILITY [TOOL]]",
     "list the tools a persona offers the model",
     "Connects the persona's abilities and lists the tools it offers, named\n"
     "mcp__<ability>__<tool>, after every filter: the manifest's tools list, the persona's\n"
     "tools list, writing tools of an ability whose folders are all read-only, and tools\n"
     "whose text carries a prompt injection (each left out with its rule). READ says\n"
     "whether a call is a read; SCHEMA is the tool's schema size in tokens (about 4\n"
     "characters each). A long name wraps onto the next line. Warns above 40 tools.\n\n"
     "kaja tools ABILITY [TOOL]\n"
     "    connects only ABILITY and shows each of its tools (or TOOL, by its own name or\n"
     "    its mcp__ name) in full: title, annotations, output schema, description and one\n"
     "    row per argument (nested ones as opts.depth) with its type, whether it is\n"
     "    required, and its description and default. A tool a rule left out is named with\n"
     "    the rule (exit 3); an unknown ability or tool is a usage error (exit 2).\n\n"
     "Options:\n  --persona P  use persona P instead of the active one\n"
     "  --json       print an object with tools (each with inputSchema, and outputSchema\n"
     "               and annotations as the server sent them), dropped, failed and skipped\n",
     runTools},
    {"call", "call [--persona P] [--yes] [--json] ABILITY TOOL [ARGS]",
     "run one tool call through kaja's policy",
     "Runs one call through the whole pipeline: filter, approval, folder check, backup,\n"
     "the call, output guard and audit. ARGS is a JSON object. On a terminal, calls that\n"
     "need approval are asked (y = yes, n = no, a = yes to this tool for the session);\n"
     "without one they are declined unless --yes is given. ABILITY kaja serves\n"
     "list_backups and restore_backup for personas with backed-up folders.\n\n"
     "Exit status: 0 done, 1 the tool returned an error, 2 usage or config error (an\n"
     "ability, tool or persona that does not exist, with the nearest name), 3 refused by a\n"
     "rule or declined (the reason as `kaja: refused: …`, with the rule that kaja help\n"
     "rules explains), 4 could not connect.\n\n"
     "Options:\n  --persona P  use persona P instead of the active one\n"
     "  --yes        approve every call that asks (not confirm-listed tools)\n"
     "  --json       print the raw MCP result; copies kept before the call are listed\n"
     "               under _meta[\"kaja/backups\"]\n",
     runCall},
    {"backups", "backups [--json] [PATH] | backups restore [--json] PATH [STAMP]",
     "list the copies kaja kept before calls changed files, or put one back",
     "kaja backups [PATH]\n"
     "    lists every copy kaja kept of a file in a folder with backup = true before a\n"
     "    call changed it, newest first: the time (this machine's clock), the size, the\n"
     "    stamp and the file, then the total. With PATH (absolute, ~/… or relative to\n"
     "    here), only that file's copies\n"
     "kaja backups restore PATH [STAMP]\n"
     "    puts copy STAMP (the newest when none is given) back at PATH. The file it\n"
     "    replaces is kept as a copy first, so running the same command again undoes the\n"
     "    restore. The copy replaces the file in one rename, with the file's mode. A\n"
     "    symbolic link or a folder at PATH, and paths in kaja's own folders, are refused;\n"
     "    a STAMP that is no copy of PATH is a usage error that lists the ones there are.\n"
     "    Each restore writes an audit row (kaja restore_backup)\n\n"
     "Read-only folders of a persona limit what a model's calls may change; a restore you\n"
     "type yourself is not held to them.\n\n"
     "Options:\n"
     "  --json    print {\"copies\": [{\"path\", \"stamp\", \"time\", \"size\", \"copy\"}],\n"
     "            \"files\", \"bytes\"}, or for restore {\"path\", \"restored\", \"kept\"}\n",
     runBackups},
    {"audit", "audit [--since DURATION] [--ability A] [--limit N | --all] [--json]",
     "show the audit log: one row per call",
     "Prints the audit log, one row per call as kaja wrote it, newest last: the time (this\n"
     "machine's clock), the decision (allowed, refused, declined or failed), how long it\n"
     "took, the persona, the ability and tool, and a note with the rule that refused it,\n"
     "the size of the result and the names of the arguments (never their values). Lines\n"
     "of the log that are not rows (damaged or cut off) are skipped and counted in one\n"
     "warning. A large log is read from its end, never whole.\n\n"
     "Options:\n  --since DURATION  only calls in the last DURATION: 90s, 30m, 1h, 2d, 1w or\n"
     "                    a run of them such as 1h30m\n"
     "  --ability A       only calls to ability A (kaja for its own tools)\n"
     "  --limit N         the last N rows that match (default 50)\n"
     "  --all             every row that matches\n"
     "  --json            print each row as the JSON line the log holds instead\n",
     runAudit},
    {"serve",
     "serve [--persona P] [--names prefixed|bare] [--proxy] [--approval-timeout S] "
     "[--http HOST:PORT [--token-file F] [--allow-origin O,…]]",
     "offer the persona's tools to any MCP client, through kaja's policy",
     "Serves the persona as one MCP server on stdin/stdout, for an agent to start (Claude\n"
     "Code, Cursor, VS Code, Goose). Every tool call passes the same rules as kaja call:\n"
     "filter, approval, folder check, backup, output guard and audit. A call that needs\n"
     "approval is asked of the person through the client (elicitation); a client that\n"
     "cannot ask gets an error result that says how to approve it. Resources, prompts,\n"
     "completion, logging, progress and cancellation pass through. kaja follows changes\n"
     "to manifests, personas and `kaja persona use` without a restart, and tells the\n"
     "client the tools changed.\n\n"
     "Options:\n  --persona P   serve persona P instead of the active one (and do not follow\n"
     "                `kaja persona use`)\n"
     "  --names N     prefixed (default): tools are named ABILITY__TOOL, so no server can\n"
     "                shadow another's; bare: the servers' own names, refused at start\n"
     "                when two abilities offer the same name\n"
     "  --proxy       offer one tool, mcp, that searches, describes and calls the others:\n"
     "                a persona with hundreds of tools then costs a model a few hundred\n"
     "                tokens of schema\n"
     "  --approval-timeout S  how long a person has to answer an approval the client asks\n"
     "                (default 300 seconds, at most a day); no answer in time is a refusal,\n"
     "                and the client is told to drop the question\n"
     "  --http HOST:PORT  speak Streamable HTTP at http://HOST:PORT/mcp instead of stdio\n"
     "                (port 0 picks a free one; kaja prints where it listens on stderr).\n"
     "                Each client gets its own session; loopback only unless given\n"
     "  --token-file F  a file whose first line is the bearer token every request must\n"
     "                carry (required for an address other machines can reach)\n"
     "  --allow-origin O,…  browser origins allowed besides loopback (others get 403)\n",
     runServe},
    {"personas", "personas [--json]", "list personas with their abilities and folders",
     "Lists every persona (shipped and your own): its abilities, the tools each is narrowed\n"
     "to, and the folders it gives them. The active one is marked with *.\n\n"
     "Options:\n  --json    print an array of objects instead\n",
     runPersonas},
    {"persona", "persona use|new|add|remove|folder …", "switch personas, or change one",
     "kaja persona use NAME\n"
     "    makes NAME the active persona (saved in the config dir); commands that act for a\n"
     "    persona use it unless given --persona\n"
     "kaja persona new NAME [--from P] [--description TEXT]\n"
     "    creates an empty persona, or a copy of persona P\n"
     "kaja persona add P ABILITY [--tools a,b]\n"
     "    lists ABILITY in persona P, narrowed to those tools when given (when it is listed\n"
     "    already, --tools replaces its tools and its folders stay)\n"
     "kaja persona remove P ABILITY\n"
     "    takes ABILITY out of P, with its tools and folders (it stays installed)\n"
     "kaja persona folder add P PATH [--ability A] [--read-only] [--backup]\n"
     "    gives a folder to the ability of P that takes folders (roots = true in its\n"
     "    manifest, like filesystem); name it with --ability when P has several. PATH is\n"
     "    absolute or ~/…; --read-only hides the writing tools, --backup keeps a copy of\n"
     "    each file before it changes. Given again, the same PATH gets the new flags\n"
     "kaja persona folder rm P PATH [--ability A]\n"
     "    takes the folder away\n\n"
     "A changed persona is written to your marketplace (kaja config paths) through the\n"
     "persona loader, and replaced only when it loads. Changing a shipped persona writes\n"
     "your own copy, which takes the shipped one's place. The file is rewritten from what\n"
     "it means, so comments in your own persona file are not kept.\n",
     runPersona},
    {"enable", "enable ABILITY [--tools a,b]", "turn an ability on in the active persona",
     "Lists ABILITY in the active persona: kaja persona add ACTIVE ABILITY.\n\n"
     "Options:\n  --tools a,b  narrow it to these tools\n",
     runEnable},
    {"disable", "disable ABILITY", "turn an ability off in the active persona",
     "Takes ABILITY out of the active persona, with the tools and folders it gave it:\n"
     "kaja persona remove ACTIVE ABILITY. The ability stays installed.\n",
     runDisable},
    {"add", "add NAME (-- COMMAND ARGS… | URL | --npm PKG@VER) [OPTIONS]",
     "add an ability of your own",
     "kaja add NAME [--env K=V]… -- COMMAND ARGS…   a server kaja starts (stdio)\n"
     "kaja add NAME URL [--transport http|sse] [--header 'K: V']…   a remote server\n"
     "kaja add NAME --npm PACKAGE@VERSION [--env K=V]… [-- ARGS…]   an npm package,\n"
     "    run with bunx or npx (the version must be pinned)\n\n"
     "Writes <your marketplace>/abilities/NAME/mcp.toml (kaja config paths shows where).\n"
     "The manifest passes the same loader as any other before it is put in place; when it\n"
     "does not, nothing is written and the error names the line. NAME is 1-64 of A-Z, a-z,\n"
     "0-9, - and _, not starting with -. A secret-looking value (an --env name holding\n"
     "KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL, or an Authorization or *Key*/*Token*\n"
     "header) goes to the secrets file (mode 0600) as the ability's key, never into the\n"
     "manifest; a manifest references one key, so a second secret value is refused. A\n"
     "remote ability sends no header but its key's. Turn the new ability on with kaja\n"
     "enable NAME.\n\n"
     "Options:\n  --env K=V        set a variable for the server (repeatable)\n"
     "  --header 'K: V'  the key header of a remote server (Authorization: Bearer …)\n"
     "  --transport T    http (Streamable HTTP, the default) or sse\n"
     "  --npm PKG@VER    run this npm package instead of a command\n"
     "  --description T  one line about what it does\n"
     "  --force          replace an ability of the same name (yours, or a shipped one,\n"
     "                   which your own then replaces)\n",
     runAdd},
    {"add-json", "add-json NAME 'JSON' [--force]",
     "add an ability from a Claude Code mcpServers entry",
     "Takes one server's entry as Claude Code, Claude Desktop and Cursor keep them in\n"
     "mcpServers: {\"command\", \"args\", \"env\"} for a server kaja starts, or {\"type\":\n"
     "\"http\"|\"sse\", \"url\", \"headers\"} for a remote one, and writes it as kaja add\n"
     "does, with the same rules for names, secrets and --force. \"cwd\" becomes the\n"
     "manifest's cwd: an absolute path or one under ~/. Malformed JSON is refused with its\n"
     "line and column.\n",
     runAddJson},
    {"import", "import claude|claude-desktop|cursor|vscode|PATH [OPTIONS]",
     "add the servers an MCP client's files list",
     "Reads the servers a client keeps and writes each as your own ability, as add-json\n"
     "does with one entry (the same rules for names and secrets):\n"
     "  claude          ~/.claude.json's servers for this folder, ./.mcp.json, then\n"
     "                  ~/.claude.json's own mcpServers (the first of a name wins, as in\n"
     "                  Claude Code)\n"
     "  claude-desktop  ~/.config/Claude/claude_desktop_config.json\n"
     "  cursor          ./.cursor/mcp.json, then ~/.cursor/mcp.json\n"
     "  vscode          ./.vscode/mcp.json, then ~/.config/Code/User/mcp.json (servers)\n"
     "  PATH            any such file: its mcpServers, or servers as VS Code writes them\n"
     "                  (./cursor for a file named like a client)\n\n"
     "command, args, env, cwd, type, url and headers are kept; ${VAR} and ${VAR:-default}\n"
     "stay as written (kaja does not expand them); a secret value goes to the secrets file\n"
     "(mode 0600), and a secret given as ${VAR} or ${input:id} waits for kaja key set.\n"
     "VS Code's ${workspaceFolder} and ${userHome} are filled in. A name that is not an\n"
     "ability name becomes one (\"my server\" is my-server). A server is skipped, with\n"
     "the reason, when its name is taken, it exists already (unless --force), or it holds\n"
     "what kaja cannot keep (a second key, a header that is no key, a relative cwd in a\n"
     "file of no project). Every server is checked before anything is written: a file\n"
     "that is not JSON (line and column), not a regular file, larger than 64 MiB or\n"
     "without servers writes nothing. Comments and trailing commas are allowed.\n\n"
     "Options:\n  --dry-run  print what would be imported and skipped; write nothing\n"
     "  --force    replace abilities of the same name (yours, or shipped ones)\n"
     "  --enable   also list each imported ability in the active persona\n"
     "  --json     print {\"dryRun\", \"imported\": [{\"server\", \"name\", \"from\",\n"
     "             \"scope\", \"runs\", \"key\", \"keyName\", \"notes\"}], \"skipped\":\n"
     "             [{\"server\", \"name\", \"from\", \"scope\", \"reason\"}]}\n",
     runImport},
    {"marketplace", "marketplace add|sync|list|rollback|rm …",
     "share abilities as a pinned or signed archive",
     "kaja marketplace add NAME SOURCE (--sha256 HEX | --public-key KEY) [--signature S]\n"
     "    fetches SOURCE (an https URL, an http one on 127.0.0.1 or ::1, or an archive's\n"
     "    path), checks it, unpacks it and makes its abilities and personas a layer above\n"
     "    the shipped ones and below yours\n"
     "kaja marketplace sync [NAME] [--sha256 HEX]\n"
     "    fetches each marketplace again (or NAME; --sha256 moves its pin to a new archive)\n"
     "kaja marketplace list [--json]      each one's source, pin and last sync\n"
     "kaja marketplace rollback NAME      goes back to the copy synced before (a pinned one\n"
     "                                    is pinned to it, so a sync keeps it)\n"
     "kaja marketplace rm NAME            removes it and its synced copies\n\n"
     "An archive is a .tar.gz, .tar.zst, .tar.xz or .zip holding abilities/NAME/mcp.toml\n"
     "and personas/NAME.toml, at its root or under one top folder. It is pinned by its\n"
     "SHA-256, or signed with Ed25519: the signature (64 bytes, raw or base64) is fetched\n"
     "from SOURCE.sig unless --signature names it, and KEY is a PEM public key, its file,\n"
     "or the base64 of its 32 bytes. Absolute names, .., links out, devices and archive\n"
     "bombs are refused; every manifest must load before the new copy goes live in one\n"
     "rename, and a failed step changes nothing. approval = \"never\" and trustedSandbox\n"
     "in a marketplace do not count: only your own abilities may relax a rule. When a sync\n"
     "changes the active persona (a marketplace's persona of its name), kaja says which\n"
     "folders it grants now.\n\n"
     "Options:\n"
     "  --sha256 HEX       the archive's SHA-256 (what sha256sum prints)\n"
     "  --public-key KEY   an Ed25519 public key, or a file holding one\n"
     "  --signature S      where the signature is, if not SOURCE.sig\n"
     "  --json             print objects instead of lines\n",
     runMarketplace},
    {"install", "install NAME [--json]", "turn on a server kaja knows, after a test connect",
     "Takes a server kaja vouches for: one shipped with it or from a marketplace you sync\n"
     "(never a search hit: `kaja find` only shows those). Prints the exact command line it\n"
     "runs and where it comes from, connects it once, and only if it answers with tools adds\n"
     "it to the active persona, as kaja enable does. A server that needs a key, a runner or\n"
     "folders says what to do first; one that fails or offers no tools changes nothing.\n\n"
     "Options:\n  --json    print the result as an object\n",
     runInstall},
    {"find", "find WORD [--json] [--limit N] [--registry URL] [--npm-registry URL]",
     "search the official MCP registry for servers to add",
     "Searches the official MCP registry (registry.modelcontextprotocol.io) for servers\n"
     "whose name or description holds WORD as a whole word (weather finds weather-mcp, not\n"
     "weatherly), and prints one row each: the short name kaja would give it, where it\n"
     "was found, what it runs (npm, pypi, oci package or remote URL), the secrets it asks\n"
     "for, and its description, quoted as the server's own words on one line. A description\n"
     "that reads like instructions to a model is withheld. A short name that is reserved\n"
     "or already an ability gets -HEX6 from the SHA-256 of the full name, the same each run.\n\n"
     "When the registry cannot be reached, answers an error, or sends more than 4 MB or\n"
     "something malformed, kaja searches npm instead (packages that call themselves MCP)\n"
     "and warns that those hits are NOT verified. Nothing found is installed.\n\n"
     "Exit status: 0 with or without hits, 1 when the answers were malformed, 4 when\n"
     "neither registry could be reached.\n\n"
     "Options:\n"
     "  --json              print an array of objects (name, fullName, source, verified,\n"
     "                      version, status, description, withheld, findings, runs,\n"
     "                      secrets)\n"
     "  --limit N           show at most N servers (default 20, at most 100)\n"
     "  --registry URL      the MCP registry to search (or KAJA_REGISTRY_URL)\n"
     "  --npm-registry URL  the npm registry to fall back to (or KAJA_NPM_REGISTRY_URL)\n",
     runFind},
    {"get", "get NAME [--json]", "show one ability: manifest, layer, runner and state",
     "Prints where NAME's manifest lives, whether it is shipped or your own (and whether\n"
     "yours replaces a shipped one), its state and runner here as kaja abilities shows\n"
     "them, the personas that list it, whether its key is stored, and the manifest text.\n\n"
     "Options:\n  --json    print an object instead\n",
     runGet},
    {"remove", "remove NAME", "remove an ability of your own",
     "Removes the folder of your own ability NAME from your marketplace. A shipped ability\n"
     "cannot be removed: take it out of the persona instead (kaja persona remove P NAME or\n"
     "kaja disable NAME). When yours replaced a shipped one, the shipped one is used again.\n"
     "Its key stays in the secrets file, so adding it again keeps working; kaja key rm\n"
     "NAME removes it. Personas that list it are not changed.\n",
     runRemove},
    {"config", "config paths [--json]", "show where kaja keeps its files",
     "Prints the config dir ($XDG_CONFIG_HOME/kaja), data dir ($XDG_DATA_HOME/kaja), your\n"
     "marketplace, the shipped marketplace, the secrets file, backups and tools folders.\n\n"
     "Options:\n  --json    print an object instead of lines\n",
     runConfig},
    {"key", "key set NAME | key rm NAME | key list [--json]", "store or remove an API key",
     "kaja key set NAME   reads the key from stdin, or from a masked prompt on a terminal,\n"
     "                    and stores it in secrets.toml (mode 0600)\n"
     "kaja key rm NAME    removes the stored key\n"
     "kaja key list       shows which abilities take a key and whether one is stored\n"
     "Keys never appear in argv, logs, errors or --json output.\n",
     runKey},
    {"login", "login NAME [--no-browser] [--port N] | login --status [--json]",
     "sign in to a remote server with OAuth",
     "kaja login NAME     signs in to the remote ability NAME: finds its authorization server\n"
     "                    (RFC 9728, RFC 8414), registers kaja there unless the manifest gives\n"
     "                    oauth = { clientId = … }, prints the address to open (and opens a\n"
     "                    browser: $BROWSER, or xdg-open on a desktop), waits up to 300 s for\n"
     "                    the redirect to 127.0.0.1, and stores the tokens in secrets.toml\n"
     "                    (mode 0600). kaja refreshes them before they expire.\n"
     "kaja login --status shows which remote abilities are signed in, until when\n"
     "Options:\n"
     "  --no-browser      only print the address\n"
     "  --port N          take the redirect on 127.0.0.1:N (for a client registered with a\n"
     "                    fixed redirect URI)\n"
     "  --json            with --status: print an array instead of lines\n"
     "Tokens never appear in argv, logs, errors or --json output.\n",
     runLogin},
    {"logout", "logout NAME", "forget a remote server's sign-in tokens",
     "kaja logout NAME    removes the OAuth tokens stored for NAME\n", runLogout},
    {"sandbox", "sandbox serve|token|status …", "host stdio servers for cloud users",
     "kaja sandbox serve --listen HOST:PORT --key-file F [options]\n"
     "    offers each (user, ability) as a Streamable HTTP MCP endpoint at\n"
     "    /users/USER/abilities/ABILITY/mcp; each server runs confined (bubblewrap), is\n"
     "    kept warm, and reaches only public addresses through kaja's proxy\n"
     "kaja sandbox token USER --key-file F [--ttl S]\n"
     "    prints a bearer token for USER (default lifetime 3600 s, at most 366 days)\n"
     "kaja sandbox status [--json] [--state DIR]\n"
     "    lists the worker's live servers: user, ability, pid, memory, idle, calls\n\n"
     "Options of serve:\n"
     "  --key-file F        the worker's key (at least 32 bytes, mode 0600); make one with\n"
     "                      head -c 32 /dev/urandom > F && chmod 600 F\n"
     "  --idle S            stop a server after S seconds with no request (default 600)\n"
     "  --shared            servers per turn (Kaja-Turn header), stopped when it ends;\n"
     "                      trustedSandbox abilities are refused\n"
     "  --memory SIZE       memory limit per server (512M, 2G), where cgroups are writable\n"
     "  --pids N            process limit per server, where cgroups are writable\n"
     "  --allow-private CIDR  let servers reach this private range (repeatable)\n"
     "  --userns ABILITY    let this ability's servers make user namespaces of their own,\n"
     "                      as Chromium's sandbox does (repeatable); no other server may\n"
     "                      make one\n"
     "  --allow-stdio LINE  start only the stdio command lines given (repeatable; a final\n"
     "                      word * allows further arguments), besides [stdio] allow in\n"
     "                      config.toml; with either, every other ability is refused\n"
     "  --max-servers N     servers running at once (default 512)\n"
     "  --max-per-user N    servers one user may run at once (default 32)\n"
     "  --state DIR         homes and status.json (default DATA_DIR/sandbox)\n"
     "  --run-as USER       a root worker runs every server as this unprivileged user\n"
     "                      (name, UID or UID:GID; default nobody); root is refused. The\n"
     "                      user must reach --state: as root, use e.g. /var/lib/kaja-sandbox\n",
     runSandbox},
    {"docker", "docker mounts [--json]",
     "print the docker run -v arguments for the personas' folders",
     "Prints one `-v SOURCE:PATH` argument for every folder that any persona gives any\n"
     "ability, so that kaja run in a container (docker/kaja.Dockerfile) sees each folder at\n"
     "the path its persona names (a symlink is mounted at its own path, from the folder it\n"
     "points to). A folder is mounted read-only (`:ro`) only when every persona that names\n"
     "it marks it read-only. Abilities that kaja itself runs with `docker run` get their\n"
     "folders mounted the same way.\n\n"
     "A folder that does not exist is skipped with a warning. A folder whose path holds a\n"
     "space, ':', ',', '*', '?', '[' or a control character, which -v or the shell would\n"
     "split, is named on stderr with the --mount form to use instead, and the exit status\n"
     "is 1. Every other line is safe to use unquoted, as in the example.\n\n"
     "Example (README: kaja in Docker has the whole line):\n"
     "  docker run -d -p 127.0.0.1:8931:8931 -v \"$PWD/kaja-token:/run/secrets/kaja-token:ro\" \\\n"
     "    $(kaja docker mounts) kaja-gateway\n\n"
     "Options:\n  --json    print {\"mounts\", \"args\", \"warnings\", \"refused\"} instead\n",
     runDocker},
    {"export", "export claude|claude-desktop|cursor|vscode|goose [--persona P] [--http URL]",
     "print the snippet that puts kaja in front of an MCP client",
     "Prints the configuration that makes CLIENT start `kaja serve` (with this kaja's full\n"
     "path, since apps started from a desktop may not share your shell's PATH), in the\n"
     "client's own format, to paste into its file:\n"
     "  claude          .mcp.json in a project (or: claude mcp add kaja -- kaja serve)\n"
     "  claude-desktop  claude_desktop_config.json\n"
     "  cursor          ~/.cursor/mcp.json or .cursor/mcp.json\n"
     "  vscode          .vscode/mcp.json\n"
     "  goose           ~/.config/goose/config.yaml\n\n"
     "Options:\n  --persona P  serve persona P instead of following the active one\n"
     "  --http URL   point the client at a running kaja serve --http instead, such as\n"
     "               http://127.0.0.1:8931/mcp\n",
     runExport},
    {"completion", "completion bash|zsh|fish", "print a shell completion script",
     "Prints the completion script for SHELL. It completes commands, their options, and the\n"
     "names of abilities, personas and (once `kaja serve` has listed them) tools; where\n"
     "a file is wanted it offers files. Installed packages put these scripts where each\n"
     "shell finds them; to use one by hand:\n"
     "  bash  add `source <(kaja completion bash)` to ~/.bashrc\n"
     "  zsh   add `source <(kaja completion zsh)` to ~/.zshrc (after compinit)\n"
     "  fish  kaja completion fish > ~/.config/fish/completions/kaja.fish\n",
     runCompletion},
    {"help", "help [COMMAND] | help rules [RULE] | help --man",
     "show the help of kaja, of one command, or of the rules",
     "kaja help              the list of commands, as kaja --help\n"
     "kaja help COMMAND      the full help of COMMAND, as kaja COMMAND --help\n"
     "kaja help rules [RULE] what each rule kaja refuses by means (K1, K13, K15, ...) and\n"
     "                       what to do about it; RULE is a code (K15) or a full name\n"
     "kaja help --man        this whole help as the man page kaja(1), in roff\n",
     runHelp},
};

// How long servers get to exit on SIGTERM when kaja itself is told to stop.
constexpr std::chrono::milliseconds kSignalGrace{300};
// How long the orphans servers left behind get to die when kaja finishes.
constexpr std::chrono::milliseconds kOrphanLimit{1000};

// The terminal as kaja found it, put back when a signal ends kaja mid-prompt (a masked key
// prompt turns echo off).
struct SavedTerminal {
  int fd = -1;
  termios state{};
};
SavedTerminal savedTerminal;

void saveTerminal() {
  const int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return;
  if (::tcgetattr(fd, &savedTerminal.state) != 0) {
    ::close(fd);
    return;
  }
  savedTerminal.fd = fd;
}

// Runs on the signal thread, after which kaja exits with 128 + `signal`.
void endOnSignal(int /*signal*/) {
  // The run was interrupted: what the main thread would still print about servers being
  // ended would only mislead, so it goes nowhere.
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
  }
  kaja::core::Subreaper::instance().endEverything(kSignalGrace);
  kaja::core::removeAllTempFolders();
  // Only the foreground may set the terminal (a background job would be stopped).
  if (savedTerminal.fd >= 0 && ::tcgetpgrp(savedTerminal.fd) == ::getpgrp()) {
    ::tcsetattr(savedTerminal.fd, TCSANOW, &savedTerminal.state);
  }
}

// Becomes the subreaper of every server's descendants and ends them and kaja's temporary
// folders on SIGINT, SIGTERM and SIGHUP.
void guardExit() {
  // Each server runs under a guardian, kaja itself, that ends the server's tree even when
  // kaja is killed with SIGKILL.
  kaja::core::useGuardian("/proc/self/exe");
  if (auto enabled = kaja::core::Subreaper::instance().enable(); !enabled) {
    printWarning("servers' orphaned processes will not be ended: " + enabled.error().message);
  }
  saveTerminal();
  if (auto installed = kaja::core::exitCleanlyOnSignals(endOnSignal); !installed) {
    printWarning("a signal will not end kaja's servers: " + installed.error().message);
  }
}

// Ends what servers left behind, then returns `code`, unless a signal is ending kaja.
int finish(int code) {
  kaja::core::Subreaper::instance().endOrphans(kOrphanLimit);
  if (kaja::core::terminationSignal() != 0) kaja::core::waitForSignalExit();
  return code;
}

}  // namespace

std::span<const Command> commands() { return kCommands; }

}  // namespace kaja::cli

int main(int argc, char** argv) {
  using namespace kaja::cli;
  if (argc > 2 && std::strcmp(argv[1], kaja::core::kGuardianFlag) == 0) {
    kaja::core::runGuardian(argc, argv);
  }
  // The two steps of a confined server's command line exec or relay at once: no guardian,
  // subreaper or signal thread of their own.
  if (argc > 2 && std::strcmp(argv[1], "sandbox") == 0 &&
      (std::strcmp(argv[2], "enter") == 0 || std::strcmp(argv[2], "bridge") == 0)) {
    return runSandbox(std::vector<std::string>(argv + 2, argv + argc));
  }
  // Completion runs on every Tab: it starts no server, so it needs no guard.
  if (argc > 1 && std::strcmp(argv[1], "__complete") == 0) {
    return runComplete(std::vector<std::string>(argv + 2, argv + argc));
  }
  guardExit();
  std::vector<std::string> args(argv + 1, argv + argc);
  // Global flags may come before the command.
  size_t first = 0;
  while (first < args.size() && (args[first] == "--verbose" || args[first] == "-v")) {
    options().verbose = true;
    ++first;
  }
  if (first >= args.size() || args[first] == "--help" || args[first] == "-h") {
    bool asked = first < args.size();
    printUsage(asked ? stdout : stderr);
    return asked ? kExitOk : kExitUsage;
  }
  if (args[first] == "--version") {
    std::printf("kaja %s\n", KAJA_VERSION);
    return kExitOk;
  }
  for (const auto& command : commands()) {
    if (command.name != args[first]) continue;
    std::vector<std::string> rest(args.begin() + static_cast<long>(first) + 1, args.end());
    for (const auto& arg : rest) {
      if (arg == "--") break;  // what follows is another program's command line
      if (arg == "--verbose" || arg == "-v") options().verbose = true;
      if (arg == "--help" || arg == "-h") {
        printCommandHelp(command);
        return kExitOk;
      }
    }
    return finish(command.run(rest));
  }
  printError(unknownCommand(args[first]));
  return kExitUsage;
}
