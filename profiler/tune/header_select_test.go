package tune

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// This file runs the generated headers as their users do: the C header in
// a C and C++ program, the Metal header inside an MSL kernel through the
// project's MSL emulation (metal/mslemu), over a tuning table of twelve
// GEMM shapes and the four-entry testTable. Each program asks
// select_config for exact and nearest shapes and looks the answer up in
// KERNEL_FOR_EACH_CONFIG, as a dispatch to template instantiations would.

// matmulConfigs are the knobs of the 12-shape table (BM BN BK TM TN PAD);
// entries 3 and 9 repeat 2 and 0, so the table has 10 distinct configs.
var matmulShapes = []struct{ m, n, k, cfg int }{
	{512, 512, 512, 0},     // 0 square
	{1024, 1024, 1024, 1},  // 1
	{2048, 2048, 2048, 2},  // 2
	{4096, 4096, 4096, 2},  // 3
	{8192, 256, 1024, 3},   // 4 tall
	{16384, 1024, 1024, 4}, // 5
	{256, 8192, 1024, 5},   // 6 wide
	{1024, 16384, 1024, 6}, // 7
	{4096, 4096, 64, 7},    // 8 small K
	{2048, 2048, 256, 0},   // 9
	{512, 512, 16384, 8},   // 10 large K
	{1024, 1024, 8192, 9},  // 11
}

var matmulConfigs = [][6]int{
	{64, 64, 16, 4, 4, 1}, {128, 128, 8, 8, 8, 4}, {128, 128, 16, 8, 8, 4}, {256, 64, 16, 8, 4, 1}, {256, 128, 8, 16, 4, 4},
	{64, 256, 16, 4, 8, 1}, {128, 256, 8, 8, 8, 4}, {128, 128, 8, 8, 8, 0}, {32, 32, 32, 2, 2, 1}, {64, 64, 32, 4, 4, 4},
}

var matmulKnobNames = []string{"BM", "BN", "BK", "TM", "TN", "PAD"}

// matmulTable is a tuning table of user_matmul5 over 12 f32 shapes and one
// bf16 shape (entry 12).
func matmulTable() *Table {
	tb := &Table{Kernel: "user_matmul5", Objective: MedianUS, DimNames: []string{"M", "N", "K"}, KnobNames: matmulKnobNames,
		Device: "Test GPU", Backend: "cuda", Version: "v0.9.0"}
	add := func(dt profiler.DType, m, n, k, cfg int) {
		knobs := map[string]int{}
		for i, name := range matmulKnobNames {
			knobs[name] = matmulConfigs[cfg][i]
		}
		tb.Entries = append(tb.Entries, Entry{DType: dt, Dims: map[string]int{"M": m, "N": n, "K": k}, Knobs: knobs, MedianUS: 100})
	}
	for _, s := range matmulShapes {
		add(profiler.F32, s.m, s.n, s.k, s.cfg)
	}
	add(profiler.BF16, 2048, 2048, 2048, 8)
	return tb
}

// headerCase is a shape to select for and the entry it must get (by hand:
// the nearest in log space).
type headerCase struct {
	dt    profiler.DType
	dims  []int
	entry int
}

func matmulCases() []headerCase {
	var cs []headerCase
	for i, s := range matmulShapes {
		cs = append(cs, headerCase{profiler.F32, []int{s.m, s.n, s.k}, i}) // exact
	}
	return append(cs,
		headerCase{profiler.F32, []int{2000, 2000, 2000}, 2},
		headerCase{profiler.F32, []int{3000, 3000, 3000}, 3}, // ln(4096/3000) < ln(3000/2048)
		headerCase{profiler.F32, []int{1100, 1000, 900}, 1},
		headerCase{profiler.F32, []int{8000, 300, 1000}, 4},
		headerCase{profiler.F32, []int{300, 8000, 1100}, 6},
		headerCase{profiler.F32, []int{4000, 4000, 70}, 8},
		headerCase{profiler.F32, []int{500, 500, 15000}, 10},
		headerCase{profiler.F32, []int{0, -3, 0}, 0},            // dims below 1 count as 1: 512³ is nearest
		headerCase{profiler.BF16, []int{512, 512, 512}, 12},     // the only bf16 entry
		headerCase{profiler.F16, []int{2048, 2048, 2048}, 2},    // no f16 entries: any dtype, first of a tie
		headerCase{profiler.F16, []int{16384, 1024, 900}, 5},    // no f16 entries: nearest of any dtype
		headerCase{profiler.F32, []int{65536, 65536, 65536}, 3}, // far beyond the table
	)
}

// testTableCases are selectCases as headerCases (entries by hand).
func testTableCases() []headerCase {
	entries := []int{0, 1, 2, 0, 1, 2, 2, 3, 0}
	var cs []headerCase
	for i, c := range selectCases {
		cs = append(cs, headerCase{c.dt, []int{c.rows, c.cols}, entries[i]})
	}
	return cs
}

// distinctConfigs is the table's configurations without repeats, in table
// order: the order KERNEL_FOR_EACH_CONFIG lists them in.
func distinctConfigs(tb *Table) []string {
	var out []string
	for _, e := range tb.Entries {
		if k := knobLine(tb, e); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func knobLine(tb *Table, e Entry) string {
	var vs []string
	for _, n := range tb.KnobNames {
		vs = append(vs, strconv.Itoa(e.Knobs[n]))
	}
	return strings.Join(vs, " ")
}

// wantLines is what a probe prints per case: the knobs of the hand-chosen
// entry, then that config's index in KERNEL_FOR_EACH_CONFIG. Table.Select
// must agree with the hand choice.
func wantLines(t *testing.T, tb *Table, cases []headerCase) []string {
	t.Helper()
	distinct := distinctConfigs(tb)
	var out []string
	for _, c := range cases {
		dims := map[string]int{}
		for i, n := range tb.DimNames {
			dims[n] = c.dims[i]
		}
		want := tb.Entries[c.entry]
		if got, ok := tb.Select(c.dt, dims); !ok || knobLine(tb, got) != knobLine(tb, want) || !maps2Equal(got.Dims, want.Dims) {
			t.Errorf("Table.Select(%s, %v) = %v %v, want entry %d (%v)", c.dt, c.dims, got.Dims, got.Knobs, c.entry, want.Dims)
		}
		k := knobLine(tb, want)
		out = append(out, fmt.Sprintf("%s %d", k, slices.Index(distinct, k)))
	}
	return out
}

func maps2Equal(a, b map[string]int) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func compareLines(t *testing.T, lang string, got string, want []string, header string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%s: %d lines, want %d:\n%s", lang, len(lines), len(want), got)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("%s: case %d: got %q (knobs, FOR_EACH index), want %q", lang, i, lines[i], want[i])
		}
	}
	if t.Failed() {
		t.Logf("header:\n%s", header)
	}
}

// cProbe is a C program that prints, per case, the selected knobs and the
// index of that config in KERNEL_FOR_EACH_CONFIG (-1: not listed).
func cProbe(tb *Table, cases []headerCase) string {
	k := Ident(tb.Kernel)
	var b strings.Builder
	fmt.Fprintf(&b, "#include <stdio.h>\n#include \"tune.h\"\n\nstatic int index_of(%s_config c) {\n    int i = 0;\n", k)
	fmt.Fprintf(&b, "#define MATCH(%s) if (%s) return i; i++;\n", strings.Join(paramNames(tb), ", "), matchExpr(tb))
	fmt.Fprintf(&b, "    %s_FOR_EACH_CONFIG(MATCH)\n#undef MATCH\n    return -1;\n}\n\nint main(void) {\n", k)
	for _, c := range cases {
		fmt.Fprintf(&b, "    { %s_config c = %s_select_config(%s, %s); printf(\"%s %%d\\n\", %s, index_of(c)); }\n",
			k, k, dtypeConst(c.dt), joinInts(c.dims), strings.TrimSpace(strings.Repeat("%d ", len(tb.KnobNames))), fieldList(tb, "c."))
	}
	b.WriteString("    return 0;\n}\n")
	return b.String()
}

func paramNames(tb *Table) []string {
	var ps []string
	for i := range tb.KnobNames {
		ps = append(ps, fmt.Sprintf("v%d", i))
	}
	return ps
}

func matchExpr(tb *Table) string {
	var ms []string
	for i, n := range tb.KnobNames {
		ms = append(ms, fmt.Sprintf("c.%s == (v%d)", Ident(n), i))
	}
	return strings.Join(ms, " && ")
}

func fieldList(tb *Table, prefix string) string {
	var fs []string
	for _, n := range tb.KnobNames {
		fs = append(fs, prefix+Ident(n))
	}
	return strings.Join(fs, ", ")
}

func joinInts(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ", ")
}

func compileAndRun(t *testing.T, compiler, lang, header, program string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tune.h"), []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(src, []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "probe")
	if out, err := exec.Command(compiler, "-x", lang, "-Wall", "-Werror", "-o", bin, src, "-lm").CombinedOutput(); err != nil {
		t.Fatalf("%s does not compile the header: %v\n%s\n%s", compiler, err, out, header)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The C header of a 12-shape GEMM table compiles as C and C++, selects the
// hand-chosen entry for exact and nearest shapes, and lists every config
// it can return once in FOR_EACH_CONFIG.
func TestCHeaderSelectsOverTwelveShapes(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the generated C header is not compiled here")
	}
	tb := matmulTable()
	var h bytes.Buffer
	if err := tb.WriteC(&h); err != nil {
		t.Fatal(err)
	}
	hdr := h.String()
	if n := strings.Count(hdr, "\\\n    X("); n != 10 {
		t.Errorf("FOR_EACH_CONFIG lists %d configs, want the table's 10 distinct ones:\n%s", n, hdr)
	}
	for _, want := range []string{"user_matmul5_select_config(int dtype, long long M, long long N, long long K)",
		"#define user_matmul5_FOR_EACH_CONFIG(X)", "X(BM, BN, BK, TM, TN, PAD)", "X(128, 128, 16, 8, 8, 4)"} {
		if !strings.Contains(hdr, want) {
			t.Errorf("the header lacks %q", want)
		}
	}
	cases := matmulCases()
	want := wantLines(t, tb, cases)
	compareLines(t, "C", compileAndRun(t, gcc, "c", hdr, cProbe(tb, cases)), want, hdr)
	if gxx, err := exec.LookPath("g++"); err == nil {
		compareLines(t, "C++", compileAndRun(t, gxx, "c++", hdr, cProbe(tb, cases)), want, hdr)
	}
}

// A FOR_EACH_CONFIG that missed a config, or a probe that dispatched by
// the wrong knobs, would print -1 or another index: the expectation is not
// vacuous.
func TestWantLinesNameTheConfigIndex(t *testing.T) {
	tb := matmulTable()
	got := wantLines(t, tb, matmulCases())
	if got[3] != "128 128 16 8 8 4 2" || got[9] != "64 64 16 4 4 1 0" || got[11] != "64 64 32 4 4 4 9" {
		t.Errorf("want lines %q %q %q", got[3], got[9], got[11])
	}
}

// metalProbe is an MSL kernel that includes the Metal header: thread i
// reads case i (dtype and dims) and writes the selected knobs and the
// config's index in FOR_EACH_CONFIG.
func metalProbe(tb *Table) string {
	k := Ident(tb.Kernel)
	nd, nk := len(tb.DimNames), len(tb.KnobNames)
	var args []string
	for j := range nd {
		args = append(args, fmt.Sprintf("cases[tid * %d + %d]", nd+1, j+1))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#include <metal_stdlib>\n#include \"tune.metal\"\nusing namespace metal;\n\n")
	fmt.Fprintf(&b, "[[kernel]] void select_probe(device const int* cases [[buffer(0)]], device int* out [[buffer(1)]],\n")
	fmt.Fprintf(&b, "                         uint tid [[thread_index_in_threadgroup]]) {\n")
	fmt.Fprintf(&b, "    %s_config c = %s_select_config(cases[tid * %d], %s);\n", k, k, nd+1, strings.Join(args, ", "))
	for j, n := range tb.KnobNames {
		fmt.Fprintf(&b, "    out[tid * %d + %d] = c.%s;\n", nk+1, j, Ident(n))
	}
	fmt.Fprintf(&b, "    int found = -1, i = 0;\n#define MATCH(%s) if (found < 0 && %s) found = i; i++;\n", strings.Join(paramNames(tb), ", "), matchExpr(tb))
	fmt.Fprintf(&b, "    %s_FOR_EACH_CONFIG(MATCH)\n#undef MATCH\n    out[tid * %d + %d] = found;\n}\n", k, nk+1, nk)
	return b.String()
}

// runMetalProbe compiles metalProbe with the Metal header through the MSL
// emulation (as a user's Metal kernel is on Linux) and runs one group with
// a thread per case.
func runMetalProbe(t *testing.T, tb *Table, header string, cases []headerCase) string {
	t.Helper()
	eb := mslemu.New(t, "../../metal/testdata/mslemu", profiler.DeviceInfo{Backend: "metal", Name: "emulated", MaxThreadsPerGroup: 1024, TGMPerGroup: 32 << 10})
	k, err := eb.Compile(profiler.Program{Entry: "select_probe", File: "probe.metal", Code: metalProbe(tb), Includes: map[string]string{"tune.metal": header}})
	if err != nil {
		t.Fatalf("the emulation does not compile the Metal header: %v\n%s", err, header)
	}
	nd, nk := len(tb.DimNames), len(tb.KnobNames)
	in := make([]byte, 0, 4*len(cases)*(nd+1))
	dtypeIndex := map[profiler.DType]int32{profiler.F32: 0, profiler.F16: 1, profiler.BF16: 2}
	for _, c := range cases {
		in = binary.LittleEndian.AppendUint32(in, uint32(dtypeIndex[c.dt]))
		for _, d := range c.dims {
			in = binary.LittleEndian.AppendUint32(in, uint32(int32(d)))
		}
	}
	inBuf, _ := eb.Alloc(int64(len(in)))
	outBuf, _ := eb.Alloc(int64(4 * len(cases) * (nk + 1)))
	if err := eb.Upload(inBuf, in); err != nil {
		t.Fatal(err)
	}
	d := &profiler.Dispatch{Name: "select_probe", Grid: [3]int{1, 1, 1}, Group: [3]int{len(cases), 1, 1}, Args: []string{"cases", "out"}}
	if err := eb.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{inBuf, outBuf}}}); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, outBuf.Size())
	if err := eb.Download(outBuf, raw); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range cases {
		for j := range nk + 1 {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(int(int32(binary.LittleEndian.Uint32(raw[4*(i*(nk+1)+j):])))))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// The Metal header, included by an MSL kernel and compiled through the MSL
// emulation, selects as Table.Select does for exact and nearest shapes, for
// the 12-shape GEMM table and the 2-dim testTable.
func TestMetalHeaderSelectsInTheMSLEmulation(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found: the generated Metal header is not compiled through the MSL emulation here")
	}
	for _, c := range []struct {
		name  string
		tb    *Table
		cases []headerCase
	}{
		{"gemm 12 shapes", matmulTable(), matmulCases()},
		{"testTable", testTable(t), testTableCases()},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h bytes.Buffer
			if err := c.tb.WriteMetal(&h); err != nil {
				t.Fatal(err)
			}
			hdr := h.String()
			if !strings.Contains(hdr, "constant "+Ident(c.tb.Kernel)+"_entry") || !strings.Contains(hdr, "metal::log") {
				t.Fatalf("not MSL:\n%s", hdr)
			}
			want := wantLines(t, c.tb, c.cases)
			compareLines(t, "Metal (emulated)", runMetalProbe(t, c.tb, hdr, c.cases), want, hdr)
		})
	}
}
