// Reference compute workload: `complexity` iterations of real arithmetic per
// element of a width x height buffer of vec4, read-modify-write in place.
// The values stay in [0.25, 0.75): no NaN, no denormals, so the cost per
// iteration does not depend on the data.
#version 450
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) buffer Data { vec4 v[]; } data;

layout(push_constant) uniform Push {
  uint width;
  uint height;
  uint complexity;  // iterations per element (>= 1)
  uint pass;        // pass index: varies the constants so passes differ
} pc;

void main() {
  const uvec2 p = gl_GlobalInvocationID.xy;
  if (p.x >= pc.width || p.y >= pc.height) return;
  const uint i = p.y * pc.width + p.x;
  vec4 x = data.v[i];
  const vec4 c = vec4(0.137, 0.291, 0.413, 0.577) + float(pc.pass) * 0.01;
  for (uint k = 0u; k < pc.complexity; ++k) {
    x = fract(x * 1.618034 + c);
    x = x * x * 0.5 + 0.25;
  }
  data.v[i] = x;
}
