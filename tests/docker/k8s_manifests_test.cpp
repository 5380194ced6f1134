// docker/k8s/ without a cluster: each manifest is parsed with python3's yaml module (Debian's
// python3-yaml) and the facts that keep the workers confined are asserted: non-root and
// unprivileged, a read-only root with emptyDirs for state, the key from a Secret ending up
// owner-only at /run/secrets/kaja-key, stable names behind a headless Service, and a
// NetworkPolicy that admits only the API and lets nothing out to private ranges.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::docker {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kK8s = std::string(kaja::test::sourceDir()) + "/docker/k8s";
const char* const kManifests[] = {"statefulset.yaml", "services.yaml", "networkpolicy.yaml",
                                  "kustomization.yaml"};

/// Every document of every manifest, by file name, as JSON; null when python3 or its yaml
/// module is missing (the test then skips).
json loadManifests(std::string& why) {
  std::vector<std::string> argv = {
      "/usr/bin/python3", "-c",
      "import json, sys, yaml\n"
      "json.dump({f: list(yaml.safe_load_all(open(sys.argv[1] + '/' + f))) "
      "for f in sys.argv[2:]}, sys.stdout)",
      kK8s};
  for (const char* file : kManifests) argv.emplace_back(file);
  if (!fs::exists(argv[0])) {
    why = "python3 is not installed";
    return nullptr;
  }
  auto result = testing::runCommand(argv, {"PATH=/usr/bin:/bin"});
  if (result.err.find("No module named 'yaml'") != std::string::npos) {
    why = "python3's yaml module is not installed (Debian's python3-yaml; .ci/setup installs it)";
    return nullptr;
  }
  EXPECT_EQ(result.exitCode, 0) << result.err;
  return json::parse(result.out, nullptr, false);
}

/// An IPv4 range, for asking whether one range lies inside another.
struct Range {
  std::uint32_t base = 0;
  int bits = 0;
};

std::optional<Range> parseRange(const std::string& cidr) {
  auto slash = cidr.find('/');
  std::string address = cidr.substr(0, slash);
  in_addr raw{};
  if (::inet_pton(AF_INET, address.c_str(), &raw) != 1) return std::nullopt;
  int bits = slash == std::string::npos ? 32 : std::stoi(cidr.substr(slash + 1));
  return Range{ntohl(raw.s_addr), bits};
}

bool inside(const Range& inner, const Range& outer) {
  if (inner.bits < outer.bits) return false;
  std::uint32_t mask = outer.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - outer.bits);
  return (inner.base & mask) == (outer.base & mask);
}

class ManifestsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { all_ = loadManifests(why_); }
  void SetUp() override {
    if (all_.is_null()) GTEST_SKIP() << why_;
    ASSERT_TRUE(all_.is_object()) << "the manifests did not parse";
  }

  static const json& only(const std::string& file) { return all_[file].at(0); }
  static const json& podSpec() { return only("statefulset.yaml")["spec"]["template"]["spec"]; }
  static const json& worker() { return podSpec()["containers"].at(0); }
  static const json& volume(const std::string& name) {
    for (const auto& v : podSpec()["volumes"]) {
      if (v["name"] == name) return v;
    }
    static const json none = json::object();
    return none;
  }
  static std::string envOf(const json& container, const std::string& name) {
    for (const auto& e : container["env"]) {
      if (e["name"] == name) return e.value("value", "");
    }
    return {};
  }
  /// True when `selector` (matchLabels or a Service's selector) picks the worker pods.
  static bool picksWorkers(const json& selector) {
    const json& labels = only("statefulset.yaml")["spec"]["template"]["metadata"]["labels"];
    if (!selector.is_object() || selector.empty()) return false;
    for (const auto& [key, value] : selector.items()) {
      if (!labels.contains(key) || labels[key] != value) return false;
    }
    return true;
  }

  static inline json all_;
  static inline std::string why_;
};

TEST_F(ManifestsTest, EachFileHoldsTheKindsItShould) {
  EXPECT_EQ(only("statefulset.yaml")["kind"], "StatefulSet");
  ASSERT_EQ(all_["services.yaml"].size(), 2u);
  EXPECT_EQ(only("networkpolicy.yaml")["kind"], "NetworkPolicy");
  json listed = only("kustomization.yaml")["resources"];
  for (const auto& entry : fs::directory_iterator(kK8s)) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(".yaml") && name != "kustomization.yaml") {
      EXPECT_THAT(listed, Contains(name)) << name << " is not in kustomization.yaml";
    }
  }
}

TEST_F(ManifestsTest, WorkersRunAsTheImagesNonRootUserWithoutPrivilege) {
  const json& pod = podSpec()["securityContext"];
  EXPECT_EQ(pod["runAsNonRoot"], true);
  EXPECT_EQ(pod["runAsUser"], 10001);  // the Dockerfile's USER
  EXPECT_EQ(podSpec()["automountServiceAccountToken"], false);
  for (const char* list : {"initContainers", "containers"}) {
    for (const auto& container : podSpec()[list]) {
      const json& sc = container["securityContext"];
      EXPECT_EQ(sc["allowPrivilegeEscalation"], false) << container["name"];
      EXPECT_EQ(sc["readOnlyRootFilesystem"], true) << container["name"];
      EXPECT_EQ(sc["capabilities"]["drop"], json::array({"ALL"})) << container["name"];
      EXPECT_FALSE(sc.contains("privileged") && sc["privileged"] == true) << container["name"];
      EXPECT_FALSE(sc["capabilities"].contains("add")) << container["name"];
    }
  }
  EXPECT_FALSE(podSpec().contains("hostNetwork") && podSpec()["hostNetwork"] == true);
  EXPECT_FALSE(podSpec().contains("hostPID") && podSpec()["hostPID"] == true);
}

TEST_F(ManifestsTest, EveryPathTheWorkerWritesIsAnEmptyDir) {
  std::map<std::string, std::string> mounts;
  for (const auto& m : worker()["volumeMounts"]) mounts[m["mountPath"]] = m["name"];
  for (const char* path : {"/var/lib/kaja", "/tmp"}) {
    ASSERT_TRUE(mounts.contains(path)) << path;
    EXPECT_TRUE(volume(mounts[path]).contains("emptyDir")) << path;
  }
  EXPECT_THAT(testing::readFile(std::string(kaja::test::sourceDir()) + "/docker/Dockerfile"),
              HasSubstr("HOME=/var/lib/kaja"));
}

TEST_F(ManifestsTest, TheKeyComesFromASecretAndEndsOwnerOnlyAtTheKeyFile) {
  const json& source = volume("key-source");
  ASSERT_TRUE(source.contains("secret"));
  EXPECT_EQ(source["secret"]["defaultMode"], 0400);
  for (const auto& item : source["secret"]["items"]) EXPECT_EQ(item["mode"], 0400);
  // The copy the worker reads: in memory, written 0400 by the worker's own uid.
  EXPECT_EQ(volume("key")["emptyDir"]["medium"], "Memory");
  const json& init = podSpec()["initContainers"].at(0);
  EXPECT_EQ(init["command"],
            json::array({"/usr/bin/install", "-m", "0400", "/run/kaja-key-source/kaja-key",
                         "/run/secrets/kaja-key"}));
  bool mounted = false;
  for (const auto& m : worker()["volumeMounts"]) {
    if (m["name"] != "key") continue;
    mounted = true;
    EXPECT_EQ(m["mountPath"], "/run/secrets");
    EXPECT_EQ(m["readOnly"], true);
  }
  EXPECT_TRUE(mounted);
  for (const auto& m : worker()["volumeMounts"]) EXPECT_NE(m["name"], "key-source");
  EXPECT_EQ(envOf(worker(), "KAJA_KEY_FILE"), "/run/secrets/kaja-key");
}

TEST_F(ManifestsTest, EachWorkerHasResourceLimits) {
  const json& resources = worker()["resources"];
  for (const char* what : {"cpu", "memory", "ephemeral-storage"}) {
    EXPECT_TRUE(resources["limits"].contains(what)) << what;
    EXPECT_TRUE(resources["requests"].contains(what)) << what;
  }
}

TEST_F(ManifestsTest, ServicesGiveEachWorkerAStableNameAndAllOfThemOneAddress) {
  const json& set = only("statefulset.yaml");
  EXPECT_TRUE(picksWorkers(set["spec"]["selector"]["matchLabels"]));
  bool headless = false;
  bool clusterIp = false;
  for (const auto& service : all_["services.yaml"]) {
    EXPECT_TRUE(picksWorkers(service["spec"]["selector"])) << service["metadata"]["name"];
    EXPECT_EQ(service["spec"]["ports"].at(0)["targetPort"], "http");
    if (service["spec"].value("clusterIP", "") == "None") {
      headless = true;
      EXPECT_EQ(service["metadata"]["name"], set["spec"]["serviceName"]);
    } else {
      clusterIp = true;
      EXPECT_EQ(service["spec"]["type"], "ClusterIP");
    }
  }
  EXPECT_TRUE(headless);
  EXPECT_TRUE(clusterIp);
  const json& port = worker()["ports"].at(0);
  EXPECT_EQ(port["name"], "http");
  EXPECT_EQ(":" + std::to_string(port["containerPort"].get<int>()),
            envOf(worker(), "KAJA_LISTEN").substr(envOf(worker(), "KAJA_LISTEN").rfind(':')));
}

TEST_F(ManifestsTest, OnlyTheApiPodsMayConnect) {
  const json& spec = only("networkpolicy.yaml")["spec"];
  EXPECT_TRUE(picksWorkers(spec["podSelector"]["matchLabels"]));
  EXPECT_THAT(spec["policyTypes"], Contains("Ingress"));
  ASSERT_EQ(spec["ingress"].size(), 1u);
  const json& rule = spec["ingress"].at(0);
  ASSERT_FALSE(rule["from"].empty());  // an empty `from` would admit everyone
  for (const auto& peer : rule["from"]) {
    EXPECT_FALSE(peer.contains("ipBlock"));
    EXPECT_EQ(peer["podSelector"]["matchLabels"]["app.kubernetes.io/name"], "kaja-api");
  }
  EXPECT_EQ(rule["ports"], json::parse(R"([{"protocol": "TCP", "port": 8080}])"));
}

TEST_F(ManifestsTest, EgressReachesDnsAndThePublicInternetButNoPrivateRange) {
  const json& spec = only("networkpolicy.yaml")["spec"];
  EXPECT_THAT(spec["policyTypes"], Contains("Egress"));
  std::vector<Range> allowed;
  std::vector<Range> excepted;
  bool dns = false;
  for (const auto& rule : spec["egress"]) {
    for (const auto& peer : rule["to"]) {
      if (!peer.contains("ipBlock")) {
        // A selector peer is only for DNS: port 53 and nothing else.
        dns = true;
        EXPECT_EQ(peer["podSelector"]["matchLabels"]["k8s-app"], "kube-dns");
        for (const auto& port : rule["ports"]) EXPECT_EQ(port["port"], 53);
        EXPECT_THAT(rule["ports"], Contains(json::parse(R"({"protocol": "UDP", "port": 53})")));
        EXPECT_THAT(rule["ports"], Contains(json::parse(R"({"protocol": "TCP", "port": 53})")));
        continue;
      }
      auto cidr = parseRange(peer["ipBlock"]["cidr"]);
      if (!cidr) continue;  // IPv6
      allowed.push_back(*cidr);
      for (const auto& except : peer["ipBlock"]["except"]) {
        auto range = parseRange(except);
        ASSERT_TRUE(range.has_value()) << except;
        excepted.push_back(*range);
      }
      for (const char* required : {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
                                   "169.254.0.0/16", "127.0.0.0/8"}) {
        EXPECT_THAT(peer["ipBlock"]["except"], Contains(required));
      }
    }
  }
  EXPECT_TRUE(dns);
  auto reachable = [&](const std::string& address) {
    Range host = *parseRange(address);
    bool in = std::any_of(allowed.begin(), allowed.end(),
                          [&](const Range& r) { return inside(host, r); });
    bool out = std::any_of(excepted.begin(), excepted.end(),
                           [&](const Range& r) { return inside(host, r); });
    return in && !out;
  };
  for (const char* address : {"10.0.0.5", "10.96.0.1", "172.20.1.1", "192.168.1.1", "100.64.0.1",
                              "169.254.169.254", "127.0.0.1", "0.0.0.0"}) {
    EXPECT_FALSE(reachable(address)) << address;
  }
  for (const char* address : {"93.184.216.34", "1.1.1.1", "8.8.8.8", "172.15.255.255"}) {
    EXPECT_TRUE(reachable(address)) << address;
  }
}

TEST_F(ManifestsTest, TheManifestsSayWhatBubblewrapNeeds) {
  // The settings bubblewrap depends on are explained where they are set.
  std::string text = testing::readFile(kK8s + "/statefulset.yaml");
  for (const char* word : {"user namespaces", "seccomp", "AppArmor", "procMount", "cgroup"}) {
    EXPECT_THAT(text, HasSubstr(word));
  }
  EXPECT_EQ(worker()["securityContext"]["procMount"], "Unmasked");
  EXPECT_EQ(podSpec()["hostUsers"], false);
}

}  // namespace
}  // namespace kaja::docker
