// --admission-control-config-file (upstream k8s.io/apiserver pkg/admission config.go
// ReadAdmissionConfiguration, ConfigFor, GetAdmissionPluginConfigurationFor): what the file
// gives each plugin, where relative paths point, and the errors, each naming file and field.
#include "admission/config_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "api/codec.h"

namespace kt::admission {
namespace {

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kubetaint-admission-config-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "sub");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to `name` under the test's directory; returns its path.
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // The error ReadAdmissionConfiguration gives for a file holding `text`.
  std::string ReadError(const std::string& text) {
    const std::string path = Write("bad.yaml", text);
    Result<std::vector<PluginConfiguration>> r = ReadAdmissionConfiguration(path);
    if (r) return "no error";
    std::string m = r.error().message();
    if (m.starts_with(path)) m.replace(0, path.size(), "FILE");
    return m;
  }

  std::filesystem::path dir_;
};

constexpr const char* kHead =
    "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n";

TEST_F(ConfigFileTest, InlineConfigurationsAndPathsRelativeToTheFile) {
  Write("sub/ptr.yaml",
        "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\n");
  const std::string path = Write("sub/admission.yaml", std::string(kHead) + R"(plugins:
- name: PodTolerationRestriction
  configuration:
    apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
    kind: Configuration
    whitelist: [{operator: Exists}]
- name: PodTolerationRestriction
  path: ignored.yaml
- name: FromFile
  path: ptr.yaml
- name: Nothing
- name: Missing
  path: ../missing.yaml
)");
  Result<std::vector<PluginConfiguration>> plugins = ReadAdmissionConfiguration(path);
  ASSERT_TRUE(plugins) << plugins.error().ToString();
  ASSERT_EQ(plugins->size(), 5u);
  EXPECT_EQ((*plugins)[2].path, (dir_ / "sub" / "ptr.yaml").string());
  EXPECT_EQ((*plugins)[4].path, (dir_ / "missing.yaml").string());

  // The first entry naming a plugin counts; the inline configuration wins over a path.
  Result<PluginConfig> ptr = ConfigFor(*plugins, "PodTolerationRestriction");
  ASSERT_TRUE(ptr && ptr->document);
  EXPECT_EQ(ptr->source, path + ": plugins[0].configuration");
  EXPECT_EQ(api::EncodeJson(*ptr->document),
            R"({"apiVersion":"podtolerationrestriction.admission.k8s.io/v1alpha1",)"
            R"("kind":"Configuration","whitelist":[{"operator":"Exists"}]})");

  Result<PluginConfig> file = ConfigFor(*plugins, "FromFile");
  ASSERT_TRUE(file && file->document);
  EXPECT_EQ(file->source, (dir_ / "sub" / "ptr.yaml").string());
  EXPECT_EQ(api::EncodeJson(*file->document),
            R"({"apiVersion":"podtolerationrestriction.admission.k8s.io/v1alpha1",)"
            R"("kind":"Configuration"})");

  for (const char* none : {"Nothing", "NotInTheFile"}) {
    Result<PluginConfig> c = ConfigFor(*plugins, none);
    ASSERT_TRUE(c) << none;
    EXPECT_EQ(c->document, nullptr) << none;
  }
  Result<PluginConfig> missing = ConfigFor(*plugins, "Missing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), path + ": plugins[4].path: open " +
                                           (dir_ / "missing.yaml").string() +
                                           ": no such file or directory");
}

TEST_F(ConfigFileTest, JsonAndOlderApiVersionsToo) {
  for (const char* version : {"apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1",
                              "apiserver.k8s.io/v1alpha1"}) {
    const std::string path = Write(
        "a.json", std::string(R"({"apiVersion":")") + version +
                      R"(","kind":"AdmissionConfiguration","plugins":[{"name":"X","path":"/x"}]})");
    Result<std::vector<PluginConfiguration>> plugins = ReadAdmissionConfiguration(path);
    ASSERT_TRUE(plugins) << version;
    ASSERT_EQ(plugins->size(), 1u);
    EXPECT_EQ((*plugins)[0].path, "/x") << "absolute paths stay";
  }
  EXPECT_EQ(ReadError(kHead), "no error") << "no plugins at all";
}

TEST_F(ConfigFileTest, ErrorsNameTheFileAndTheField) {
  const std::string head = kHead;
  struct Row {
    std::string text;
    std::string want;
  };
  const Row rows[] = {
      {"apiVersion: v1\nkind: Pod\n",
       "FILE: apiVersion \"v1\", kind \"Pod\": want apiVersion apiserver.config.k8s.io/v1 and "
       "kind AdmissionConfiguration"},
      {"kind: AdmissionConfiguration\n",
       "FILE: apiVersion \"\", kind \"AdmissionConfiguration\": want apiVersion "
       "apiserver.config.k8s.io/v1 and kind AdmissionConfiguration"},
      {"[1, 2]\n", "FILE: expected an AdmissionConfiguration object, got array"},
      {"plugins: [\n", "FILE: yaml: line 2, column 1: end of sequence flow not found"},
      {head + "plugins: {name: X}\n", "FILE: plugins: expected a list, got object"},
      {head + "plugins: [X]\n", "FILE: plugins[0]: expected an object, got string"},
      {head + "plugins: [{path: x}]\n", "FILE: plugins[0].name: Required value"},
      {head + "plugins: [{name: 3}]\n", "FILE: plugins[0].name: expected a string, got number"},
      {head + "plugins: [{name: X}, {name: Z, path: [a]}]\n",
       "FILE: plugins[1].path: expected a string, got array"},
      {head + "plugins: [{name: X, configuration: yes}]\n",
       "FILE: plugins[0].configuration: expected an object, got boolean"},
  };
  for (const Row& r : rows) EXPECT_EQ(ReadError(r.text), r.want) << r.text;
}

TEST_F(ConfigFileTest, AFileThatCannotBeReadIsUpstreamsError) {
  const std::string missing = (dir_ / "nope.yaml").string();
  Result<std::vector<PluginConfiguration>> r = ReadAdmissionConfiguration(missing);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "unable to read admission control configuration from \"" +
                                     missing + "\" [open " + missing +
                                     ": no such file or directory]");
  const std::string directory = (dir_ / "sub").string();
  r = ReadAdmissionConfiguration(directory);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "unable to read admission control configuration from \"" +
                                     directory + "\" [read " + directory + ": is a directory]");
}

}  // namespace
}  // namespace kt::admission
