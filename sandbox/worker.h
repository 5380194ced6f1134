#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/runner/runner_resolver.h"
#include "sandbox/cidr.h"
#include "sandbox/pool.h"
#include "sandbox/token.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace kaja::sandbox {

/// The folders of one server, on the worker's side.
struct ServerDirs {
  std::string home;  ///< its HOME: kept across restarts (a user's login stays), per user
  std::string tmp;   ///< its /tmp: emptied each time it stops
};

/// How `kaja sandbox serve` runs.
struct WorkerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  ///< 0 picks a free one
  WorkerKey key;
  std::string keyFile;  ///< hidden from every server
  bool shared = false;
  std::chrono::milliseconds idle{std::chrono::minutes(10)};
  std::size_t maxServers = 512;          ///< live servers in all
  std::size_t maxPerUser = 32;           ///< live servers of one user
  std::string stateDir;                  ///< homes, status.json; hidden from every server
  std::vector<core::Ability> abilities;  ///< the marketplace; those the cloud may run are served
  /// Where runners are found; this process's PATH when unset.
  std::optional<core::RunnerContext> runners;
  /// Confine every server (bubblewrap: own namespaces, read-only system, private home and
  /// /tmp). Only tests of the pool and the API turn it off.
  bool isolate = true;
  std::string kaja;  ///< the kaja binary the confined command line runs; "" is this one
  /// Host paths every server sees read-only besides the system (the marketplaces, kaja's
  /// tools folder). The folders of each server's own program and of the absolute paths in
  /// its arguments (up to their node_modules) are added per server.
  std::vector<std::string> readOnly;
  /// Host paths no server may see (kaja's config and data folders); the key file and the
  /// state folder are always added.
  std::vector<std::string> hidden;
  std::uint64_t memoryBytes = 0;  ///< per server, when cgroups are writable; 0: no limit
  std::uint64_t pids = 0;         ///< per server, when cgroups are writable; 0: no limit
  /// The abilities whose servers may make user namespaces of their own (Chromium's sandbox
  /// needs them). Every other server gets none: in one it would hold every capability, which
  /// opens the kernel's mount, network and namespace code to it.
  std::vector<std::string> userNamespaces;
  /// Give confined servers a way out: the egress proxy, public addresses only (K22).
  /// Without it they have no network at all.
  bool egress = true;
  std::vector<Cidr> allowPrivate;  ///< private ranges the operator lets servers reach
  /// Whom a root worker's confined servers run as (resolveRunAs, run_as.h): a user name or
  /// UID[:GID]; "" is nobody for a root worker and the worker itself otherwise. Root is
  /// refused. Their home and tmp folders and the egress socket become that user's; the
  /// state folder becomes 0710 with that user's group, so it can reach them and no more.
  std::string runAs;
  std::chrono::milliseconds connectTimeout{std::chrono::seconds(30)};
  std::chrono::milliseconds callTimeout{std::chrono::minutes(10)};
  std::function<void(const std::string&)> log;
};

/// The sandbox worker: the HTTP API, the pool of per-user servers and the status file, on
/// an io_context its owner runs.
class Worker {
 public:
  /// Checks the options, resolves the abilities and binds the listener; starts nothing.
  static core::Result<std::unique_ptr<Worker>> create(boost::asio::io_context& io,
                                                      WorkerOptions options);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Starts accepting requests and writing `<stateDir>/status.json` each second.
  void start();
  /// Stops accepting, stops every server; `done` runs once they are gone.
  void stop(std::function<void()> done);
  /// Returns the bound port.
  [[nodiscard]] std::uint16_t port() const;
  /// Returns the abilities served, with what each runs, and those refused, with why.
  [[nodiscard]] const std::vector<std::string>& offered() const;
  [[nodiscard]] const std::vector<std::string>& refused() const;
  /// Returns why per-server memory and pids limits do not apply here, or "" when they do.
  [[nodiscard]] const std::string& limitsOff() const;
  /// Returns the live servers.
  [[nodiscard]] std::vector<ServerStatus> status() const;

  struct Impl;

 private:
  explicit Worker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Returns what a confined server must see of the absolute paths in its command line: for
/// each that is a regular file inside a node_modules folder, after resolving every link,
/// that folder (a package needs its dependencies). Nothing else: a folder, a socket, a
/// device or a file elsewhere gives nothing, so no manifest argument can show a server a
/// host folder, socket or file. (The program itself, the system, the marketplaces and
/// kaja's runners are shown by the confinement.)
std::vector<std::string> argumentPaths(const core::LaunchPlan& plan);

/// Returns the path of the status file a worker with `stateDir` writes.
std::string statusFile(const std::string& stateDir);

/// Returns the resident memory of `pid` and every process below it, in KiB (0 when gone).
std::uint64_t treeRssKb(pid_t pid);

}  // namespace kaja::sandbox
