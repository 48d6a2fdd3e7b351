package expr

import (
	"errors"
	"math"
	"strings"
	"testing"
)

var vars = Vars{"rows": Int, "cols": Int, "WG": Int, "causal": Bool, "T": DType}

func env() map[string]any {
	return map[string]any{"rows": 4096, "cols": 1000, "WG": 256, "causal": true, "T": "bf16"}
}

func TestInt(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int64
	}{
		{"rows", 4096},
		{"cdiv(cols, 256)", 4},
		{"cdiv(1024, 256)", 4},
		{"WG / 32 * 4", 32},
		{"cols / 3", 333}, // C-style integer division
		{"2 * rows * cols * sizeof(T)", 2 * 4096 * 1000 * 2},
		{"min(rows, cols, WG)", 256},
		{"max(rows, cols)", 4096},
		{"rows % 7", 4096 % 7},
		{"ceil(cols / 3.0)", 334},
		{"log2(WG)", 8},
		{"floor_log2(cols)", 9},
		{"ceil_log2(cols)", 10},
		{"ceil_log2(WG)", 8},
		{"floor_log2(1)", 0},
		{"causal ? rows : cols", 4096},
		{"1e3", 1000},
	} {
		p, err := Compile(c.src, vars, Where{Field: "x"})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		got, err := p.Int(env())
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got != c.want {
			t.Errorf("%s = %d, want %d", c.src, got, c.want)
		}
	}
}

func TestBool(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"cols % 4 == 0", true},
		{"cols % 3 == 0", false},
		{"WG <= 1024 && causal", true},
		{"!causal || rows > 1", true},
		{"WG in [64, 128]", false},
		{"rows >= cols and WG != 0", true},
	} {
		p, err := Compile(c.src, vars, Where{Field: "rule"})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		got, err := p.Bool(env())
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got != c.want {
			t.Errorf("%s = %v, want %v", c.src, got, c.want)
		}
	}
}

func TestErrors(t *testing.T) {
	w := Where{Field: "grid[0]", File: "kernel.yaml", Line: 14, Col: 12}
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"cdiv(colz, 4)", []string{"kernel.yaml:14:17: unknown name 'colz' in grid[0] 'cdiv(colz, 4)'; did you mean cols? known: T, WG, causal, cols, rows"}},
		{"cdiv(rowz, 4)", []string{"did you mean rows? known"}},
		{"frob(rows)", []string{"unknown function 'frob'", "; functions: cdiv(a, b)"}},
		{"cidv(rows, 4)", []string{"unknown function 'cidv'", "did you mean cdiv? functions: cdiv(a, b)"}},
		{"rows +", []string{"kernel.yaml:14:", ": syntax error", "in grid[0] 'rows +'"}},
		{"T == bf16", []string{`kernel.yaml:14:17: 'bf16' in grid[0] 'T == bf16' is a dtype, which is a string here: quote it, 'T == "bf16"'`}},
		{"rows > 1 && T != half", []string{`quote it, 'rows > 1 && T != "f16"'`}},
		{"rows = 64", []string{`kernel.yaml:14:17: syntax error: unexpected token Operator("=") in grid[0] 'rows = 64': use == to compare, 'rows == 64'`}},
		{"rows == 64 || WG = 32", []string{`use == to compare, 'rows == 64 || WG == 32'`}},
		{"2 ** rows % 32", []string{"mismatched types", "an operand is a float", "wrap it in int(…)"}},
		{"ceil(rows / 3.0) % 4", []string{"wrap it in int(…)"}},
		{"", []string{"empty expression in grid[0]"}},
		{"rows * \"a\"", []string{"grid[0]"}},
		{"now()", []string{"unknown"}},
	} {
		_, err := Compile(c.src, vars, w)
		if err == nil {
			t.Errorf("%q: no error", c.src)
			continue
		}
		for _, s := range c.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%q: error %q lacks %q", c.src, err, s)
			}
		}
	}
}

// A dtype name is taken for a string to quote only where a dtype name
// (T) could be compared with it; elsewhere it is an unknown name.
func TestDTypeNameWithoutDType(t *testing.T) {
	_, err := Compile("n == bf16", Vars{"n": Int}, Where{Field: "f"})
	if err == nil || !strings.Contains(err.Error(), "unknown name 'bf16'") || strings.Contains(err.Error(), "quote") {
		t.Errorf("error %v, want an unknown name without a hint to quote", err)
	}
}

// Error.Off points into the source at what is wrong, for callers that
// know a finer position (sweep files put it in file:line:col).
func TestErrorOffset(t *testing.T) {
	for _, c := range []struct {
		src string
		off int
	}{
		{"cdiv(colz, 4)", 5},
		{"rows + frob(1)", 7},
		{"", -1},
	} {
		_, err := Compile(c.src, vars, Where{Field: "f"})
		var ee *Error
		if !errors.As(err, &ee) {
			t.Fatalf("%q: error %T %v", c.src, err, err)
		}
		if ee.Off != c.off {
			t.Errorf("%q: Off = %d, want %d", c.src, ee.Off, c.off)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	for _, c := range []struct {
		src, want string
		f         func(p *Program) error
	}{
		{"rows / 0", "division by zero", func(p *Program) error { _, err := p.Int(env()); return err }},
		{"cdiv(rows, WG - 256)", "cdiv by zero", func(p *Program) error { _, err := p.Int(env()); return err }},
		{"cols / 3.0", "not an integer", func(p *Program) error { _, err := p.Int(env()); return err }},
		{"rows + 1", "not true or false", func(p *Program) error { _, err := p.Bool(env()); return err }},
		{"rows > 1", "not a number", func(p *Program) error { _, err := p.Int(env()); return err }},
	} {
		p, err := Compile(c.src, vars, Where{Field: "f", File: "k.yaml", Line: 1, Col: 1})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		err = c.f(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.want)
		}
	}
}

func TestIsBool(t *testing.T) {
	for src, want := range map[string]bool{"rows > 1": true, "causal": true, "!causal || rows % 4 == 0": true, "rows + 1": false, "sizeof(T)": false, "cols / 3.0": false} {
		p, err := Compile(src, vars, Where{})
		if err != nil {
			t.Fatal(err)
		}
		if p.IsBool() != want {
			t.Errorf("%s: IsBool = %v, want %v", src, !want, want)
		}
	}
}

func TestNames(t *testing.T) {
	p, err := Compile("cdiv(rows, WG) * rows + cols", vars, Where{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Names(), ","); got != "rows,WG,cols" {
		t.Errorf("Names = %s", got)
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"rows", "cdiv(cols, WG)", "cols % 4 == 0 && causal", "sizeof(T) * rows", "min(", "rows / 0", "((", "1 ? 2 : 3", "max(rows, 1.5)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Compile(src, vars, Where{Field: "fuzz", File: "k.yaml", Line: 1, Col: 1})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		// Evaluation may fail but must not panic.
		_, _ = p.Eval(env())
		_, _ = p.Int(env())
		_, _ = p.Bool(env())
	})
}

func TestFloatFunctions(t *testing.T) {
	fv := Vars{"D": Int, "eps": Float}
	fe := map[string]any{"D": 64, "eps": 1e-5}
	for _, c := range []struct {
		src  string
		want float64
		kind Kind
	}{
		{"1.0 / sqrt(D)", 0.125, Float},
		{"sqrt(16.0)", 4, Float},
		{"exp(0)", 1, Float},
		{"log(1)", 0, Float},
		{"pow(2, 10)", 1024, Float},
		{"pow(D, 0.5)", 8, Float},
		{"pow(4.0, 2)", 16, Float},
		{"1e-5", 1e-5, Float},
		{"2.5E+2", 250, Float},
		{"eps * 10", 1e-4, Float},
		{"D / 3", 21, Int}, // integer division is unchanged
		{"cdiv(D, 3)", 22, Int},
		{"abs(-2.5)", 2.5, Float},
		{"min(D, 7)", 7, Int},
	} {
		p, err := Compile(c.src, fv, Where{Field: "x"})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		got, err := p.Float(fe)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if math.Abs(got-c.want) > 1e-12*math.Abs(c.want) {
			t.Errorf("%s = %v, want %v", c.src, got, c.want)
		}
		if k := p.ResultKind(); k != c.kind {
			t.Errorf("%s: kind %v, want %v", c.src, k, c.kind)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"sqrt(0 - D)", "sqrt(-64)"},
		{"log(0)", "log(0)"},
		{"pow(0.0, -1)", "pow gives +Inf"},
	} {
		p, err := Compile(c.src, fv, Where{Field: "x"})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if _, err := p.Float(fe); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.src, err, c.want)
		}
	}
	if k := mustCompile(t, "D > 3").ResultKind(); k != Bool {
		t.Errorf("D > 3: kind %v", k)
	}
}

func mustCompile(t *testing.T, src string) *Program {
	t.Helper()
	p, err := Compile(src, Vars{"D": Int}, Where{Field: "x"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// log2 of a number that is no power of two is an error naming both
// functions that say which rounding is meant: `ceil(log2(100))` was the
// floor before, silently.
func TestLog2IsExact(t *testing.T) {
	vars := Vars{"SK": Int}
	for _, c := range []struct {
		src, want string
	}{
		{"int(ceil(log2(SK)))", "log2(100): 100 is not a power of two (log2 is exact, an integer): write floor_log2(100) = 6 or ceil_log2(100) = 7"},
		{"log2(SK - 100)", "log2(0): needs a positive integer"},
		{"ceil_log2(0)", "ceil_log2(0): needs a positive integer"},
	} {
		p, err := Compile(c.src, vars, Where{Field: "x"})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if _, err := p.Int(map[string]any{"SK": 100}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.src, err, c.want)
		}
	}
}
