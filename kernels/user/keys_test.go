package user

import (
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/parser"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler/expr"
)

// TestUnknownKeySuggests: a misspelt key gets a did-you-mean from the keys
// of the mapping it is in (a buffer's keys for a buffer), at file:line:col.
func TestUnknownKeySuggests(t *testing.T) {
	base := usertest.Manifest("t_keys")
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{"top level", "dispatches:", "dispatchez:", []string{`unknown field "dispatchez": check the spelling; did you mean dispatches? the keys at the top level are name, description, sources`}},
		{"in a buffer", "out: true", "outt: true", []string{`unknown field "outt": check the spelling; did you mean out? the keys at buffers[1] are name, dtype, shape, init, out`}},
		{"in a dispatch", "grid:", "gird:", []string{`unknown field "gird": check the spelling; did you mean grid? the keys at dispatches[0] are name, entry, grid`}},
		{"in a buffer's tol", "tol: {atol: 1e-3}", "tol: {atl: 1e-3}", []string{`unknown field "atl": check the spelling; did you mean atol? the keys at buffers[1].tol are atol, rtol, f32, f16, bf16`}},
		{"in a tol's dtype", "tol: {atol: 1e-3}", "tol: {f16: {rtl: 1e-3}}", []string{`unknown field "rtl": check the spelling; did you mean rtol? the keys at buffers[1].tol.f16 are atol, rtol`}},
		{"in a knob", "WG: {values: [64, 128], default: 64}", "WG: {values: [64, 128], defualt: 64}", []string{`unknown field "defualt": check the spelling; did you mean default? the keys at knobs.WG are values, default`}},
		{"in a dispatch's tgm", "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols], tgm: [{name: s, byts: 64}]}", []string{`unknown field "byts": check the spelling; did you mean bytes? the keys at dispatches[0].tgm[0] are name, bytes, note`}},
		{"in mlx", "check: none", "check: none\nmlx: {name: k, bdy: x}", []string{`unknown field "bdy": check the spelling; did you mean body? the keys at mlx are name, body`}},
		{"a comma in a knob's doc", "WG: {values: [64, 128], default: 64}", "WG: {values: [64, 128], default: 64, doc: work group, in threads}",
			[]string{`unknown field "in threads": a comma ends a value in a {…} mapping, so "in threads" is read as a key after ` + "`doc: work group`" + `: quote the doc string: doc: "work group, in threads"`}},
		// the decoder names either piece: both give the whole text
		{"two commas in a doc", "WG: {values: [64, 128], default: 64}", "WG: {doc: work group, in threads, a power of 2, default: 64, values: [64, 128]}",
			[]string{`quote the doc string: doc: "work group, in threads`}},
		{"a comma in a tgm note", "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols], tgm: [{name: s, bytes: 64, note: partial sums, one per warp}]}",
			[]string{`read as a key after ` + "`note: partial sums`" + `: quote the note string: note: "partial sums, one per warp"`}},
		{"a misspelt key after a doc", "WG: {values: [64, 128], default: 64}", "WG: {values: [64, 128], doc: work group, defualt: 64}",
			[]string{`unknown field "defualt": check the spelling; did you mean default?`}},
		{"in check", "check: none", "check: {pyhton: ref.py}", []string{`unknown key "pyhton": did you mean python?`}},
		{"far from any key", "dispatches:", "zzzzzzzzzz:", []string{`unknown field "zzzzzzzzzz": check the spelling; the keys at the top level are name, description`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.from) {
				t.Fatalf("the manifest lacks %q", tc.from)
			}
			path := usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(base, tc.from, tc.to, 1), "k.cu": usertest.Source})
			_, err := Load(path)
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+":") {
				t.Errorf("error %q does not lead with the file's position", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}

// TestUnknownKeyFallbackListsEveryKey: the general hint (used when the
// mapping holding the key cannot be told) lists the schema's top-level
// keys, include_dirs and defines among them.
func TestUnknownKeyFallbackListsEveryKey(t *testing.T) {
	msg := yamlErr("kernel.yaml", errors.New(`[3:1] unknown field "x"`)).Error()
	for _, k := range []string{"name", "include_dirs", "defines", "dispatches", "mlx", "notes"} {
		if !strings.Contains(msg, " "+k+",") && !strings.Contains(msg, " "+k+" (") {
			t.Errorf("error %q does not list %s", msg, k)
		}
	}
}

// TestExpressionErrorPrintsPathOnce: an unknown name in an expression is
// a manifest error (exit 2) whose text holds the file's path once, so a
// caller that prefixes its own file does not print it twice; the
// expression's error is still reachable with errors.As.
func TestExpressionErrorPrintsPathOnce(t *testing.T) {
	base := usertest.Manifest("t_expr")
	for _, tc := range []struct{ name, from, to, want string }{
		{"grid", "grid: [rows]", "grid: [m]", ":14:23: unknown name 'm' in grid[0] 'm'"},
		{"work", `flops: "rows * cols"`, `flops: "rowz * cols"`, ":15:16: unknown name 'rowz' in work.flops 'rowz * cols'; did you mean rows?"},
		{"entry template", "entry: k,", `entry: "k<{m}>",`, ":14:17: unknown name 'm' in dispatches[0].entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(base, tc.from, tc.to, 1), "k.cu": usertest.Source})
			_, err := Load(path)
			if err == nil {
				t.Fatal("loaded")
			}
			var ue *Error
			if !errors.As(err, &ue) {
				t.Fatalf("%T is not a manifest error: %v", err, err)
			}
			if n := strings.Count(err.Error(), path); n != 1 {
				t.Errorf("error %q holds the path %d times", err, n)
			}
			if strings.Contains(ue.Msg, path) || strings.Contains(ue.Field, path) {
				t.Errorf("the message %q (field %q) repeats the path", ue.Msg, ue.Field)
			}
			if !strings.Contains(err.Error(), path+tc.want) {
				t.Errorf("error %q lacks %q", err, path+tc.want)
			}
			var ee *expr.Error
			if !errors.As(err, &ee) {
				t.Errorf("errors.As finds no *expr.Error in %v", err)
			}
		})
	}
}

// Whichever piece of a doc split by commas the decoder names, the hint
// quotes the whole text up to it (and marks that more follows).
func TestProseBeforeKeyPieces(t *testing.T) {
	src := "knobs:\n  WG: {doc: work group, in threads, a power of 2, default: 64}\n"
	af, err := parser.ParseBytes([]byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	line := 2
	for _, c := range []struct {
		key, want string
	}{
		{"in threads", `quote the doc string: doc: "work group, in threads, …"`},
		{"a power of 2", `read as a key after ` + "`doc: work group, in threads`" + `: quote the doc string: doc: "work group, in threads, a power of 2"`},
	} {
		col := strings.Index(strings.Split(src, "\n")[line-1], c.key) + 1
		hint, ok := unknownKeyHint(af, `unknown field "`+c.key+`"`, line, col)
		if !ok || !strings.Contains(hint, c.want) {
			t.Errorf("%s: %v %q, want %q", c.key, ok, hint, c.want)
		}
	}
}
