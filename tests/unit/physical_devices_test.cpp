// `latlab devices`' physical-device grouping (src/bench/physical_devices.cpp
// and src/report/physical_devices_json.cpp): the CUDA, Vulkan and GL entries of one GPU share
// a group by UUID or PCI address; entries without either stay apart.
#include "latlab/bench/physical_devices.hpp"

#include <gtest/gtest.h>

#include "report/physical_devices_json.hpp"

namespace latlab {
namespace {

TEST(PhysicalDevices, PciAddressesAreNormalised) {
  EXPECT_EQ(normalize_pci_bus_id("00000000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(normalize_pci_bus_id("0000:18:00.0"), "0000:18:00.0");
  EXPECT_EQ(normalize_pci_bus_id("1:2:3.4"), "0001:02:03.4");
  EXPECT_EQ(normalize_pci_bus_id(""), "");
  EXPECT_EQ(normalize_pci_bus_id("card0"), "");
  EXPECT_EQ(normalize_pci_bus_id("0000:18:00.0x"), "");
  EXPECT_EQ(normalize_pci_bus_id("0000:18:00.1.2"), "");
  EXPECT_EQ(normalize_pci_bus_id("-1:18:00.0"), "");
  EXPECT_EQ(normalize_pci_bus_id("0000:18:40.0"), "");  // device > 31
}

TEST(PhysicalDevices, TwoGpusThroughThreeApis) {
  const std::string u0 = "11111111-2222-3333-4444-555555555555";
  const std::string u1 = "aaaaaaaa-2222-3333-4444-555555555555";
  std::vector<PhysicalIdentity> ids = {
      {"vulkan", 0, "H200", u1, "0000:2a:00.0"},  // the second GPU listed first
      {"vulkan", 1, "H200", u0, ""},              // no VK_EXT_pci_bus_info
      {"vulkan", 2, "llvmpipe", "6d657361-3232", ""},
      {"cuda", 0, "H200", u0, "0000:18:00.0"},
      {"cuda", 1, "H200", u1, "0000:2a:00.0"},
      {"gl", 0, "H200", "", "0000:18:00.0"},  // PCI only: joins through cuda 0
      {"gl", 1, "llvmpipe", "", ""},          // nothing known
  };
  assign_physical_groups(ids);
  EXPECT_EQ(ids[0].group, 0);
  EXPECT_EQ(ids[1].group, 1);
  EXPECT_EQ(ids[2].group, 2);
  EXPECT_EQ(ids[3].group, 1);
  EXPECT_EQ(ids[4].group, 0);
  EXPECT_EQ(ids[5].group, 1);
  EXPECT_EQ(ids[6].group, 3);
  const nlohmann::json j = physical_devices_json(ids);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[1]["uuid"], u0);
  EXPECT_EQ(j[1]["pci_bus_id"], "0000:18:00.0");
  EXPECT_EQ(j[1]["members"].size(), 3u);
  EXPECT_EQ(j[1]["matched_by"], "uuid_or_pci_bus_id");
  EXPECT_EQ(j[2]["matched_by"], "single");
  EXPECT_EQ(j[3]["matched_by"], "unknown");
  EXPECT_TRUE(j[3]["uuid"].is_null());
  const std::string t = physical_devices_text(ids);
  EXPECT_NE(
      t.find("physical device #1: vulkan 1, cuda 0, gl 0 (PCI 0000:18:00.0, UUID " + u0 + ")"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("physical device #3: gl 1 (PCI unknown, UUID unknown)"), std::string::npos) << t;
  EXPECT_EQ(find_identity(ids, Backend::gl, 1), &ids[6]);
  EXPECT_EQ(find_identity(ids, Backend::cuda, 7), nullptr);
}

TEST(PhysicalDevices, ANodeWithoutPciDeviceHasNoAddress) {
  EXPECT_EQ(pci_bus_id_of_drm_node(""), "");
  EXPECT_EQ(pci_bus_id_of_drm_node("/dev/null"), "");  // a char device with no PCI parent
  EXPECT_EQ(pci_bus_id_of_drm_node("/nonexistent/renderD128"), "");
}

}  // namespace
}  // namespace latlab
