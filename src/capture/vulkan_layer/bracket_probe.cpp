#include "capture/vulkan_layer/bracket_probe.hpp"

#include <time.h>

#include <algorithm>
#include <array>
#include <vector>

namespace latlab::capture {
namespace {

constexpr uint64_t kWaitNs = 1'000'000'000;

int64_t process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The probe's Vulkan objects, destroyed together.
struct ProbeObjects {
  VkDevice device;
  const ProbeFns& fn;
  VkQueryPool queries = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  ResultBuffer results;
  ProbeObjects(VkDevice d, const ProbeFns& f) : device(d), fn(f) {}
  ~ProbeObjects() {
    destroy_result_buffer(device, *fn.results, results);
    if (fence != VK_NULL_HANDLE) fn.DestroyFence(device, fence, nullptr);
    if (pool != VK_NULL_HANDLE) fn.DestroyCommandPool(device, pool, nullptr);
    if (queries != VK_NULL_HANDLE) fn.DestroyQueryPool(device, queries, nullptr);
  }
  ProbeObjects(const ProbeObjects&) = delete;
  ProbeObjects& operator=(const ProbeObjects&) = delete;
};

// Creates the probe's query pool, command pool and fence; why not, or
// nothing.
std::optional<std::string> create_objects(ProbeObjects& o, uint32_t family) {
  VkQueryPoolCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = 4;
  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.queueFamilyIndex = family;
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  if (o.fn.CreateQueryPool(o.device, &qi, nullptr, &o.queries) != VK_SUCCESS ||
      o.fn.CreateCommandPool(o.device, &pi, nullptr, &o.pool) != VK_SUCCESS ||
      o.fn.CreateFence(o.device, &fi, nullptr, &o.fence) != VK_SUCCESS)
    return "the driver refused a query pool, command pool or fence";
  auto results = create_result_buffer(o.device, *o.fn.results, 8 * sizeof(uint64_t));
  if (!results) return "the driver refused a host-visible result buffer";
  o.results = *results;
  return std::nullopt;
}

// begin: resets the four queries, then the layer's begin timestamp (0);
// stand-in: the program's first (1) and last (2) marker; end: the
// layer's end timestamp (3) and, as the layer's end, two copies to the
// host (the first waits unless the layer copies late; the layer's reset
// of its other pair would spoil the probe's own queries). As the layer's
// own: top of pipe, bottom of pipe. plain: the stand-in alone, resetting
// its two queries first.
std::optional<std::string> record_buffers(ProbeObjects& o, std::array<VkCommandBuffer, 4>& cb) {
  const ProbeFns& fn = o.fn;
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = o.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 4;
  if (fn.AllocateCommandBuffers(o.device, &ai, cb.data()) != VK_SUCCESS)
    return "the driver refused the probe's command buffers";
  for (size_t i = 0; i < cb.size(); ++i) {
    if (fn.set_loader_data != nullptr) fn.set_loader_data(o.device, cb[i]);
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    if (fn.BeginCommandBuffer(cb[i], &bi) != VK_SUCCESS) return "BeginCommandBuffer failed";
    if (i == 0) {
      fn.CmdResetQueryPool(cb[i], o.queries, 0, 4);
      fn.CmdWriteTimestamp(cb[i], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, o.queries, 0);
    } else if (i == 1 || i == 3) {
      if (i == 3) fn.CmdResetQueryPool(cb[i], o.queries, 1, 2);
      fn.CmdWriteTimestamp(cb[i], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, o.queries, 1);
      fn.CmdWriteTimestamp(cb[i], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, o.queries, 2);
    } else {
      fn.CmdWriteTimestamp(cb[i], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, o.queries, 3);
      record_copy_to_host(*fn.results, cb[i], o.queries, 2, 2, o.results, 0, fn.copy_waits);
      record_copy_to_host(*fn.results, cb[i], o.queries, 0, 2, o.results, 4, false);
    }
    if (fn.EndCommandBuffer(cb[i]) != VK_SUCCESS) return "EndCommandBuffer failed";
  }
  return std::nullopt;
}

// Submits `n` buffers and waits for them; `cpu` gets the process CPU time
// that took. False on a failure or a wait over kWaitNs.
bool submit_and_wait(ProbeObjects& o, VkQueue queue, const VkCommandBuffer* cbs, uint32_t n,
                     int64_t& cpu) {
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = n;
  si.pCommandBuffers = cbs;
  const int64_t c0 = process_cpu_ns();
  if (o.fn.QueueSubmit(queue, 1, &si, o.fence) != VK_SUCCESS) return false;
  const VkResult w = o.fn.WaitForFences(o.device, 1, &o.fence, VK_TRUE, kWaitNs);
  cpu = process_cpu_ns() - c0;
  return w == VK_SUCCESS && o.fn.ResetFences(o.device, 1, &o.fence) == VK_SUCCESS;
}

// What each round measured (ns).
struct ProbeSamples {
  std::vector<int64_t> before, after, cpu_plain, cpu_bracketed;
};

std::optional<std::string> run_rounds(ProbeObjects& o, VkQueue queue,
                                      std::array<VkCommandBuffer, 4>& cb, uint32_t rounds,
                                      const TicksToNs& to_ns, ProbeSamples& s) {
  for (uint32_t r = 0; r < rounds; ++r) {
    int64_t cpu = 0;
    if (!submit_and_wait(o, queue, cb.data(), 3, cpu))
      return "a probe submission failed or took over a second";
    s.cpu_bracketed.push_back(cpu);
    uint64_t t[4] = {};
    if (o.fn.GetQueryPoolResults(o.device, o.queries, 0, 4, sizeof(t), t, sizeof(uint64_t),
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
      return "the probe's timestamps could not be read";
    const auto h0 = to_ns(t[0]), h1 = to_ns(t[1]), h2 = to_ns(t[2]), h3 = to_ns(t[3]);
    if (!h0 || !h1 || !h2 || !h3) return "the probe's timestamps could not be mapped";
    s.before.push_back(*h1 - *h0);
    s.after.push_back(*h3 - *h2);
    if (!submit_and_wait(o, queue, &cb[3], 1, cpu))
      return "a probe submission failed or took over a second";
    s.cpu_plain.push_back(cpu);
  }
  return std::nullopt;
}

void fill_record(const ProbeSamples& s, uint32_t rounds, BracketRecord& out) {
  out.rounds = rounds;
  out.before_p50_ns = median(s.before);
  out.before_min_ns = *std::min_element(s.before.begin(), s.before.end());
  out.before_max_ns = *std::max_element(s.before.begin(), s.before.end());
  out.after_p50_ns = median(s.after);
  out.after_min_ns = *std::min_element(s.after.begin(), s.after.end());
  out.after_max_ns = *std::max_element(s.after.begin(), s.after.end());
  out.cpu_plain_p50_ns = median(s.cpu_plain);
  out.cpu_bracketed_p50_ns = median(s.cpu_bracketed);
}

}  // namespace

std::optional<std::string> probe_bracketing(VkDevice device, const ProbeFns& fn, uint32_t family,
                                            uint32_t index, uint32_t rounds, const TicksToNs& to_ns,
                                            BracketRecord& out) {
  out.queue_family = family;
  out.queue_index = index;
  ProbeObjects o(device, fn);
  VkQueue queue = VK_NULL_HANDLE;
  fn.GetDeviceQueue(device, family, index, &queue);
  if (queue == VK_NULL_HANDLE) return "the driver gave no queue";
  if (fn.set_loader_data != nullptr) fn.set_loader_data(device, queue);
  if (auto why = create_objects(o, family)) return why;
  std::array<VkCommandBuffer, 4> cb{};
  if (auto why = record_buffers(o, cb)) return why;
  ProbeSamples samples;
  if (auto why = run_rounds(o, queue, cb, rounds, to_ns, samples)) return why;
  if (rounds == 0) return "no rounds";
  fill_record(samples, rounds, out);
  return std::nullopt;
}

}  // namespace latlab::capture
