package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

func TestParseEntry(t *testing.T) {
	vars := expr.Vars{"floatX": expr.DType, "BLOCK": expr.Int, "WG": expr.Int, "causal": expr.Bool, "T": expr.Int}
	env := map[string]any{"floatX": "bf16", "BLOCK": 128, "WG": 256, "causal": true, "T": 1024}
	sc := entryScope{dtype: "floatX", vars: vars, declared: func(n string) bool { return n == "Packed" },
		compile: func(src string, off int) (*expr.Program, error) {
			return expr.Compile(src, vars, expr.Where{Field: "entry"})
		}}
	for _, c := range []struct{ in, name, want string }{
		{"layernorm_fwd", "layernorm_fwd", "layernorm_fwd"},
		{"ns::inner::kern", "ns::inner::kern", "ns::inner::kern"},
		{"kern<floatX, 4>", "kern", "kern<__nv_bfloat16, 4>"},
		{"kern<floatX, BLOCK * 2>", "kern", "kern<__nv_bfloat16, 128 * 2>"},
		{"kern<floatX, {WG / 32}>", "kern", "kern<__nv_bfloat16, 8>"},
		{"kern<causal, T>", "kern", "kern<true, 1024>"},
		{"kern<Packed<floatX>, cub::BLOCK>", "kern", "kern<Packed<__nv_bfloat16>, cub::BLOCK>"},
		{"kern<(BLOCK > 64), float>", "kern", "kern<(128 > 64), float>"},
		{"  ns::k < floatX >  ", "ns::k", "ns::k< __nv_bfloat16 >"},
	} {
		e, err := parseEntry(c.in, sc)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		got, err := e.render(env, "floatX", "__nv_bfloat16")
		if err != nil || got != c.want || e.name != c.name {
			t.Errorf("%s: %q (name %q, %v), want %q (name %q)", c.in, got, e.name, err, c.want, c.name)
		}
	}
	for _, c := range []struct {
		in, want string
		off      int
	}{
		{"kern<floatX, 4", "unbalanced '<'", 14},
		{"kern<floatX, (4>", "unbalanced '<'", 16},
		{"kern<floatX, 4)>", "')' without its '('", 14},
		{"kern<floatX, BLOK>", "unknown name BLOK in the template arguments: known are the dtype name floatX and BLOCK, T, WG, causal, floatX", 13},
		{"kern<{WG>", "'{' without its '}'", 5},
		{"kern<4> x", "unexpected \"x\"", 7},
		{"ns::", "a name must follow '::'", 4},
		{"4kern", "does not start with a function name", 0},
		{"kern(x)", "unexpected \"(x)\" after the name", 4},
	} {
		_, err := parseEntry(c.in, sc)
		ee, ok := err.(*entryError)
		if !ok || !strings.Contains(ee.Msg, c.want) || ee.Off != c.off {
			t.Errorf("%s: %v (%#v), want %q at %d", c.in, err, err, c.want, c.off)
		}
	}
}

func TestValues(t *testing.T) {
	y := usertest.Manifest("t_values")
	y = strings.Replace(y, "rules:", "values:\n  eps: 1e-5\n  scale: \"1.0 / sqrt(cols)\"\n  half: \"rows / 2\"\n  twice: \"scale * 2\"\nrules:", 1)
	y = strings.Replace(y, "grid: [rows]", "grid: [half]", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source}))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	e, err := f.env(s)
	if err != nil {
		t.Fatal(err)
	}
	if e["eps"] != 1e-5 || e["scale"] != 0.25 || e["half"] != 4 || e["twice"] != 0.5 {
		t.Errorf("values %v", e)
	}
	p, err := f.Plan(s, cudaDev)
	if err != nil || p.Dispatches[0].Grid[0] != 4 {
		t.Fatalf("grid from a value: %v %v", p, err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"eps: 1e-5", "eps: \"sqrt(0 - rows)\"", "value eps 'sqrt(0 - rows)'"},
		{"eps: 1e-5", "eps: \"colz * 2\"", "unknown name 'colz' in values.eps"},
		{"eps: 1e-5", "rows: 1", "rows is already dims"},
		{"eps: 1e-5", "dtype: 1", "dtype is the key under which the Python reference reads"},
		{"twice: \"scale * 2\"", "twice: \"later * 2\"\n  later: 1", "unknown name 'later' in values.twice"},
	} {
		bad := strings.Replace(y, c.from, c.to, 1)
		f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": bad, "k.cu": usertest.Source}))
		if err == nil {
			_, err = f.Plan(s, cudaDev)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.to, err, c.want)
		}
	}
}
