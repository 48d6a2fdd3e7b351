package lint

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// A shared array sized by the function's own constants, its template
// parameters or namespace-scope constants gets a suggestion in the
// manifest's terms (TestMain loads each); what mltop cannot say is a
// "TODO" with a note.
func TestSharedArraySizesFromLocalConstants(t *testing.T) {
	const sig = "(const T* X, T* Y, int rows, int cols)"
	for _, c := range []struct {
		name, src, entry, want string
	}{
		{"constexpr in the function", "__global__ void k" + sig + " { constexpr int TILE = 16; __shared__ float s[TILE * TILE]; }",
			"k", "{name: s, bytes: 1024}"},
		{"const over a knob", "__global__ void k" + sig + " { const unsigned int N2 = 2 * WG; __shared__ float s[N2]; }",
			"k", `{name: s, bytes: "(2 * WG) * 4"}`},
		{"brace initializer, a constant of a constant", "__global__ void k" + sig + " { constexpr int A{4}; static constexpr auto B = A * 8u; __shared__ float s[B][A]; }",
			"k", "{name: s, bytes: 512}"},
		{"a local shadows the knob", "__global__ void k" + sig + " { constexpr int WG = 32; __shared__ float s[WG]; }",
			"k", "{name: s, bytes: 128}"},
		{"template parameter from the entry", "template <typename F, int BLOCK> __global__ void k" + sig + " { __shared__ F s[BLOCK / 32]; }",
			"k<T, WG>", `{name: s, bytes: "WG / 32 * 4"}`},
		{"template expression from the entry", "template <int BLOCK> __global__ void k" + sig + " { __shared__ float s[BLOCK]; }",
			"k<{WG * 2}>", `{name: s, bytes: "(WG * 2) * 4"}`},
		// a namespace's constant is the source's, as a file-scope one is:
		// manifest expressions may name it
		{"namespace-scope constant", "namespace ns { constexpr int BLOCK = 64; __global__ void k" + sig + " { __shared__ float s[BLOCK / 32]; } }",
			"ns::k", `{name: s, bytes: "BLOCK / 32 * 4"}`},
		{"sizeof a C type", "__global__ void k" + sig + " { constexpr int N = 64 / sizeof(float); __shared__ float s[N]; }",
			"k", "{name: s, bytes: 64}"},
		{"a constant declared twice differently: a TODO", "__global__ void k" + sig + " { if (rows) { const int n = 4; } const int n = 8; __shared__ float s[n]; }",
			"k", `{name: s, bytes: "TODO"}]` + "` (TODO: s's size n uses n, which a manifest expression does not know: write its bytes, or declare n in the manifest)"},
		{"a runtime value: a TODO", "__global__ void k" + sig + " { const int n = blockDim.x; __shared__ float s[n]; }",
			"k", `{name: s, bytes: "TODO"}]` + "` (TODO: s's size n uses blockDim"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := strings.Replace(usertest.Manifest("local_k"), "{entry: k,", "{name: k, entry: \""+c.entry+"\",", 1)
			path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": c.src})
			r := Check(path, Options{Static: true}).Manifests[0]
			mustContain(t, c.name, findingsOf(r), "lists no tgm: items", c.want)
		})
	}
}

// An mlx: body's constant filled from a {{MAX_N}} placeholder keeps the
// manifest's name (so the suggestion follows a sweep of it); a plain
// constexpr is its value.
func TestSharedArraySizesInMLXBodies(t *testing.T) {
	const yaml = `name: mlx_shared
dtypes: [f32]
knobs: {WG: {values: [32, 64], default: 32}, MAX_N: {values: [4, 8], default: 8}}
dims: {N: {default: 64}}
buffers:
  - {name: inp, dtype: f32, shape: [N]}
  - {name: out, dtype: f32, shape: [N], out: true}
mlx: {body_file: body.metal, inputs: [inp], outputs: [out]}
dispatches:
  - {grid: ["cdiv(N, WG)"], threads: [WG]}
check: none
`
	const body = `constexpr int MAX_N = {{MAX_N}};
threadgroup float Ms[MAX_N * MAX_N];
uint i = thread_position_in_grid.x;
Ms[0] = inp[0];
if (i < uint(inp_shape[0])) out[i] = Ms[0];
`
	for _, c := range []struct{ name, body, want string }{
		{"placeholder", body, `{name: Ms, bytes: "MAX_N * MAX_N * 4"}`},
		{"plain constexpr", strings.Replace(body, "{{MAX_N}}", "16", 1), "{name: Ms, bytes: 1024}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{"kernel.yaml": yaml, "body.metal": c.body})
			r := Check(path, Options{Static: true}).Manifests[0]
			mustContain(t, c.name, findingsOf(r), "threadgroup Ms[MAX_N * MAX_N] (in mlx_shared) but dispatch", c.want)
		})
	}
}
