// Package plancheck is test support: it resolves and plans specs, and
// checks kernel source text against a Plan, for the Metal sources that
// cannot be compiled on Linux.
package plancheck

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// Plan resolves s for dev and plans it, failing t on either error. It
// returns the plan and the resolved spec.
func Plan(t testing.TB, s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, profiler.Spec) {
	t.Helper()
	f, full, err := profiler.Resolve(s, dev)
	if err != nil {
		t.Fatalf("resolve %v: %v", s, err)
	}
	p, err := f.Plan(full, dev)
	if err != nil {
		t.Fatalf("plan %v: %v", full, err)
	}
	return p, full
}

var (
	scalarStruct = regexp.MustCompile(`struct \w+ \{([^}]*)\}`)
	metalType    = map[profiler.ScalarKind]string{profiler.ScalarI32: "int", profiler.ScalarF32: "float"}
)

// MetalSource checks the embedded Metal source of d's program against the
// plan, and returns it: it defines the entry point as a kernel, uses every
// macro the plan passes (beyond its own #ifndef/#define default, and in the
// kernel itself unless it is DTYPE, which the common header reads), binds
// every Arg and then the scalar struct at buffer(0..len(Args)) and nothing
// past them, and its scalar struct declares the plan's scalars in order.
// Which TGM items must appear how is the caller's to check.
func MetalSource(t testing.TB, d profiler.Dispatch) string {
	t.Helper()
	name := d.Program.Source + ".metal"
	src, err := shaders.Source("metal", d.Program.Source, ".metal")
	if err != nil {
		t.Fatal(err)
	}
	hdrs, err := shaders.Headers("metal")
	if err != nil || hdrs["mltop_common.h"] == "" {
		t.Fatalf("common header missing: %v", err)
	}
	full := hdrs["mltop_common.h"] + "\n" + src
	if !regexp.MustCompile(`\]\]\s*void\s+` + d.Program.Entry + `\(`).MatchString(src) {
		t.Errorf("%s has no kernel %s", name, d.Program.Entry)
	}
	for _, m := range d.Program.Macros {
		uses := regexp.MustCompile(`\b`+m.Name+`\b`).FindAllStringIndex(full, -1)
		defs := regexp.MustCompile(`#(ifndef|define) `+m.Name+`\b`).FindAllStringIndex(full, -1)
		inKernel := m.Name == "DTYPE" || regexp.MustCompile(`\b`+m.Name+`\b`).MatchString(strings.ReplaceAll(src, "#define "+m.Name, ""))
		if len(uses) <= len(defs) || !inKernel {
			t.Errorf("%s never uses macro %s", name, m.Name)
		}
	}
	for i := 0; i <= len(d.Args); i++ {
		if !strings.Contains(src, fmt.Sprintf("[[buffer(%d)]]", i)) {
			t.Errorf("%s binds nothing at buffer(%d)", name, i)
		}
	}
	if strings.Contains(src, fmt.Sprintf("[[buffer(%d)]]", len(d.Args)+1)) {
		t.Errorf("%s binds a buffer past the scalars", name)
	}
	// One 4-byte field per Scalar, in order.
	st := scalarStruct.FindStringSubmatch(src)
	if st == nil {
		t.Fatalf("%s has no scalar struct", name)
	}
	var fields, want []string
	for _, l := range strings.Split(st[1], ";") {
		if f := strings.Fields(l); len(f) == 2 {
			fields = append(fields, f[0]+" "+f[1])
		}
	}
	for _, sc := range d.Scalars {
		want = append(want, metalType[sc.Kind]+" "+sc.Name)
	}
	if strings.Join(fields, "; ") != strings.Join(want, "; ") {
		t.Errorf("%s scalar struct %v, plan scalars %v", name, fields, want)
	}
	return src
}
