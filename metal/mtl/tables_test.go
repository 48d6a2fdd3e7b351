package mtl

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// selRow is a line of testdata/selectors.tsv.
type selRow struct {
	Method
	Header, Note string
	Line         int
}

// cfuncRow is a line of testdata/cfuncs.tsv.
type cfuncRow struct {
	CFunc
	Header, Note string
	Line         int
}

func parseKinds(s string) ([]Kind, error) {
	if s == "-" {
		return nil, nil
	}
	var out []Kind
	for _, f := range strings.Split(s, ",") {
		k, err := ParseKind(f)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// readTSV calls row for each non-comment line, split at tabs.
func readTSV(t *testing.T, path string, row func(line int, f []string) error) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if err := row(n, strings.Split(l, "\t")); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func readSelectorRows(t *testing.T, path string) []selRow {
	var rows []selRow
	readTSV(t, path, func(n int, f []string) error {
		if len(f) != 6 && len(f) != 7 {
			return fmt.Errorf("%d columns, want 6 or 7 (recv, selector, send, args, ret, header[, note])", len(f))
		}
		r := selRow{Method: Method{Recv: f[0], Sel: f[1]}, Header: f[5], Line: n}
		if len(f) == 7 {
			r.Note = f[6]
		}
		switch f[2] {
		case "class":
			r.Class = true
		case "instance":
		default:
			return fmt.Errorf("send %q: want instance or class", f[2])
		}
		var err error
		if r.Args, err = parseKinds(f[3]); err != nil {
			return err
		}
		if r.Ret, err = ParseKind(f[4]); err != nil {
			return err
		}
		rows = append(rows, r)
		return nil
	})
	return rows
}

func readCFuncRows(t *testing.T, path string) []cfuncRow {
	var rows []cfuncRow
	readTSV(t, path, func(n int, f []string) error {
		if len(f) != 5 && len(f) != 6 {
			return fmt.Errorf("%d columns, want 5 or 6 (lib, name, args, ret, header[, note])", len(f))
		}
		r := cfuncRow{CFunc: CFunc{Lib: f[0], Name: f[1]}, Header: f[4], Line: n}
		if len(f) == 6 {
			r.Note = f[5]
		}
		var err error
		if r.Args, err = parseKinds(f[2]); err != nil {
			return err
		}
		if r.Ret, err = ParseKind(f[3]); err != nil {
			return err
		}
		rows = append(rows, r)
		return nil
	})
	return rows
}

func kindsString(ks []Kind) string {
	var s []string
	for _, k := range ks {
		s = append(s, k.String())
	}
	return "(" + strings.Join(s, ",") + ")"
}

// unguardedUnverified are the selectors metal-cpp lacks that mltop sends
// without asking respondsToSelector: first, because every macOS has them.
// Any other selector missing from metal-cpp must be a Since row (a newer
// API, sent only where the object responds).
var unguardedUnverified = map[string]bool{
	"NS::Data bytes": true, // -[NSData bytes], Foundation since macOS 10.0; metal-cpp declares only mutableBytes
}

// compareTable holds the registered methods to the testdata rows: every
// method has exactly one row with the same send, argument and result
// kinds; every row is a registered method; unverified rows say why.
func compareTable(ms []Method, rows []selRow) []error {
	var errs []error
	key := func(recv, sel string) string { return recv + " " + sel }
	byKey := map[string]selRow{}
	for _, r := range rows {
		k := key(r.Recv, r.Sel)
		if _, dup := byKey[k]; dup {
			errs = append(errs, fmt.Errorf("testdata line %d: %s appears twice", r.Line, k))
		}
		byKey[k] = r
		if r.Header == "-" && r.Note == "" {
			errs = append(errs, fmt.Errorf("testdata line %d: %s is unverified (header -) without a note saying why", r.Line, k))
		}
	}
	seen := map[string]bool{}
	for _, m := range ms {
		k := key(m.Recv, m.Sel)
		seen[k] = true
		r, ok := byKey[k]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s is registered but not in testdata/selectors.tsv: add its row from metal-cpp", k))
			continue
		case r.Class != m.Class:
			errs = append(errs, fmt.Errorf("%s: registered as class=%v, testdata line %d says class=%v", k, m.Class, r.Line, r.Class))
		case !slices.Equal(r.Args, m.Args):
			errs = append(errs, fmt.Errorf("%s: registered arguments %s, testdata line %d says %s", k, kindsString(m.Args), r.Line, kindsString(r.Args)))
		case r.Ret != m.Ret:
			errs = append(errs, fmt.Errorf("%s: registered result %s, testdata line %d says %s", k, m.Ret, r.Line, r.Ret))
		}
		if r.Header == "-" && m.Since == "" && !unguardedUnverified[k] {
			errs = append(errs, fmt.Errorf("%s: not in metal-cpp and not guarded by respondsToSelector: (no Since)", k))
		}
	}
	for _, r := range rows {
		if !seen[key(r.Recv, r.Sel)] {
			errs = append(errs, fmt.Errorf("testdata line %d: %s %s is not registered in metal/mtl: a stale row", r.Line, r.Recv, r.Sel))
		}
	}
	return errs
}

func TestSelectorTableMatchesTestdata(t *testing.T) {
	rows := readSelectorRows(t, "testdata/selectors.tsv")
	if len(rows) != int(numMsgs) {
		t.Errorf("testdata has %d rows for %d registered selectors", len(rows), numMsgs)
	}
	for _, err := range compareTable(Methods(), rows) {
		t.Error(err)
	}
}

// The comparison catches each way the table and the testdata can drift.
func TestCompareTableCatchesDrift(t *testing.T) {
	rows := readSelectorRows(t, "testdata/selectors.tsv")
	if errs := compareTable(Methods(), rows); len(errs) != 0 {
		t.Fatalf("the real table must pass first: %v", errs)
	}
	ms := Methods()
	i := int(msgNewLibraryWithSource)
	for _, c := range []struct {
		name   string
		edit   func(ms []Method, rows []selRow) ([]Method, []selRow)
		expect string
	}{
		{"a registered selector misspelled", func(ms []Method, rows []selRow) ([]Method, []selRow) {
			ms[i].Sel = "newLibraryWithSource:option:error:"
			return ms, rows
		}, "not in testdata"},
		{"an argument dropped", func(ms []Method, rows []selRow) ([]Method, []selRow) {
			ms[i].Args = ms[i].Args[:2]
			return ms, rows
		}, "registered arguments (id,id)"},
		{"an argument kind changed", func(ms []Method, rows []selRow) ([]Method, []selRow) {
			ms[int(msgSetBuffer)].Args = []Kind{KID, KInt, KUint}
			return ms, rows
		}, "registered arguments (id,int,uint)"},
		{"the result kind changed", func(ms []Method, rows []selRow) ([]Method, []selRow) {
			ms[int(msgGPUStartTime)].Ret = KUint
			return ms, rows
		}, "registered result uint"},
		{"class message as instance", func(ms []Method, rows []selRow) ([]Method, []selRow) {
			ms[int(msgComputePassDescriptor)].Class = false
			return ms, rows
		}, "class=false"},
		{"a row nobody registers", func(ms []Method, rows []selRow) ([]Method, []selRow) {
			return ms[:len(ms)-1], rows
		}, "stale row"},
		{"a missing-from-metal-cpp selector sent without respondsToSelector:", func(ms []Method, rows []selRow) ([]Method, []selRow) {
			ms[int(msgSetMathMode)].Since = ""
			return ms, rows
		}, "not guarded by respondsToSelector:"},
		{"an unverified row without a reason", func(ms []Method, rows []selRow) ([]Method, []selRow) {
			for j := range rows {
				if rows[j].Header == "-" {
					rows[j].Note = ""
				}
			}
			return ms, rows
		}, "without a note"},
	} {
		m2, r2 := c.edit(slices.Clone(ms), slices.Clone(rows))
		errs := compareTable(m2, r2)
		if len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), c.expect) {
			t.Errorf("%s: compareTable gave %v, want an error containing %q", c.name, errs, c.expect)
		}
	}
}

func TestSelectorTableConsistent(t *testing.T) {
	seen := map[string]bool{}
	for i, m := range methods {
		if m.Sel == "" || m.Recv == "" {
			t.Errorf("row %d is empty", i)
			continue
		}
		if len(m.Args) != m.Arity() {
			t.Errorf("%s: %d argument kinds for %d colons", m, len(m.Args), m.Arity())
		}
		for _, k := range m.Args {
			if k == KVoid || k >= numKinds {
				t.Errorf("%s: argument kind %s", m, k)
			}
		}
		if k := m.Recv + " " + m.Sel; seen[k] {
			t.Errorf("%s registered twice", k)
		} else {
			seen[k] = true
		}
	}
}

func TestCFuncsMatchTestdata(t *testing.T) {
	rows := readCFuncRows(t, "testdata/cfuncs.tsv")
	byName := map[string]cfuncRow{}
	for _, r := range rows {
		byName[r.Name] = r
		if r.Header == "-" && r.Note == "" {
			t.Errorf("cfuncs.tsv line %d: %s unverified without a note", r.Line, r.Name)
		}
	}
	for _, f := range CFuncs() {
		r, ok := byName[f.Name]
		if !ok {
			t.Errorf("C function %s is bound but not in testdata/cfuncs.tsv", f.Name)
			continue
		}
		if r.Lib != f.Lib || !slices.Equal(r.Args, f.Args) || r.Ret != f.Ret {
			t.Errorf("%s: bound as %s%s %s, testdata line %d says %s%s %s", f.Name, f.Lib, kindsString(f.Args), f.Ret, r.Line, r.Lib, kindsString(r.Args), r.Ret)
		}
		delete(byName, f.Name)
	}
	for n, r := range byName {
		t.Errorf("cfuncs.tsv line %d: %s is not bound: a stale row", r.Line, n)
	}
}

// verifyRows holds testdata rows to parsed headers: each verified row's
// selector is declared by its class in its header, sent the same way
// (class or instance), with as many arguments as colons and the same
// kinds wherever the C++ type says; each unverified row is really absent.
func verifyRows(rows []selRow, idx *headerIndex) []error {
	var errs []error
	for _, r := range rows {
		var cands []headerMethod
		for _, h := range idx.methods[r.Sel] {
			if h.Recv == r.Recv {
				cands = append(cands, h)
			}
		}
		if r.Header == "-" {
			if len(cands) > 0 {
				errs = append(errs, fmt.Errorf("line %d: %s %s is marked unverified but %s declares it: fill in its header", r.Line, r.Recv, r.Sel, cands[0].Header))
			}
			continue
		}
		if len(cands) == 0 {
			var other []string
			for _, h := range idx.methods[r.Sel] {
				other = append(other, h.Recv)
			}
			if len(other) > 0 {
				errs = append(errs, fmt.Errorf("line %d: %s does not declare %q (declared by %s)", r.Line, r.Recv, r.Sel, strings.Join(other, ", ")))
			} else {
				errs = append(errs, fmt.Errorf("line %d: no metal-cpp header declares the selector %q (misspelled?)", r.Line, r.Sel))
			}
			continue
		}
		var why []string
		ok := false
		for _, h := range cands {
			p := matchHeader(r, h)
			if p == "" {
				ok = true
				break
			}
			why = append(why, fmt.Sprintf("%s:%d: %s", h.Header, h.Line, p))
		}
		if !ok {
			errs = append(errs, fmt.Errorf("line %d: %s %s disagrees with metal-cpp: %s", r.Line, r.Recv, r.Sel, strings.Join(why, "; ")))
		}
	}
	return errs
}

// matchHeader says how r differs from one header declaration ("" when it
// does not).
func matchHeader(r selRow, h headerMethod) string {
	if r.Header != h.Header {
		return fmt.Sprintf("declared in %s, testdata says %s", h.Header, r.Header)
	}
	if strings.Count(r.Sel, ":") != len(h.Args) {
		return fmt.Sprintf("the header sends %d arguments for %d colons", len(h.Args), strings.Count(r.Sel, ":"))
	}
	if len(r.Args) != len(h.Args) {
		return fmt.Sprintf("the header takes %d arguments, testdata says %d", len(h.Args), len(r.Args))
	}
	if r.Class != h.Class {
		return fmt.Sprintf("the header sends it to the class=%v, testdata says class=%v", h.Class, r.Class)
	}
	for i, k := range h.Args {
		if h.ArgKnown[i] && k != r.Args[i] {
			return fmt.Sprintf("argument %d is %s in the header, %s in testdata", i+1, k, r.Args[i])
		}
	}
	if h.RetKnown && h.Ret != r.Ret {
		return fmt.Sprintf("the result is %s in the header, %s in testdata", h.Ret, r.Ret)
	}
	return ""
}

// verifyCFuncRows is verifyRows for C functions.
func verifyCFuncRows(rows []cfuncRow, idx *headerIndex) []error {
	var errs []error
	for _, r := range rows {
		h, ok := idx.funcs[r.Name]
		if r.Header == "-" {
			if ok {
				errs = append(errs, fmt.Errorf("line %d: %s is marked unverified but %s declares it", r.Line, r.Name, h.Header))
			}
			continue
		}
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("line %d: no header declares the C function %s", r.Line, r.Name))
		case h.Header != r.Header:
			errs = append(errs, fmt.Errorf("line %d: %s is declared in %s, testdata says %s", r.Line, r.Name, h.Header, r.Header))
		case len(h.Args) != len(r.Args):
			errs = append(errs, fmt.Errorf("line %d: %s takes %d arguments in %s, testdata says %d", r.Line, r.Name, len(h.Args), h.Header, len(r.Args)))
		case h.RetKnown && h.Ret != r.Ret:
			errs = append(errs, fmt.Errorf("line %d: %s returns %s, testdata says %s", r.Line, r.Name, h.Ret, r.Ret))
		default:
			for i, k := range h.Args {
				if h.ArgKnown[i] && k != r.Args[i] {
					errs = append(errs, fmt.Errorf("line %d: %s argument %d is %s, testdata says %s", r.Line, r.Name, i+1, k, r.Args[i]))
				}
			}
		}
	}
	return errs
}

// metalCpp is the unpacked metal-cpp that MLTOP_METAL_CPP names, or a skip.
func metalCpp(t *testing.T) *headerIndex {
	t.Helper()
	root := os.Getenv("MLTOP_METAL_CPP")
	if root == "" {
		t.Skip("MLTOP_METAL_CPP is not set: set it to an unpacked metal-cpp (macOS 14.2 release, https://developer.apple.com/metal/cpp/) to check testdata/selectors.tsv against Apple's headers")
	}
	idx, err := parseHeaders(root)
	if err != nil {
		t.Fatalf("MLTOP_METAL_CPP=%s: %v", root, err)
	}
	// A parser that silently finds nothing would pass every row: demand
	// the size of the real thing.
	if idx.files < 50 || len(idx.methods) < 1000 {
		t.Fatalf("MLTOP_METAL_CPP=%s: found %d headers and %d selectors; metal-cpp 14.2 has 87 and over 1300", root, idx.files, len(idx.methods))
	}
	return idx
}

func TestTestdataMatchesMetalCpp(t *testing.T) {
	idx := metalCpp(t)
	rows := readSelectorRows(t, "testdata/selectors.tsv")
	for _, err := range verifyRows(rows, idx) {
		t.Error(err)
	}
	for _, err := range verifyCFuncRows(readCFuncRows(t, "testdata/cfuncs.tsv"), idx) {
		t.Error(err)
	}
	verified := 0
	for _, r := range rows {
		if r.Header != "-" {
			verified++
		}
	}
	t.Logf("%d of %d selectors verified against %d metal-cpp headers (%d selectors there)", verified, len(rows), idx.files, len(idx.methods))
}

// Broken rows fail against the real headers too.
func TestMetalCppCatchesBrokenRows(t *testing.T) {
	idx := metalCpp(t)
	rows := readSelectorRows(t, "testdata/selectors.tsv")
	find := func(sel string) int {
		for i, r := range rows {
			if r.Sel == sel {
				return i
			}
		}
		t.Fatalf("no row %s", sel)
		return -1
	}
	for _, c := range []struct {
		name, expect string
		edit         func(r *selRow)
	}{
		{"misspelled", "misspelled", func(r *selRow) { r.Sel = "newLibraryWithSource:option:error:" }},
		{"arity", "the header takes 3 arguments, testdata says 2", func(r *selRow) { r.Args = r.Args[:2] }},
		{"a colon dropped", "misspelled", func(r *selRow) { r.Sel = "newLibraryWithSource:options:" }},
		{"kind", "argument 2 is uint", func(r *selRow) { r.Args = []Kind{KID, KInt, KUint} }},
		{"header", "declared in Metal/MTLDevice.hpp", func(r *selRow) { r.Header = "Metal/MTLLibrary.hpp" }},
	} {
		sel := "newLibraryWithSource:options:error:"
		if c.name == "kind" {
			sel = "setBuffer:offset:atIndex:"
		}
		r := rows[find(sel)]
		c.edit(&r)
		errs := verifyRows([]selRow{r}, idx)
		if len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), c.expect) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, errs, c.expect)
		} else {
			t.Logf("%s: %v", c.name, errs[0])
		}
	}
}

// The header check, on a small header written for this test: a correct
// row passes, and a misspelled selector, a wrong argument count, a wrong
// kind, a wrong header, a class/instance mix-up and a stale "unverified"
// each fail with a message that says so.
func TestHeaderCheckOnFakeHeader(t *testing.T) {
	idx, err := parseHeaders("testdata/fakecpp")
	if err != nil {
		t.Fatal(err)
	}
	const hdr = "Metal/MTLWidget.hpp"
	good := []selRow{
		{Method: Method{Recv: "MTL::Widget", Sel: "widget", Ret: KID, Class: true}, Header: hdr},
		{Method: Method{Recv: "MTL::Widget", Sel: "spinWithCount:mode:error:", Args: []Kind{KUint, KUint, KPtr}, Ret: KVoid}, Header: hdr},
		{Method: Method{Recv: "MTL::Widget", Sel: "elapsed", Ret: KDouble}, Header: hdr},
		{Method: Method{Recv: "MTL::Widget", Sel: "readTicks:", Args: []Kind{KPtr}, Ret: KVoid}, Header: hdr},
	}
	if errs := verifyRows(good, idx); len(errs) != 0 {
		t.Fatalf("correct rows fail: %v", errs)
	}
	spin := good[1]
	for _, c := range []struct {
		name, expect string
		row          selRow
	}{
		{"misspelled selector", "misspelled", withSel(spin, "spinWithCount:mod:error:", spin.Args)},
		{"a colon dropped", "misspelled", withSel(spin, "spinWithCount:mode:", spin.Args[:2])},
		{"wrong arity", "the header takes 3 arguments, testdata says 2", withSel(spin, spin.Sel, spin.Args[:2])},
		{"one kind too many", "the header takes 3 arguments, testdata says 4", withSel(spin, spin.Sel, []Kind{KUint, KUint, KPtr, KUint})},
		{"enum of NSUInteger is uint, not int", "argument 2 is uint", withSel(spin, spin.Sel, []Kind{KUint, KInt, KPtr})},
		{"wrong result", "the result is double", func() selRow { r := good[2]; r.Ret = KUint; return r }()},
		{"wrong class", "does not declare", func() selRow { r := good[2]; r.Recv = "MTL::Gadget"; return r }()},
		{"wrong header", "declared in Metal/MTLWidget.hpp", func() selRow { r := good[2]; r.Header = "Metal/MTLDevice.hpp"; return r }()},
		{"instance for class", "class=true", func() selRow { r := good[0]; r.Class = false; return r }()},
		{"stale unverified", "marked unverified", func() selRow { r := good[2]; r.Header = "-"; return r }()},
	} {
		errs := verifyRows([]selRow{c.row}, idx)
		if len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), c.expect) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, errs, c.expect)
		}
	}
	// C functions the same way.
	fgood := cfuncRow{CFunc: CFunc{Lib: "Metal", Name: "MTLCreateWidget", Args: []Kind{KUint}, Ret: KID}, Header: hdr}
	if errs := verifyCFuncRows([]cfuncRow{fgood}, idx); len(errs) != 0 {
		t.Fatalf("correct function row fails: %v", errs)
	}
	for _, bad := range []cfuncRow{
		{CFunc: CFunc{Name: "MTLCreateWidgets", Args: []Kind{KUint}, Ret: KID}, Header: hdr},
		{CFunc: CFunc{Name: "MTLCreateWidget", Ret: KID}, Header: hdr},
		{CFunc: CFunc{Name: "MTLCreateWidget", Args: []Kind{KInt}, Ret: KID}, Header: hdr},
	} {
		if errs := verifyCFuncRows([]cfuncRow{bad}, idx); len(errs) == 0 {
			t.Errorf("function row %+v passed against the fake header", bad)
		}
	}
}

func withSel(r selRow, sel string, args []Kind) selRow {
	r.Sel, r.Args = sel, args
	return r
}

// Stand-ins for purego's objc types: the checks go by the Go type's kind
// and name, which these share with objc.ID, objc.Class and objc.SEL.
type (
	ID    uintptr
	Class uintptr
	SEL   uintptr
)

func TestCheckArgs(t *testing.T) {
	var x uint64
	for _, c := range []struct {
		m    msg
		args []any
		ok   bool
	}{
		{msgNewLibraryWithSource, []any{ID(1), ID(2), unsafe.Pointer(&x)}, true},
		{msgNewLibraryWithSource, []any{ID(1), ID(2)}, false},                         // arity
		{msgNewLibraryWithSource, []any{ID(1), uint64(2), unsafe.Pointer(&x)}, false}, // a number for an object
		{msgSetBuffer, []any{ID(1), uint64(0), uint64(3)}, true},
		{msgSetBuffer, []any{ID(1), 0, uint64(3)}, false}, // Go int is not NSUInteger
		{msgSetBuffer, []any{ID(1), int64(0), uint64(3)}, false},
		{msgRespondsToSelector, []any{SEL(5)}, true},
		{msgRespondsToSelector, []any{ID(5)}, false},
		{msgDispatchThreadgroups, []any{Size{1, 1, 1}, Size{32, 1, 1}}, true},
		{msgDispatchThreadgroups, []any{Size{1, 1, 1}, Range{32, 1}}, false},
		{msgFillBuffer, []any{ID(1), Range{0, 16}, uint8(0)}, true},
		{msgFillBuffer, []any{ID(1), Range{0, 16}, uint64(0)}, false},
		{msgStringWithCString, []any{new(byte), uint64(4)}, true},
		{msgStringWithCString, []any{"text", uint64(4)}, false},
		{msgSetFastMathEnabled, []any{true}, true},
		{msgSetMathMode, []any{int64(1)}, true},
		{msgSetMathMode, []any{uint64(1)}, false},
		{msgSampleTimestamps, []any{&x, &x}, true},
		{msgAlloc, []any{}, true},
		{msgAlloc, []any{nil}, false},
		{msgComputePassDescriptor, nil, true},
		{msgSetPreprocessorMacros, []any{Class(3)}, true},
	} {
		err := checkArgs(methods[c.m], c.args)
		if (err == nil) != c.ok {
			t.Errorf("%s with %v: err %v, want ok=%v", methods[c.m], c.args, err, c.ok)
		}
	}
	for _, c := range []struct {
		m  msg
		t  reflect.Type
		ok bool
	}{
		{msgGPUStartTime, reflect.TypeFor[float64](), true},
		{msgGPUStartTime, reflect.TypeFor[uint64](), false},
		{msgStatus, reflect.TypeFor[uint64](), true},
		{msgErrorCode, reflect.TypeFor[int64](), true},
		{msgErrorCode, reflect.TypeFor[uint64](), false},
		{msgMaxThreadsPerThreadgroup, reflect.TypeFor[Size](), true},
		{msgBufferContents, reflect.TypeFor[unsafe.Pointer](), true},
		{msgUTF8String, reflect.TypeFor[*byte](), true},
		{msgUTF8String, reflect.TypeFor[unsafe.Pointer](), false},
		{msgRespondsToSelector, reflect.TypeFor[bool](), true},
	} {
		if err := checkRet(methods[c.m], c.t); (err == nil) != c.ok {
			t.Errorf("%s read as %v: err %v, want ok=%v", methods[c.m], c.t, err, c.ok)
		}
	}
}

func TestKindNames(t *testing.T) {
	for k := KVoid; k < numKinds; k++ {
		got, err := ParseKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseKind("NSUInteger"); err == nil {
		t.Error("ParseKind accepted a C type name")
	}
}

// Size and Range must match the C layouts purego passes by value.
func TestStructLayouts(t *testing.T) {
	if unsafe.Sizeof(Size{}) != 24 || unsafe.Offsetof(Size{}.Depth) != 16 || unsafe.Sizeof(Range{}) != 16 {
		t.Errorf("Size is %d bytes (Depth at %d), Range %d; want 24 (16), 16", unsafe.Sizeof(Size{}), unsafe.Offsetof(Size{}.Depth), unsafe.Sizeof(Range{}))
	}
}

// Each C function's Go variable has its row's shape, and the check
// catches a variable that does not.
func TestCFuncGoVariables(t *testing.T) {
	for _, f := range CFuncs() {
		if err := checkFunc(f); err != nil {
			t.Error(err)
		}
	}
	var (
		wide    func(entry uint64) int32  // io_object_t is 32 bits
		noRet   func(entry uint32)        // drops kern_return_t
		extra   func(a, b uint32) int32   // one argument too many
		byValue func(name []byte) uintptr // a C string is a Go string or *byte
		signed  func(entry uint32) uint32 // kern_return_t is signed
	)
	row := CFunc{Name: "IOObjectRelease", Args: []Kind{KU32}, Ret: KI32}
	for _, c := range []struct {
		fn   any
		args []Kind
		ret  Kind
	}{
		{&wide, row.Args, row.Ret},
		{&noRet, row.Args, row.Ret},
		{&extra, row.Args, row.Ret},
		{&signed, row.Args, row.Ret},
		{&byValue, []Kind{KCStr}, KID},
		{wide, row.Args, row.Ret}, // not a pointer
	} {
		bad := row
		bad.fn, bad.Args, bad.Ret = c.fn, c.args, c.ret
		if err := checkFunc(bad); err == nil {
			t.Errorf("checkFunc accepted %T for %s%s %s", c.fn, bad.Name, kindsString(bad.Args), bad.Ret)
		}
	}
}
