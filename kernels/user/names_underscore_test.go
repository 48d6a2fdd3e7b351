package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// RWKV's wkv kernels take their head size as -D_N_=64 and name their
// parameters _r, _k, _y: a knob, value, define or buffer may start with
// one underscore (mltop new writes such buffer names), not two (the
// compiler's own names), and the error says which.
func TestNamesWithALeadingUnderscore(t *testing.T) {
	withToolkit(t)
	src := `extern "C" __global__ void k(const T* _x, T* _y, int rows, int cols) { __shared__ float s[_N_]; }`
	m := strings.NewReplacer("WG", "_N_", "name: X", "name: _x", "name: Y", "name: _y", "args: [X, Y", "args: [_x, _y").Replace(usertest.Manifest("us")) +
		"values: {_T_: rows}\ndefines: {_D_: 1}\n"
	prog, _ := preparedProgram(t, usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src}), "")
	if code := prog.Code; !strings.Contains(code, "constexpr int _N_ = 64;") {
		t.Errorf("_N_ not declared ahead of the source:\n%s", code)
	}
	for _, c := range []struct{ from, to, want string }{
		{"_N_: {values", "__N: {values", `knobs.__N: "__N" is not a C identifier: it becomes a -D macro (a name starting with __ is the compiler's`},
		{"name: _x", "name: __x", `buffer name "__x": a name starting with __ is the compiler's`},
		{"_T_: rows", "_9: rows", `"_9" is not usable as a name: use letters, digits and _, starting with a letter or one _`},
		{"_D_: 1", "__D: 1", `"__D" is not a C identifier: a define becomes`},
	} {
		path := usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(m, c.from, c.to, 1), "k.cu": src})
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.to, err, c.want)
		}
	}
}
