// GlWorkload: the reference workloads (shaders/burn.comp, burn.frag) in
// GLSL 4.30 core / GLSL ES 3.10: compute passes over a vec4 storage buffer,
// or full-screen fragment passes ping-ponging between two RGBA32F targets.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/opengl/gl_state.hpp"
#include "latlab/bench/gl_rig.hpp"

namespace latlab {
namespace {

// The loop body is the one of burn.comp / burn.frag: values stay in
// [0.25, 0.75), so the cost per iteration does not depend on the data.
constexpr const char* kBurn = R"(
vec4 burn(vec4 x, uint complexity, uint pass_index) {
  vec4 c = vec4(0.137, 0.291, 0.413, 0.577) + float(pass_index) * 0.01;
  for (uint k = 0u; k < complexity; ++k) {
    x = fract(x * 1.618034 + c);
    x = x * x * 0.5 + 0.25;
  }
  return x;
}
)";

constexpr const char* kCompute = R"(
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(std430, binding = 0) buffer Data { vec4 v[]; } data;
uniform uvec2 size;
uniform uint complexity;
uniform uint pass_index;
void main() {
  uvec2 p = gl_GlobalInvocationID.xy;
  if (p.x >= size.x || p.y >= size.y) return;
  uint i = p.y * size.x + p.x;
  data.v[i] = burn(data.v[i], complexity, pass_index);
}
)";

constexpr const char* kVertex = R"(
out vec2 uv;
void main() {
  uv = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(uv * 2.0 - 1.0, 0.0, 1.0);
}
)";

constexpr const char* kFragment = R"(
in vec2 uv;
out vec4 color;
uniform sampler2D previous;
uniform uint complexity;
uniform uint pass_index;
void main() {
  color = burn(texture(previous, uv) * 0.5 + 0.25, complexity, pass_index);
}
)";

std::string header(bool gles) {
  return gles ? "#version 310 es\nprecision highp float;\nprecision highp int;\nprecision highp "
                "sampler2D;\n"
              : "#version 430 core\n";
}

Result<GLuint> compile(const gl::Api& api, GLenum type, const std::string& source) {
  const GLuint sh = api.CreateShader(type);
  const char* text = source.c_str();
  api.ShaderSource(sh, 1, &text, nullptr);
  api.CompileShader(sh);
  GLint ok = 0;
  api.GetShaderiv(sh, GL_COMPILE_STATUS, &ok);
  if (ok == 0) {
    std::vector<char> log(4096);
    api.GetShaderInfoLog(sh, static_cast<GLsizei>(log.size()), nullptr, log.data());
    api.DeleteShader(sh);
    return make_error(std::string("GLSL compile failed: ") + log.data());
  }
  return sh;
}

Result<GLuint> link(const gl::Api& api, const std::vector<GLuint>& shaders) {
  const GLuint prog = api.CreateProgram();
  for (GLuint s : shaders) api.AttachShader(prog, s);
  api.LinkProgram(prog);
  for (GLuint s : shaders) api.DeleteShader(s);
  GLint ok = 0;
  api.GetProgramiv(prog, GL_LINK_STATUS, &ok);
  if (ok == 0) {
    std::vector<char> log(4096);
    api.GetProgramInfoLog(prog, static_cast<GLsizei>(log.size()), nullptr, log.data());
    api.DeleteProgram(prog);
    return make_error(std::string("GLSL link failed: ") + log.data());
  }
  return prog;
}

}  // namespace

Result<void> GlWorkload::create_compute(const std::string& head) {
  const gl::Api& api = ctx_.state().api;
  if (!ctx_.report().compute_shaders) {
    return make_error("'" + ctx_.report().renderer +
                      "' has no compute shaders (GL 4.3 / GLES 3.1); use --form fragment");
  }
  const uint64_t bytes = uint64_t{width_} * height_ * 16;
  GLint64 max_ssbo = 0;
  api.GetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &max_ssbo);
  if (max_ssbo > 0 && bytes > static_cast<uint64_t>(max_ssbo)) {
    return make_error("GlWorkload: " + std::to_string(width_) + "x" + std::to_string(height_) +
                      " needs a storage buffer of " + std::to_string(bytes) +
                      " bytes; the limit is " + std::to_string(max_ssbo));
  }
  auto cs = compile(api, GL_COMPUTE_SHADER, head + kCompute);
  if (!cs) return cs.error();
  auto prog = link(api, {*cs});
  if (!prog) return prog.error();
  program_ = *prog;
  api.GenBuffers(1, &buffer_);
  api.BindBuffer(GL_SHADER_STORAGE_BUFFER, buffer_);
  std::vector<float> init(static_cast<size_t>(width_) * height_ * 4, 0.5f);
  api.BufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes), init.data(),
                 GL_DYNAMIC_COPY);
  api.BindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  loc_size_ = api.GetUniformLocation(program_, "size");
  return {};
}

Result<void> GlWorkload::create_fragment(const std::string& head) {
  const gl::Api& api = ctx_.state().api;
  GLint max_side = 0;
  api.GetIntegerv(GL_MAX_TEXTURE_SIZE, &max_side);
  if (static_cast<GLint>(std::max(width_, height_)) > max_side) {
    return make_error("GlWorkload: " + std::to_string(width_) + "x" + std::to_string(height_) +
                      " exceeds GL_MAX_TEXTURE_SIZE " + std::to_string(max_side));
  }
  auto vs = compile(api, GL_VERTEX_SHADER, header(ctx_.gles()) + kVertex);
  if (!vs) return vs.error();
  auto fs = compile(api, GL_FRAGMENT_SHADER, head + kFragment);
  if (!fs) {
    api.DeleteShader(*vs);
    return fs.error();
  }
  auto prog = link(api, {*vs, *fs});
  if (!prog) return prog.error();
  program_ = *prog;
  api.GenVertexArrays(1, &vao_);
  if (Result<void> t = create_targets(); !t) return t;
  api.UseProgram(program_);
  api.Uniform1i(api.GetUniformLocation(program_, "previous"), 0);
  api.UseProgram(0);
  return {};
}

Result<void> GlWorkload::create_targets() {
  const gl::Api& api = ctx_.state().api;
  api.GenTextures(2, textures_);
  api.GenFramebuffers(2, fbos_);
  for (int i = 0; i < 2; ++i) {
    api.BindTexture(GL_TEXTURE_2D, textures_[i]);
    api.TexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA32F, static_cast<GLsizei>(width_),
                     static_cast<GLsizei>(height_));
    // RGBA32F is not filterable everywhere (GLES): sample with NEAREST.
    api.TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    api.TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    api.BindFramebuffer(GL_FRAMEBUFFER, fbos_[i]);
    api.FramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, textures_[i], 0);
    if (api.CheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
      api.BindFramebuffer(GL_FRAMEBUFFER, 0);
      return make_error("GlWorkload: an RGBA32F framebuffer is not complete on '" +
                        ctx_.report().renderer + "' (GLES needs EXT_color_buffer_float)");
    }
    api.ClearColor(0.5f, 0.5f, 0.5f, 0.5f);
    api.Clear(GL_COLOR_BUFFER_BIT);
  }
  api.BindFramebuffer(GL_FRAMEBUFFER, 0);
  api.BindTexture(GL_TEXTURE_2D, 0);
  return {};
}

Result<std::unique_ptr<GlWorkload>> GlWorkload::create(GlContext& ctx, uint32_t width,
                                                       uint32_t height, WorkloadForm form) {
  if (width == 0 || height == 0) return make_error("GlWorkload: empty target");
  if (!ctx.is_current())
    return make_error("GlWorkload::create: the GL context is not current on this thread");
  const gl::Api& api = ctx.state().api;
  if (!api.workload_loaded)
    return make_error("GlWorkload: the GL context lacks the workloads' entry points");
  std::unique_ptr<GlWorkload> w(new GlWorkload(ctx));
  w->width_ = width;
  w->height_ = height;
  w->form_ = form;
  const std::string head = header(ctx.gles()) + kBurn;
  Result<void> made =
      form == WorkloadForm::compute ? w->create_compute(head) : w->create_fragment(head);
  if (!made) return made.error();
  w->loc_complexity_ = api.GetUniformLocation(w->program_, "complexity");
  w->loc_pass_ = api.GetUniformLocation(w->program_, "pass_index");
  if (const std::string e = gl::drain_errors(api); !e.empty())
    return make_error("GlWorkload: GL error " + e);
  return w;
}

GlWorkload::~GlWorkload() {
  if (!ctx_.is_current()) return;  // the context's destruction frees them
  const gl::Api& api = ctx_.state().api;
  if (program_ != 0) api.DeleteProgram(program_);
  if (buffer_ != 0) api.DeleteBuffers(1, &buffer_);
  if (vao_ != 0) api.DeleteVertexArrays(1, &vao_);
  if (fbos_[0] != 0) api.DeleteFramebuffers(2, fbos_);
  if (textures_[0] != 0) api.DeleteTextures(2, textures_);
}

void GlWorkload::record_pass(uint32_t complexity, uint32_t pass) {
  const gl::Api& api = ctx_.state().api;
  api.UseProgram(program_);
  api.Uniform1ui(loc_complexity_, complexity);
  api.Uniform1ui(loc_pass_, pass);
  if (form_ == WorkloadForm::compute) {
    api.Uniform2ui(loc_size_, width_, height_);
    api.BindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer_);
    // Each pass reads what the previous one wrote.
    api.MemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    api.DispatchCompute((width_ + 7) / 8, (height_ + 7) / 8, 1);
  } else {
    const uint32_t src = pass % 2;
    api.BindFramebuffer(GL_FRAMEBUFFER, fbos_[1 - src]);
    api.Viewport(0, 0, static_cast<GLsizei>(width_), static_cast<GLsizei>(height_));
    api.ActiveTexture(GL_TEXTURE0);
    api.BindTexture(GL_TEXTURE_2D, textures_[src]);
    api.BindVertexArray(vao_);
    api.DrawArrays(GL_TRIANGLES, 0, 3);
    api.BindVertexArray(0);
    api.BindTexture(GL_TEXTURE_2D, 0);
    api.BindFramebuffer(GL_FRAMEBUFFER, 0);
  }
  api.UseProgram(0);
}

}  // namespace latlab
