package tune

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
)

// testTable has three shapes of bf16 and one of f32.
func testTable(t *testing.T) *Table {
	t.Helper()
	tb, err := NewTable("test_tune", MedianUS, profiler.DeviceInfo{Name: "Test GPU", Backend: "cuda"}, "v0.9.0", time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	add := func(dt profiler.DType, rows, cols, wg, vec, rpg, rb int, tied bool) {
		tb.Entries = append(tb.Entries, Entry{DType: dt, Dims: map[string]int{"rows": rows, "cols": cols},
			Knobs: map[string]int{"WG": wg, "VEC": vec, "RPG": rpg, "RB": rb}, Value: 10, MedianUS: 10, Tied: tied})
	}
	add(profiler.BF16, 1024, 4096, 128, 8, 4, 2, false)
	add(profiler.BF16, 8192, 8192, 256, 8, 16, 4, true)
	add(profiler.BF16, 64, 64, 32, 2, 1, 1, false)
	add(profiler.F32, 4096, 4096, 512, 4, 8, 8, false)
	return tb
}

// selectCases are shapes a header must answer as Table.Select does.
var selectCases = []struct {
	dt         profiler.DType
	rows, cols int
	wantWG     int
}{
	{profiler.BF16, 1024, 4096, 128}, // exact
	{profiler.BF16, 8192, 8192, 256}, // exact
	{profiler.BF16, 64, 64, 32},      // exact
	{profiler.BF16, 2048, 4096, 128}, // nearest: ln²2 from 1024×4096, more from 8192²
	{profiler.BF16, 6000, 9000, 256}, // nearest 8192²
	{profiler.BF16, 100, 90, 32},     // nearest 64²
	{profiler.BF16, 0, -5, 32},       // dims below 1 count as 1
	{profiler.F32, 8, 8, 512},        // the only f32 entry
	{profiler.F16, 1024, 4000, 128},  // no f16 entries: nearest of any dtype
}

func TestSelectNearestInLogSpace(t *testing.T) {
	tb := testTable(t)
	for _, c := range selectCases {
		e, ok := tb.Select(c.dt, map[string]int{"rows": c.rows, "cols": c.cols})
		if !ok || e.Knobs["WG"] != c.wantWG {
			t.Errorf("Select(%s, %d×%d) = WG=%d, want WG=%d", c.dt, c.rows, c.cols, e.Knobs["WG"], c.wantWG)
		}
	}
	if _, ok := (&Table{}).Select(profiler.F32, nil); ok {
		t.Error("an empty table selected something")
	}
}

// The C header compiles with gcc, and a program calling select_config gets
// the configuration Table.Select picks, for exact and nearest shapes.
func TestCHeaderCompilesAndSelects(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the generated C header is not compiled here")
	}
	tb := testTable(t)
	var h bytes.Buffer
	if err := tb.WriteC(&h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mltop v0.9.0", "2026-03-04", "Test GPU", "tied within noise", "test_tune_select_config(int dtype, long long rows, long long cols)"} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("the header lacks %q:\n%s", want, h.String())
		}
	}
	got := runSelectProgram(t, gcc, "c", h.String())
	checkSelections(t, "C", got)
	if gxx, err := exec.LookPath("g++"); err == nil {
		checkSelections(t, "C++", runSelectProgram(t, gxx, "c++", h.String()))
	}
}

func runSelectProgram(t *testing.T, compiler, lang, header string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tune.h"), []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	var main strings.Builder
	main.WriteString("#include <stdio.h>\n#include \"tune.h\"\nint main(void) {\n")
	for _, c := range selectCases {
		fmt.Fprintf(&main, "    { test_tune_config c = test_tune_select_config(%s, %d, %d); printf(\"%%d %%d %%d %%d\\n\", c.WG, c.VEC, c.RPG, c.RB); }\n",
			dtypeConst(c.dt), c.rows, c.cols)
	}
	main.WriteString("    return 0;\n}\n")
	src := filepath.Join(dir, "main.c")
	if err := os.WriteFile(src, []byte(main.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "main")
	out, err := exec.Command(compiler, "-x", lang, "-Wall", "-Werror", "-o", bin, src, "-lm").CombinedOutput()
	if err != nil {
		t.Fatalf("%s does not compile the header: %v\n%s\n%s", compiler, err, out, header)
	}
	run, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(run)
}

func checkSelections(t *testing.T, lang, got string) {
	t.Helper()
	tb := testTable(t)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != len(selectCases) {
		t.Fatalf("%s: %d lines, want %d:\n%s", lang, len(lines), len(selectCases), got)
	}
	for i, c := range selectCases {
		e, _ := tb.Select(c.dt, map[string]int{"rows": c.rows, "cols": c.cols})
		want := fmt.Sprintf("%d %d %d %d", e.Knobs["WG"], e.Knobs["VEC"], e.Knobs["RPG"], e.Knobs["RB"])
		if lines[i] != want {
			t.Errorf("%s: select_config(%s, %d, %d) = %s, want %s", lang, c.dt, c.rows, c.cols, lines[i], want)
		}
	}
}

func TestTableCSVAndJSON(t *testing.T) {
	tb := testTable(t)
	var c, j bytes.Buffer
	if err := tb.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(c.String()), "\n")
	if lines[0] != "kernel,dtype,rows,cols,WG,VEC,RPG,RB,objective,value,median_us,ci_lo_us,ci_hi_us,tied,device,verdict" || len(lines) != 5 ||
		!strings.HasPrefix(lines[2], "test_tune,bf16,8192,8192,256,8,16,4,median_us,10,10,,,true,Test GPU") {
		t.Errorf("CSV:\n%s", c.String())
	}
	if err := tb.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"mltop_version": "v0.9.0"`) || !strings.Contains(j.String(), `"WG": 256`) {
		t.Errorf("JSON:\n%s", j.String())
	}
}

func TestParseShapes(t *testing.T) {
	got, err := ParseShapes("rows=1024,cols=4096; rows=8192,cols=8192;")
	if err != nil || len(got) != 2 || got[1]["cols"] != 8192 {
		t.Errorf("ParseShapes = %v, %v", got, err)
	}
	for _, bad := range []string{"", "rows=abc", "rows=1;rows=1", "rows=1,rows=2", "=3"} {
		if _, err := ParseShapes(bad); err == nil {
			t.Errorf("ParseShapes(%q) accepted", bad)
		}
	}
}

func TestIdent(t *testing.T) {
	for in, want := range map[string]string{"WG": "WG", "my-kernel": "my_kernel", "3x": "_3x", "a.b c": "a_b_c"} {
		if got := Ident(in); got != want {
			t.Errorf("Ident(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTableCSVReadsBack(t *testing.T) {
	tb := testTable(t)
	tb.Entries[0].CILoUS, tb.Entries[0].CIHiUS = 9.5, 10.5
	path := filepath.Join(t.TempDir(), "table.csv")
	f, _ := os.Create(path)
	if err := tb.WriteCSV(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if !IsTableFile(path) {
		t.Fatal("IsTableFile is false for a table")
	}
	back, err := ReadTableCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Entries) != 4 || back.Entries[1].Knobs["RPG"] != 16 || back.Entries[1].Dims["cols"] != 8192 || !back.Entries[1].Tied || back.Entries[0].CIHiUS != 10.5 || back.Objective != MedianUS {
		t.Errorf("read back %+v", back)
	}
	os.WriteFile(path, []byte("time,backend\n"), 0o644)
	if IsTableFile(path) {
		t.Error("an mltop results CSV is taken for a table")
	}
	if _, err := ReadTableCSV(path); err == nil || !strings.Contains(err.Error(), "not a tuning table") {
		t.Errorf("ReadTableCSV of a results CSV: %v", err)
	}
}
