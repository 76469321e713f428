// bracket_variants: what each way of timing a program's submission with
// timestamp queries costs a program that submits one command buffer and
// waits for it, as a plain Vulkan program (no latlab code: the control is
// independent of the capture layer it explains). Variants:
//   plain        the program's command buffer alone
//   sep_ts       + a command buffer before (timestamp) and after (timestamp,
//                reset of the other pair); the host reads the queries
//   sep_ts_sim   sep_ts recorded with SIMULTANEOUS_USE
//   sep_copy     sep_ts + the after buffer copies its pair to host memory
//                (waiting) and the other pair (not waiting)
//   layer        sep_copy with SIMULTANEOUS_USE: the capture layer's way
//   late_sim     layer without the wait (the layer's late copies)
//   incb_ts      the timestamps (and the reset) in the program's own buffer
//   incb_copy    incb_ts + the waiting copy at its end
//   sep_ts_host  sep_ts, the pair reset by the host after its read
//                (vkResetQueryPool, hostQueryReset) instead of on the GPU
//   incb_ts_host incb_ts, likewise
// Each round runs every variant for N submissions, in turn; the figures are
// the medians over rounds of each round's median, in us, and the ratio of
// the wall time per submission to plain's.
//   bracket_variants [rounds=7] [per_round=300] [fill_mib=64]
#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

#define CHECK(x)                                                      \
  do {                                                                \
    VkResult r_ = (x);                                                \
    if (r_ != VK_SUCCESS) {                                           \
      std::fprintf(stderr, "%s failed: %d\n", #x, static_cast<int>(r_)); \
      std::exit(2);                                                   \
    }                                                                 \
  } while (0)

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Gpu {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  VkBuffer work = VK_NULL_HANDLE, host = VK_NULL_HANDLE;
  VkDeviceMemory work_mem = VK_NULL_HANDLE, host_mem = VK_NULL_HANDLE;
  VkDeviceSize fill_bytes = 0;
  VkFence fence = VK_NULL_HANDLE;
  std::string name;
  bool host_query_reset = false;
};

uint32_t memory_type(const Gpu& g, uint32_t bits, VkMemoryPropertyFlags want) {
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(g.physical, &mp);
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
    if ((bits & (1U << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
  std::fprintf(stderr, "no memory type\n");
  std::exit(2);
}

void make_buffer(Gpu& g, VkDeviceSize bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags props,
                 VkBuffer& b, VkDeviceMemory& m) {
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.size = bytes;
  bi.usage = usage;
  CHECK(vkCreateBuffer(g.device, &bi, nullptr, &b));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(g.device, b, &req);
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = memory_type(g, req.memoryTypeBits, props);
  CHECK(vkAllocateMemory(g.device, &ai, nullptr, &m));
  CHECK(vkBindBufferMemory(g.device, b, m, 0));
}

Gpu open_gpu(VkDeviceSize fill_bytes) {
  Gpu g;
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ii{};
  ii.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ii.pApplicationInfo = &app;
  CHECK(vkCreateInstance(&ii, nullptr, &g.instance));
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(g.instance, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  vkEnumeratePhysicalDevices(g.instance, &n, pds.data());
  if (n == 0) {
    std::fprintf(stderr, "no Vulkan device\n");
    std::exit(2);
  }
  g.physical = pds[0];
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(g.physical, &props);
  g.name = props.deviceName;
  uint32_t nf = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(g.physical, &nf, nullptr);
  std::vector<VkQueueFamilyProperties> fams(nf);
  vkGetPhysicalDeviceQueueFamilyProperties(g.physical, &nf, fams.data());
  g.family = UINT32_MAX;
  for (uint32_t i = 0; i < nf; ++i)
    if ((fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) && fams[i].timestampValidBits > 0) {
      g.family = i;
      break;
    }
  if (g.family == UINT32_MAX) {
    std::fprintf(stderr, "no graphics family with timestamps\n");
    std::exit(2);
  }
  const float prio = 1.0F;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = g.family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &prio;
  VkPhysicalDeviceHostQueryResetFeatures hqr{};
  hqr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES;
  VkPhysicalDeviceFeatures2 f2{};
  f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  f2.pNext = &hqr;
  if (props.apiVersion >= VK_API_VERSION_1_2) vkGetPhysicalDeviceFeatures2(g.physical, &f2);
  g.host_query_reset = hqr.hostQueryReset == VK_TRUE;
  VkDeviceCreateInfo di{};
  di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  if (g.host_query_reset) di.pNext = &hqr;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  CHECK(vkCreateDevice(g.physical, &di, nullptr, &g.device));
  vkGetDeviceQueue(g.device, g.family, 0, &g.queue);
  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.queueFamilyIndex = g.family;
  CHECK(vkCreateCommandPool(g.device, &pi, nullptr, &g.pool));
  VkQueryPoolCreateInfo qp{};
  qp.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qp.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qp.queryCount = 4;
  CHECK(vkCreateQueryPool(g.device, &qp, nullptr, &g.queries));
  g.fill_bytes = fill_bytes;
  make_buffer(g, fill_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
              g.work, g.work_mem);
  make_buffer(g, 8 * sizeof(uint64_t), VK_BUFFER_USAGE_TRANSFER_DST_BIT,
              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, g.host,
              g.host_mem);
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  CHECK(vkCreateFence(g.device, &fi, nullptr, &g.fence));
  return g;
}

// One command buffer: optionally the reset of `reset_pair`, a timestamp at
// the top of pair p, the program's fill, a timestamp at the bottom, copies.
struct Recipe {
  bool reset_own = false;   // reset pair p first (in-buffer timing)
  bool ts_top = false;      // timestamp p.0 at the top
  bool fill = false;        // the program's work
  bool ts_bottom = false;   // timestamp p.1 at the bottom
  bool reset_other = false; // reset the other pair after
  bool copy_own = false;    // copy pair p to the host
  bool copy_wait = false;   // ... waiting for it
  bool copy_other = false;  // copy the other pair (not waiting)
};

VkCommandBuffer record(Gpu& g, const Recipe& r, uint32_t p, bool simultaneous) {
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = g.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  CHECK(vkAllocateCommandBuffers(g.device, &ai, &cb));
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = simultaneous ? VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT : 0;
  CHECK(vkBeginCommandBuffer(cb, &bi));
  const uint32_t own = 2 * p, other = 2 * (p ^ 1U);
  if (r.reset_own) vkCmdResetQueryPool(cb, g.queries, own, 2);
  if (r.ts_top) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, g.queries, own);
  if (r.fill) vkCmdFillBuffer(cb, g.work, 0, g.fill_bytes, 0x5a5a5a5a);
  if (r.ts_bottom) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, g.queries, own + 1);
  if (r.reset_other) vkCmdResetQueryPool(cb, g.queries, other, 2);
  const VkQueryResultFlags base = VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;
  if (r.copy_own)
    vkCmdCopyQueryPoolResults(cb, g.queries, own, 2, g.host, 4 * sizeof(uint64_t) * p,
                              2 * sizeof(uint64_t), base | (r.copy_wait ? VK_QUERY_RESULT_WAIT_BIT : 0));
  if (r.copy_other)
    vkCmdCopyQueryPoolResults(cb, g.queries, other, 2, g.host, 4 * sizeof(uint64_t) * (p ^ 1U),
                              2 * sizeof(uint64_t), base);
  CHECK(vkEndCommandBuffer(cb));
  return cb;
}

struct Variant {
  const char* name;
  std::array<std::vector<VkCommandBuffer>, 2> cbs;  // per pair: the submitted buffers
  std::vector<double> submit_us, wall_us;            // per round medians
  bool host_reset = false;                           // the host resets a pair after its read
};

Variant separate(Gpu& g, const char* name, bool copies, bool wait, bool simultaneous,
                 bool host_reset = false) {
  Variant v{name, {}, {}, {}, host_reset};
  Recipe begin{}, prog{}, end{};
  begin.ts_top = true;
  prog.fill = true;
  end.ts_bottom = true;
  end.reset_other = !host_reset;
  end.copy_own = copies;
  end.copy_wait = wait;
  end.copy_other = copies;
  const VkCommandBuffer program = record(g, prog, 0, false);
  for (uint32_t p = 0; p < 2; ++p)
    v.cbs[p] = {record(g, begin, p, simultaneous), program, record(g, end, p, simultaneous)};
  return v;
}

Variant in_buffer(Gpu& g, const char* name, bool copy, bool host_reset = false) {
  Variant v{name, {}, {}, {}, host_reset};
  Recipe r{};
  r.reset_own = !host_reset;
  r.ts_top = r.fill = r.ts_bottom = true;
  r.copy_own = r.copy_wait = copy;
  for (uint32_t p = 0; p < 2; ++p) v.cbs[p] = {record(g, r, p, false)};
  return v;
}

Variant plain(Gpu& g) {
  Variant v{"plain", {}, {}, {}};
  Recipe prog{};
  prog.fill = true;
  const VkCommandBuffer cb = record(g, prog, 0, false);
  v.cbs[0] = v.cbs[1] = {cb};
  return v;
}

// Resets every query, so that the first use of each pair is legal.
void reset_all(Gpu& g, VkCommandBuffer& cb) {
  if (cb == VK_NULL_HANDLE) {
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = g.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    CHECK(vkAllocateCommandBuffers(g.device, &ai, &cb));
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    CHECK(vkBeginCommandBuffer(cb, &bi));
    vkCmdResetQueryPool(cb, g.queries, 0, 4);
    CHECK(vkEndCommandBuffer(cb));
  }
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  CHECK(vkQueueSubmit(g.queue, 1, &si, g.fence));
  CHECK(vkWaitForFences(g.device, 1, &g.fence, VK_TRUE, UINT64_MAX));
  CHECK(vkResetFences(g.device, 1, &g.fence));
}

void run_round(Gpu& g, Variant& v, int n, uint64_t& spans) {
  std::vector<double> submit, wall;
  for (int i = 0; i < n; ++i) {
    const auto& cbs = v.cbs[static_cast<size_t>(i) & 1];
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = static_cast<uint32_t>(cbs.size());
    si.pCommandBuffers = cbs.data();
    const double t0 = now_us();
    CHECK(vkQueueSubmit(g.queue, 1, &si, g.fence));
    const double t1 = now_us();
    CHECK(vkWaitForFences(g.device, 1, &g.fence, VK_TRUE, UINT64_MAX));
    const double t2 = now_us();
    CHECK(vkResetFences(g.device, 1, &g.fence));
    submit.push_back(t1 - t0);
    wall.push_back(t2 - t0);
    // A reader's work, untimed: the span of this use is there.
    std::array<uint64_t, 4> got{};
    if (vkGetQueryPoolResults(g.device, g.queries, 2 * (static_cast<uint32_t>(i) & 1), 2,
                              sizeof(got), got.data(), 2 * sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT) ==
            VK_SUCCESS &&
        got[1] != 0 && got[3] != 0)
      ++spans;
    if (v.host_reset) vkResetQueryPool(g.device, g.queries, 2 * (static_cast<uint32_t>(i) & 1), 2);
  }
  v.submit_us.push_back(median(submit));
  v.wall_us.push_back(median(wall));
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int per_round = argc > 2 ? std::atoi(argv[2]) : 300;
  const VkDeviceSize fill_mib = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 64;
  Gpu g = open_gpu(fill_mib << 20);
  std::vector<Variant> vs;
  vs.push_back(plain(g));
  vs.push_back(separate(g, "sep_ts", false, false, false));
  vs.push_back(separate(g, "sep_ts_sim", false, false, true));
  vs.push_back(separate(g, "sep_copy", true, true, false));
  vs.push_back(separate(g, "layer", true, true, true));
  vs.push_back(separate(g, "late_sim", true, false, true));
  vs.push_back(in_buffer(g, "incb_ts", false));
  vs.push_back(in_buffer(g, "incb_copy", true));
  if (g.host_query_reset) {
    vs.push_back(separate(g, "sep_ts_host", false, false, false, true));
    vs.push_back(in_buffer(g, "incb_ts_host", false, true));
  }
  std::printf("device: %s, %d rounds x %d submissions, fill %llu MiB\n", g.name.c_str(), rounds,
              per_round, static_cast<unsigned long long>(fill_mib));
  std::vector<uint64_t> spans(vs.size(), 0);
  VkCommandBuffer reset = VK_NULL_HANDLE;
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < vs.size(); ++i) {
      reset_all(g, reset);
      run_round(g, vs[i], per_round, spans[i]);
    }
  }
  const double base = median(vs[0].wall_us);
  std::printf("%-12s %10s %10s %8s %8s\n", "variant", "submit_us", "wall_us", "ratio", "spans");
  for (size_t i = 0; i < vs.size(); ++i) {
    const double w = median(vs[i].wall_us);
    std::printf("%-12s %10.2f %10.2f %8.3f %8llu\n", vs[i].name, median(vs[i].submit_us), w,
                w / base, static_cast<unsigned long long>(spans[i]));
  }
  vkDeviceWaitIdle(g.device);
  return 0;
}
