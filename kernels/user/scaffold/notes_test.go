package scaffold

import (
	"strings"
	"testing"
)

// missingTODOs are the notes of a Result whose TODO is on no line of its
// manifest: each note's text after "TODO: " must follow a # on some line.
func missingTODOs(res Result) []string {
	var missing []string
	for i, n := range res.Notes {
		if i >= len(res.todos) || res.todos[i] == "" {
			missing = append(missing, n+" (no TODO recorded)")
			continue
		}
		found := false
		for _, line := range strings.Split(res.Text, "\n") {
			at := strings.Index(line, "TODO: "+res.todos[i])
			found = found || at >= 0 && strings.Contains(line[:at], "#")
		}
		if !found {
			missing = append(missing, n)
		}
	}
	return missing
}

// checkNotesHaveTODOs fails the test when a note of `mltop new`'s summary
// has no # TODO in the manifest.
func checkNotesHaveTODOs(t *testing.T, res Result) {
	t.Helper()
	if len(res.Notes) != len(res.todos) {
		t.Errorf("%d notes, %d TODOs", len(res.Notes), len(res.todos))
	}
	for _, n := range missingTODOs(res) {
		t.Errorf("the note %q has no # TODO in the manifest:\n%s", n, res.Text)
	}
}

// The check itself: a note whose TODO is missing, not in a comment, or
// not recorded is caught; one in a comment is not.
func TestMissingTODOs(t *testing.T) {
	text := "a: 1   # TODO: set a\nb: \"TODO: set b\"\nc: 3   # from x; TODO: set c (guessed)\n"
	for _, c := range []struct {
		todo    string
		missing bool
	}{
		{"set a", false},
		{"set c", false},
		{"set b", true}, // in a value, not a comment
		{"set d", true},
		{"", true},
	} {
		got := missingTODOs(Result{Text: text, Notes: []string{"the note"}, todos: []string{c.todo}})
		if (len(got) > 0) != c.missing {
			t.Errorf("TODO %q: missing %v, want %v", c.todo, got, c.missing)
		}
	}
}

// TestEveryNoteHasItsTODO reaches each kind of note `mltop new` writes
// that TestScaffoldRealisticSources does not, and checks that each note of
// the summary is a # TODO on the line it is about.
func TestEveryNoteHasItsTODO(t *testing.T) {
	for _, c := range []struct {
		name, file, src string
		entries         []string
		note, line      string // a note of the summary, and the manifest line that carries its TODO
	}{
		{name: "overloads", file: "o.cu", entries: []string{"k"},
			src:  "__global__ void k(float* y, int n) { y[0] = 1; }\n__global__ void k(double* y, int n) { y[0] = 1; }\n",
			note: "k has 2 overloads: used the one at line 1", line: "  - entry: k   # TODO: one of 2 overloads (line 1)"},
		{name: "no buffer visibly written", file: "r.cu",
			src:  "__global__ void k(const float* x, float* y, int n) { float a = y[0] + x[0]; }\n",
			note: "no buffer is visibly written: guessed y is the output", line: "{name: y, dtype: f32, shape: [n], out: true}   # TODO: no buffer is written"},
		{name: "a non-const input and an output whose use escapes", file: "e.cu",
			src:  "__global__ void k(float* x, float* y, int n) { float a = x[0]; store128(y + 1, a); }\n",
			note: "k: x is not const but only read", line: `{name: x, dtype: f32, shape: [n], init: "normal(0, 1)"}   # TODO: not const but only read by k`},
		{name: "an output whose use escapes", file: "e.cu",
			src:  "__global__ void k(float* x, float* y, int n) { float a = x[0]; store128(y + 1, a); }\n",
			note: "k: y is not const and its use could not be followed", line: "{name: y, dtype: f32, shape: [n], out: true}   # TODO: not const, and mltop could not follow its use"},
		{name: "a half scalar", file: "h.cu",
			src:  "#include <cuda_fp16.h>\n__global__ void k(float* y, __half s, int n) { y[0] = (float)s; }\n",
			note: "__half parameter s is value s = 1.0: set the value you run with (the kernel gets it rounded to __half)", line: "  s: 1.0   # TODO: the value the kernel gets for s (passed as __half, rounded to nearest even)"},
		{name: "a struct taken by value", file: "p.cu",
			src:  "struct P {\n  const float* x;\n  int shape[2];\n  __device__ int size() const { return shape[0]; }\n  struct { int a; } in;\n  float eps = 0;\n};\n__global__ void k(float* y, P p) { y[0] = p.x[0]; }\n",
			note: "k: p is struct P taken by value: mltop new cannot read its fields (struct P: line 5 defines a struct inside it with a member of that type: define the inner type on its own and declare the member by its name); give the arg as a mapping, {x: …, shape: …, in: …} (fields x, shape, in, eps)",
			line: "args: [y, 0]   # the kernel's parameters, in order; TODO: p is struct P taken by value: replace this 0 with a mapping of its fields, {x: …, shape: …, in: …}"},
		{name: "a scalar mltop cannot pass", file: "u.cu",
			src:  "__global__ void k(float* y, long double v, int n) { y[0] = v; }\n",
			note: "k: parameter v has type long double, which mltop cannot pass", line: "args: [y, 0, n]   # the kernel's parameters, in order; TODO: the arg of v (long double"},
		{name: "a CUDA vector taken by value", file: "v.cu",
			src:  "struct B { int n; uint3 g; };\n__global__ void k(float* y, const float3 v, dim3 d, B b, int n) { y[0] = v.x + d.x + b.g.x; }\n",
			note: "k: v is CUDA vector type float3 taken by value: its fields are 0 ({x: 0, y: 0, z: 0})",
			line: "args: [y, {x: 0, y: 0, z: 0}, {x: 0, y: 0, z: 0}, {n: n, g: {x: 0, y: 0, z: 0}}, n]   # the kernel's parameters, in order; TODO: v is float3 taken by value"},
		{name: "a template knob", file: "t.cu",
			src:  "template <int VEC = 4>\n__global__ void k(float* y, int n) { y[0] = VEC; }\n",
			note: "template parameter VEC of k is knob VEC with the one value 4", line: "  VEC: {values: [4], default: 4}   # TODO: the values of template parameter VEC to sweep"},
		{name: "a block size fixed by the source", file: "f.cu",
			src:  "#define BLOCK_SIZE 128\n__global__ void k(float* y, int n) { __shared__ float s[BLOCK_SIZE]; y[0] = s[0]; }\n",
			note: "BLOCK_SIZE is fixed by the source (line 1)", line: "BLOCK_SIZE: {values: [128], default: 128, doc: threads per group}   # TODO: fixed by the source"},
		{name: "a type an #if chooses, with no default", file: "d.cu",
			src:  "#if defined(USE_HALF)\ntypedef __half floatX;\n#elif defined(USE_BF16)\ntypedef __nv_bfloat16 floatX;\n#endif\n__global__ void k(floatX* y, int n) { y[0] = 0; }\n",
			note: "floatX's type is chosen by an #if in the source", line: "dtypes: [f32]   # TODO: an #if in the source chooses floatX's type"},
		{name: "a table the host fills", file: "c.cu",
			src:  "__constant__ float c_k[4];\n__global__ void k(float* y, int n) { y[0] = c_k[0]; }\nint main() { float h[4]; cudaMemcpyToSymbol(c_k, h, 16); }\n",
			note: "c_k is filled by host code (cudaMemcpyToSymbol at line 3), which mltop blanks", line: "{name: c_k, symbol: true, dtype: f32, shape: [4], init: \"normal(0, 1)\"}   # `__constant__ float c_k[4]` (line 1); TODO: the host fills it"},
		{name: "a table of a type no dtype has", file: "c.cu",
			src:  "__constant__ double c_k[4];\n__global__ void k(float* y, int n) { y[0] = c_k[0]; }\nint main() { double h[4]; cudaMemcpyToSymbol(c_k, h, 32); }\n",
			note: "c_k: mltop has no dtype for its element type double", line: "TODO: element type double: give the dtype (and shape) whose bytes match it"},
		{name: "a pointer global the host fills", file: "c.cu",
			src:  "__device__ float* d_p;\n__global__ void k(float* y, int n) { y[0] = d_p[0]; }\nint main() { float* p; cudaMemcpyToSymbol(d_p, &p, sizeof(p)); }\n",
			note: "d_p is a pointer global the host fills", line: "  # TODO: the host fills pointer global d_p (cudaMemcpyToSymbol at line 3)"},
		{name: "Metal: a buffer after the parameter struct", file: "m.metal",
			src:  "struct P { uint n; float s; };\nkernel void k(device float* y [[buffer(0)]], constant P& p [[buffer(1)]], device const float* x [[buffer(2)]], uint i [[thread_position_in_grid]]) { y[i] = p.s * x[i]; }\n",
			note: "k: p (P) is a struct: its fields n, s are the args after the buffers", line: "args: [y, x, n, s]"},
		{name: "Metal: a struct mltop cannot read", file: "q.metal",
			src:  "#include \"q.h\"\nkernel void k(device float* y [[buffer(0)]], constant Q& q [[buffer(1)]], uint i [[thread_position_in_grid]]) { y[i] = 0; }\n",
			note: "k: q (constant Q&): mltop cannot read that type's fields", line: "args: [y]   # the kernel's parameters, in order; TODO: add the fields of q"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/" + c.file, Src: c.src, Entries: c.entries, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(res.Notes, "\n"), c.note) {
				t.Errorf("notes lack %q:\n%s", c.note, strings.Join(res.Notes, "\n"))
			}
			if !strings.Contains(res.Text, c.line) {
				t.Errorf("manifest lacks %q:\n%s", c.line, res.Text)
			}
			checkNotesHaveTODOs(t, res)
		})
	}
}

// A half scalar is passed (rounded), so no note says otherwise.
func TestHalfScalarIsPassed(t *testing.T) {
	res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/h.cu", Src: "#include <cuda_fp16.h>\n__global__ void k(int n, half a, const half* x, half* y) { y[0] = a * x[0]; }\n", Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	all := res.Text + strings.Join(res.Notes, "\n")
	for _, stale := range []string{"does not pass", "take it as float"} {
		if strings.Contains(all, stale) {
			t.Errorf("new says %q of a half scalar, which mltop passes:\n%s", stale, all)
		}
	}
}

// A kernel whose only pointers are inside a struct taken by value that
// new cannot read is refused naming the struct, its fields, why and what
// to write.
func TestStructOnlyKernelRefusal(t *testing.T) {
	src := "struct Params { const float* x; float* out; struct { long n; } in; };\n__global__ void k(const Params p) { p.out[0] = p.x[0]; }\n"
	_, err := Manifest(Request{Name: "my_k", SrcPath: "/w/s.cu", Src: src, Dir: "/w"})
	if err == nil {
		t.Fatal("a kernel with only a struct was scaffolded")
	}
	for _, want := range []string{"k takes struct Params p by value (fields x, out, in), which mltop new cannot read (struct Params: line 1 defines a struct inside it", "write kernel.yaml by hand", "A struct taken by value"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// A type parameter of the entry is the dtype name mltop binds per dtype:
// a typedef of the same name elsewhere in the source (member typedefs of
// two class specializations, one per branch of an #if) says nothing of its
// type, so no note claims an #if chooses it, nor that a typedef fixes it.
func TestTemplateParamDTypeIgnoresTypedefs(t *testing.T) {
	for _, c := range []struct{ name, decls string }{
		{"member typedefs of two specializations", "template<typename T> struct Other {};\ntemplate<> struct Other<float> { typedef double Real; };\ntemplate<> struct Other<double> { typedef float Real; };\n"},
		{"a typedef per #if branch", "#ifdef DP\ntypedef double Real;\n#else\ntypedef float Real;\n#endif\n"},
		{"one typedef", "struct Acc { typedef double Real; };\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := c.decls + "template<typename Real>\n__global__ void norm(Real* y, const Real* x, Real s, int n) { int i = threadIdx.x; if (i < n) y[i] = s * x[i]; }\n"
			res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/r.cu", Src: src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			all := res.Text + strings.Join(res.Notes, "\n")
			for _, stale := range []string{"#if", "typedef fixes"} {
				if strings.Contains(all, stale) {
					t.Errorf("new says %q of template parameter Real:\n%s", stale, all)
				}
			}
			if !strings.Contains(res.Text, "dtype_name: Real") || !strings.Contains(res.Text, "dtypes: [f32, f16, bf16]") {
				t.Errorf("Real is not the per-dtype name:\n%s", res.Text)
			}
			checkNotesHaveTODOs(t, res)
		})
	}
}
