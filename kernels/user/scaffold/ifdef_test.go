package scaffold

import (
	"slices"
	"strings"
	"testing"
)

const floatXChoice = `#if defined(ENABLE_BF16)
typedef __nv_bfloat16 floatX;
#elif defined(ENABLE_FP16)
typedef half floatX;
#else
typedef float floatX;
#endif
`

// The type an #if picks for floatX, with the source's own #defines (llm.c
// defines ENABLE_BF16 before including common.h).
func TestChooseTypedef(t *testing.T) {
	for _, c := range []struct {
		name, src     string
		ok            bool
		ctype         string
		tested, fixed []string
	}{
		{"nothing defined: the #else", floatXChoice, true, "float", []string{"ENABLE_BF16", "ENABLE_FP16"}, nil},
		{"the source defines bf16", "#define ENABLE_BF16\n" + floatXChoice, true, "__nv_bfloat16", []string{"ENABLE_BF16", "ENABLE_FP16"}, []string{"ENABLE_BF16"}},
		{"the source defines fp16", "#define ENABLE_FP16 1 // half\n" + floatXChoice, true, "half", []string{"ENABLE_BF16", "ENABLE_FP16"}, []string{"ENABLE_FP16"}},
		{"defined then undefined", "#define ENABLE_BF16\n#undef ENABLE_BF16\n" + floatXChoice, true, "float", []string{"ENABLE_BF16", "ENABLE_FP16"}, nil},
		{"a define in a dead branch", "#if 0\n#define ENABLE_BF16\n#endif\n" + floatXChoice, true, "float", []string{"ENABLE_BF16", "ENABLE_FP16"}, nil},
		{"#ifdef and using", "#ifndef USE_HALF\nusing floatX = float;\n#else\nusing floatX = half;\n#endif\n", true, "float", []string{"USE_HALF"}, nil},
		{"an unknown group elsewhere is skipped", "#if __CUDA_ARCH__ >= 800\n#define X 2\n#else\n#define X 1\n#endif\n#define ENABLE_BF16\n" + floatXChoice, true, "__nv_bfloat16", []string{"ENABLE_BF16", "ENABLE_FP16"}, []string{"ENABLE_BF16"}},
		{"the typedef in an unknown group", "#if __CUDA_ARCH__ >= 800\ntypedef half floatX;\n#else\ntypedef float floatX;\n#endif\n", false, "", nil, nil},
		{"a define inside an unknown group is not followed", "#if FOO > 1\n#define ENABLE_BF16\n#endif\n" + floatXChoice, true, "float", []string{"ENABLE_BF16", "ENABLE_FP16"}, nil},
		{"no typedef of the name", "typedef float other;\n", false, "", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, ok := chooseTypedef(c.src, "floatX")
			if ok != c.ok || ok && (ch.ctype != c.ctype || !slices.Equal(ch.tested, c.tested) || !slices.Equal(ch.fixed, c.fixed)) {
				t.Errorf("got %+v ok=%v, want %q tested %v fixed %v ok=%v", ch, ok, c.ctype, c.tested, c.fixed, c.ok)
			}
		})
	}
}

// mltop new writes the dtype a header's #if picks: bf16 only when the
// program defines ENABLE_BF16 before including it, else f32 with a TODO.
func TestScaffoldDTypeFromHeaderIf(t *testing.T) {
	kernel := "#include \"common.h\"\n__global__ void k(floatX* out, const floatX* inp, int N) { int i = threadIdx.x; if (i < N) out[i] = inp[i]; }\n"
	for _, c := range []struct{ main, want string }{
		{"#define ENABLE_BF16\n" + kernel, "dtypes: [bf16]   # the source defines ENABLE_BF16, so its #if makes floatX __nv_bfloat16"},
		{kernel, "dtypes: [f32]   # TODO: without ENABLE_BF16 or ENABLE_FP16 the source's #if makes floatX float"},
	} {
		read := readFrom(map[string]string{"common.h": floatXChoice})
		res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/k.cu", Src: c.main, Dir: "/w", Read: read})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Text, c.want) {
			t.Errorf("manifest lacks %q:\n%s", c.want, res.Text)
		}
		checkNotesHaveTODOs(t, res)
	}
}

// An #if that picks double for the element type under a macro: mltop new
// says to define the macro and give the buffers f64 (a dtype mltop does
// not declare per spec), not a defines: expression on the dtype; bf16 or
// half in the other branches keep that advice.
func TestScaffoldDTypeDoubleBranch(t *testing.T) {
	kernel := "__global__ void k(real* out, const real* inp, int N) { int i = threadIdx.x; if (i < N) out[i] = inp[i]; }\n"
	for _, c := range []struct{ ifs, want, not string }{
		{"#ifdef USE_DP\n    typedef double real;\n#else\n    typedef float real;\n#endif\n",
			"dtypes: [f32]   # TODO: without USE_DP the source's #if makes real float; for double, set defines: {USE_DP: 1} and give the buffers dtype: f64 in place of real", "== bf16"},
		{"#ifndef SINGLE\ntypedef double real;\n#else\ntypedef float real;\n#endif\n", "", "defines: {SINGLE: 1}"},
		{strings.ReplaceAll(floatXChoice, "floatX", "real"), "{ENABLE_BF16: \"real == bf16\"}", "f64"},
	} {
		res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/k.cu", Src: c.ifs + kernel, Dir: "/w", Read: readFrom(nil)})
		if err != nil {
			t.Fatal(err)
		}
		if c.want != "" && !strings.Contains(res.Text, c.want) || strings.Contains(res.Text, c.not) {
			t.Errorf("manifest lacks %q or has %q:\n%s", c.want, c.not, res.Text)
		}
	}
}

// A half-written source (a #define without a name, an #elif without a
// condition, an #endif too many) never panics mltop new: the typedef is
// read where the groups still make sense.
func FuzzChooseTypedef(f *testing.F) {
	for _, s := range []string{floatXChoice, "#define (\n" + floatXChoice, "#undef\t(\n", "#define\n", "#if\n#endif\n", "#else\ntypedef float floatX;\n",
		"#if 1\n#elif\n#endif\ntypedef float floatX;\n", "#endif\n#endif\n", "#ifdef\ntypedef half floatX;\n#endif\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if ch, ok := chooseTypedef(src, "floatX"); ok && ch.ctype == "" {
			t.Errorf("ok without a type: %+v", ch)
		}
	})
}
