// One triangle that covers the whole target (no vertex buffer): vertices
// (-1,-1), (3,-1), (-1,3); uv runs 0..1 over the visible part.
#version 450
layout(location = 0) out vec2 uv;

void main() {
  uv = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2));
  gl_Position = vec4(uv * 2.0 - 1.0, 0.0, 1.0);
}
