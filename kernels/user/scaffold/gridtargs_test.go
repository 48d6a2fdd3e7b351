package scaffold

import (
	"strings"
	"testing"
)

const vecAddKernel = `template <typename T, int VEC>
__global__ void vec_add(const T* a, const T* b, T* c, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    for (int j = 0; j < VEC; j++) if (i + j < n) c[i + j] = a[i + j] + b[i + j];
}
`

// A launch's grid that has the literal the launch passes as a template
// argument that became a knob writes the knob's name (sure), or keeps the
// literal with a TODO saying what the grid assumes (unsure).
func TestScaffoldGridTemplateLiteral(t *testing.T) {
	for _, tc := range []struct {
		name, host string
		want       []string
		not        []string
	}{
		{"literal", `void launch(const float* a, const float* b, float* c, int n) {
    int threads = 256;
    vec_add<float, 4><<<(n/4 + threads - 1)/threads, threads>>>(a, b, c, n);
}`, []string{`grid: ["(n/VEC + threads - 1)/threads", 1, 1]   # from the launch at line 8; its 4 is VEC, the launch's template argument`},
			[]string{"N/4"}},
		{"constant", `#define VEC_SIZE 4
void launch(const float* a, const float* b, float* c, int n) {
    vec_add<float, VEC_SIZE><<<(n / VEC_SIZE + 127) / 128, 128>>>(a, b, c, n);
}`, []string{`grid: ["(n / VEC + 127) / 128", 1, 1]   # from the launch at line 8; its VEC_SIZE is VEC, the launch's template argument`}, []string{"N / 4"}},
		{"a literal that is the block size too", `void launch(const float* a, const float* b, float* c, int n) {
    vec_add<float, 128><<<(n + 127) / 128, 128>>>(a, b, c, n);
}`, []string{`grid: ["(n + 127) / 128", 1, 1]`, "TODO: the grid assumes VEC=128 (its 128 may be VEC's template argument, or the block size): write VEC where it is"},
			[]string{"/ VEC"}},
		{"one", `void launch(const float* a, const float* b, float* c, int n) {
    vec_add<float, 1><<<(n + 255) / 256 * 1, 256>>>(a, b, c, n);
}`, []string{`"(n + 255) / 256 * 1"`, "TODO: the grid assumes VEC=1"}, nil},
		{"not in the grid", `void launch(const float* a, const float* b, float* c, int n) {
    vec_add<float, 4><<<(n + 255) / 256, 256>>>(a, b, c, n);
}`, []string{`grid: ["(n + 255) / 256", 1, 1]   # from the launch at line 7`}, []string{"assumes", "is VEC"}},
		{"part of another number", `void launch(const float* a, const float* b, float* c, int n) {
    vec_add<float, 4><<<(n + 43) / 44, 44>>>(a, b, c, n);
}`, []string{`"(n + 43) / 44"`}, []string{"assumes", "is VEC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := vecAddKernel + tc.host + "\n"
			res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/k.cu", Src: src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("manifest lacks %q:\n%s", w, res.Text)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(res.Text, w) {
					t.Errorf("manifest has %q:\n%s", w, res.Text)
				}
			}
			checkNotesHaveTODOs(t, res)
			load(t, res.Text, "k.cu", src)
		})
	}
}

func TestReplaceNumber(t *testing.T) {
	for _, tc := range []struct{ e, want string }{
		{"(n/4 + t - 1)/t", "(n/V + t - 1)/t"},
		{"4*4", "V*V"},
		{"44 + 4.0 + 0.4 + 4u + x4 + 4", "44 + 4.0 + 0.4 + 4u + x4 + V"},
	} {
		if got := replaceNumber(tc.e, "4", "V"); got != tc.want {
			t.Errorf("replaceNumber(%q) = %q, want %q", tc.e, got, tc.want)
		}
	}
}
