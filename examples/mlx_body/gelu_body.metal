// The body of an MLX metal_kernel: inp, out, inp_shape and
// thread_position_in_grid are parameters mltop writes; T is the template's.
uint elem = thread_position_in_grid.x;
uint count = uint(inp_shape[0]) * uint(inp_shape[1]);
if (elem >= count) {
  return;
}
float v = float(inp[elem]);
float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
out[elem] = T(0.5f * v * (1.0f + metal::tanh(inner)));
