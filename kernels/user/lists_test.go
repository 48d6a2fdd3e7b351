package user

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// parseWith parses manifest y at a fixed path, with k.cu and common.h
// beside it: two manifests parsed with it differ only in their text.
func parseWith(y string) (*Family, error) {
	files := map[string]string{"k.cu": usertest.Source, "common.h": "#define COMMON 1\n"}
	read := func(p string) ([]byte, error) {
		if c, ok := files[filepath.ToSlash(strings.TrimPrefix(p, "/m/"))]; ok {
			return []byte(c), nil
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return Parse("/m/kernel.yaml", []byte(y), read)
}

// TestOneValueIsAList: every list of a manifest that takes one value
// takes it written alone, as in sweep files (`dtypes: bf16` is
// `dtypes: [bf16]`), and an error in it names the field without an index.
func TestOneValueIsAList(t *testing.T) {
	sub := func(y, old, new string) string {
		t.Helper()
		if !strings.Contains(y, old) {
			t.Fatalf("test setup: %q not in the manifest", old)
		}
		return strings.Replace(y, old, new, 1)
	}
	flat := sub(sub(goodYAML, "shape: [rows, cols]}", `shape: ["rows * cols"]}`), "shape: [rows, cols], out", `shape: ["rows * cols"], out`)
	same := []struct{ base, old, alone, listed string }{
		{goodYAML, "dtypes: [f32]", "dtypes: bf16", "dtypes: [bf16]"},
		{goodYAML, "dtypes: [f32]", "dtypes: \"f16\"", "dtypes:\n  - f16"},
		{goodYAML, "values: [64, 128], default: 64", "values: 128", "values: [128]"},
		{goodYAML, "rows: {default: 8}", "rows: {values: 32}", "rows: {values: [32]}"},
		{goodYAML, `rules: ["cols % 4 == 0"]`, `rules: "cols % 8 == 0"`, `rules: ["cols % 8 == 0"]`},
		{goodYAML, "check: none", "check: none\nincludes: common.h", "check: none\nincludes: [common.h]"},
		{goodYAML, "check: none", "check: none\ninclude_dirs: inc", "check: none\ninclude_dirs: [inc]"},
		{goodYAML, "check: none", "check: none\nnotes: read me", "check: none\nnotes: [read me]"},
		{goodYAML, "grid: [rows]", "grid: rows", "grid: [rows]"},
		{goodYAML, "threads: [WG]", "threads: WG", "threads: [WG]"},
		{flat, `shape: ["rows * cols"]}`, `shape: "rows * cols"}`, `shape: ["rows * cols"]}`},
	}
	for _, c := range same {
		alone, err := parseWith(sub(c.base, c.old, c.alone))
		if err != nil {
			t.Errorf("%q: %v", c.alone, err)
			continue
		}
		listed, err := parseWith(sub(c.base, c.old, c.listed))
		if err != nil {
			t.Fatalf("%q: %v", c.listed, err)
		}
		if a, l := alone.Schema(), listed.Schema(); !reflect.DeepEqual(a, l) {
			t.Errorf("%q makes the schema\n%+v\nbut %q makes\n%+v", c.alone, a, c.listed, l)
		}
		if a, l := alone.Rules(), listed.Rules(); !reflect.DeepEqual(a, l) {
			t.Errorf("%q makes the rules %q but %q makes %q", c.alone, a, c.listed, l)
		}
		s := profiler.Spec{Kernel: alone.Name()}.WithDefaults(alone.Schema())
		pa, errA := alone.Plan(s, cudaDev)
		pl, errL := listed.Plan(s, cudaDev)
		if errA != nil || errL != nil || !reflect.DeepEqual(pa, pl) {
			t.Errorf("%q plans\n%+v (%v)\nbut %q plans\n%+v (%v)", c.alone, pa, errA, c.listed, pl, errL)
		}
	}
	if f, err := parseWith(sub(goodYAML, "dtypes: [f32]", "dtypes: bf16")); err != nil || !reflect.DeepEqual(f.Schema().DTypes, []profiler.DType{profiler.BF16}) {
		t.Errorf("dtypes: bf16 is not [bf16]: %v", err)
	}

	errs := []struct{ base, old, alone, want, not string }{
		{goodYAML, "dtypes: [f32]", "dtypes: f64", "kernel.yaml:3:9: dtypes: unknown dtype", "dtypes["},
		{goodYAML, "dtypes: [f32]", "dtypes: {f32: 1}", "kernel.yaml:3:9: dtypes: want a string or a list of strings", ""},
		{goodYAML, `rules: ["cols % 4 == 0"]`, `rules: "col % 4 == 0"`, "kernel.yaml:9:9: unknown name 'col' in rules 'col % 4 == 0'", "rules["},
		{goodYAML, "check: none", "check: none\nincludes: nope.h", "kernel.yaml:17:11: includes: cannot read", "includes["},
		{goodYAML, "grid: [rows]", "grid: colz", "kernel.yaml:14:22: unknown name 'colz' in grid 'colz'", "grid["},
		{goodYAML, "threads: [WG]", "threads: {x: WG}", "threads: want a value or a list of values", ""},
		{goodYAML, "values: [64, 128], default: 64", "values: 64.5", "64.5 is not a whole number", ""},
		{flat, `shape: ["rows * cols"]}`, "shape: colls}", "kernel.yaml:11:32: unknown name 'colls' in buffers[X].shape 'colls'", "shape["},
	}
	for _, c := range errs {
		_, err := parseWith(sub(c.base, c.old, c.alone))
		if err == nil || !strings.Contains(err.Error(), c.want) || c.not != "" && strings.Contains(err.Error(), c.not) {
			t.Errorf("%q: error %v\nwant %q (and no %q)", c.alone, err, c.want, c.not)
		}
	}
}
