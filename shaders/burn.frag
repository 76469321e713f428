// Fragment form of the reference workload: a post-process pass that samples
// the previous pass's target and does `complexity` iterations of arithmetic
// per pixel. The values stay in [0.25, 0.75): no NaN, no denormals.
#version 450
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

layout(set = 0, binding = 0) uniform sampler2D previous;

layout(push_constant) uniform Push {
  uint complexity;  // iterations per pixel (>= 1)
  uint pass;        // pass index: varies the constants so passes differ
} pc;

void main() {
  vec4 x = texture(previous, uv) * 0.5 + 0.25;
  const vec4 c = vec4(0.137, 0.291, 0.413, 0.577) + float(pc.pass) * 0.01;
  for (uint k = 0u; k < pc.complexity; ++k) {
    x = fract(x * 1.618034 + c);
    x = x * x * 0.5 + 0.25;
  }
  color = x;
}
