package user

import (
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

var cudaDev = profiler.DeviceInfo{Backend: "cuda", Name: "test GPU", TGMPerGroup: 48 << 10, TGMPerGroupOptIn: 227 << 10, MaxThreadsPerGroup: 1024, MemoryBytes: 80 << 30}
var metalDev = profiler.DeviceInfo{Backend: "metal", Name: "test Mac", TGMPerGroup: 32 << 10, MaxThreadsPerGroup: 1024, MemoryBytes: 16 << 30}

func TestSoftmaxExample(t *testing.T) {
	f, err := Load("../../examples/softmax/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "user_softmax" {
		t.Errorf("name %q", f.Name())
	}
	sc := f.Schema()
	if len(sc.Knobs) != 1 || sc.Knobs[0].Name != "WG" || len(sc.Dims) != 2 || sc.Dims[0].Name != "rows" || sc.Dims[1].Name != "cols" {
		t.Fatalf("schema %+v", sc)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.BF16, Knobs: map[string]int{"WG": 512}}.WithDefaults(sc)
	if err := f.Validate(s, cudaDev); err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Buffers) != 2 || p.Buffers[0].Elems != 4096*4096 || p.Buffers[0].Type != profiler.BF16 || p.Buffers[1].Role != profiler.Out || p.Buffers[1].Init != profiler.InitPoison {
		t.Errorf("buffers %+v", p.Buffers)
	}
	if p.Buffers[0].Init != profiler.InitNormal || p.Buffers[0].Scale != 2 {
		t.Errorf("X init %+v", p.Buffers[0])
	}
	d := p.Dispatches[0]
	if d.Grid != [3]int{4096, 1, 1} || d.Group != [3]int{512, 1, 1} || !slices.Equal(d.Args, []string{"X", "Y"}) || len(d.Scalars) != 2 || d.Scalars[1].I != 4096 {
		t.Errorf("dispatch %+v", d)
	}
	if d.TGMBytes() != 512/32*4 {
		t.Errorf("TGM %d", d.TGMBytes())
	}
	if p.FLOPs != 5*4096*4096 || p.Bytes != 2*4096*4096*2 {
		t.Errorf("work %g %g", p.FLOPs, p.Bytes)
	}
	if !strings.HasSuffix(d.Program.File, "softmax.cu") || d.Program.Code == "" || d.Program.Includes[cudaHeaderName] == "" {
		t.Errorf("program %s %q", d.Program.File, d.Program.Entry)
	}
	// WG and T are used in code only, rows and cols (the kernel's n_rows,
	// n_cols) not at all.
	for _, want := range []string{"\n[[maybe_unused]] constexpr int WG = 512;\n", "\nusing T = __nv_bfloat16;\n"} {
		if !strings.Contains(d.Program.Code, want) {
			t.Errorf("the CUDA code lacks %q:\n%s", want, d.Program.Code)
		}
	}
	if strings.Contains(d.Program.Code, "rows =") || strings.Contains(d.Program.Code, "push_macro") {
		t.Errorf("rows injected or push_macro used:\n%s", d.Program.Code)
	}
	mp, err := f.Plan(s, metalDev)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(mp.Dispatches[0].Program.File, "softmax.metal") {
		t.Errorf("metal plan uses %s", mp.Dispatches[0].Program.File)
	}
	if c := mp.Dispatches[0].Program.Code; !strings.Contains(c, "using T = bfloat;\n") || !strings.Contains(c, "constant constexpr int WG = 512;\n") {
		t.Errorf("metal code:\n%s", c)
	}
}

// goodYAML is the shared manifest of a valid kernel, called t_kernel.
var goodYAML = usertest.Manifest("t_kernel")

func TestGoodManifest(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": goodYAML, "k.cu": usertest.Source})
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	if err := f.Validate(s, cudaDev); err != nil {
		t.Fatal(err)
	}
	s.Dims["cols"] = 18
	err = f.Validate(s, cudaDev)
	if err == nil || !strings.Contains(err.Error(), "rule 'cols % 4 == 0'") || !strings.Contains(err.Error(), "cols=18") || !strings.Contains(err.Error(), "kernel.yaml:9:") {
		t.Errorf("rule violation: %v", err)
	}
	ref, err := f.Reference(s, nil, 10, 1)
	if err != nil || !ref.Unchecked {
		t.Errorf("check none: %+v %v", ref, err)
	}
	if got := f.Files(); len(got) != 2 {
		t.Errorf("files %v", got)
	}
}

func TestBadManifests(t *testing.T) {
	sub := func(old, new string) string {
		if !strings.Contains(goodYAML, old) {
			t.Fatalf("test setup: %q not in the manifest", old)
		}
		return strings.Replace(goodYAML, old, new, 1)
	}
	for _, c := range []struct {
		name  string
		yaml  string
		files map[string]string
		want  []string
	}{
		{"unknown key", sub("dtypes: [f32]", "dtypes: [f32]\nthreds: 3"), nil, []string{"kernel.yaml:4:1", "unknown field \"threds\"", "the keys at the top level are name, description"}},
		{"dim default not an integer", sub("rows: {default: 8}", "rows: {default: many}"), nil, []string{"dims.rows.default: want an integer here, got many (a string)"}},
		{"out not a bool", sub("out: true, tol", "out: \"yes please\", tol"), nil, []string{"buffers[1].out: want true or false here, got \"yes please\" (a string)"}},
		{"dtypes not strings", sub("dtypes: [f32]", "dtypes: [[f32]]"), nil, []string{"kernel.yaml:3:10: dtypes[0]: want a string here, got [f32]"}},
		{"missing source", sub("cuda: k.cu", "cuda: nope.cu"), nil, []string{"kernel.yaml:2:", "sources.cuda", "nope.cu", "relative to the manifest"}},
		{"missing include", sub("dtypes: [f32]", "dtypes: [f32]\nincludes: [common.h]"), nil, []string{"includes[0]", "common.h"}},
		{"unknown name in grid", sub("grid: [rows]", "grid: [\"cdiv(colz, 4)\"]"), nil, []string{"kernel.yaml:14:29: unknown name 'colz' in grid[0] 'cdiv(colz, 4)'", "kernel.yaml:14:", "known: T, WG, cols, max_coresident, rows, sm_count"}},
		{"unquoted comma", sub("grid: [rows]", "grid: [cdiv(rows, 4)]"), nil, []string{"syntax error", "quote an expression that has one"}},
		{"unknown name in shape", sub("shape: [rows, cols]}", "shape: [rows, colls]}"), nil, []string{"unknown name 'colls' in buffers[X].shape[1]"}},
		{"unknown name in rule", sub(`"cols % 4 == 0"`, `"col % 4 == 0"`), nil, []string{"unknown name 'col' in rules[0]", "kernel.yaml:9:"}},
		{"args count", sub("args: [X, Y, rows, cols]", "args: [X, Y, rows]"), nil, []string{"args", "3 args but", "k.cu:1 k(const T* X, T* Y, int rows, int cols) takes 4 parameters"}},
		{"arg not known", sub("args: [X, Y, rows, cols]", "args: [X, Z, rows, cols]"), nil, []string{"dispatches[0].args[1]", "\"Z\" is neither a buffer (X, Y)"}},
		{"scalar in a pointer slot", sub("args: [X, Y, rows, cols]", "args: [X, rows, Y, cols]"), nil, []string{"kernel.yaml:14:", "dispatches[0].args[1]", "\"rows\" goes to parameter `T* Y`", "a pointer: bind one of the buffers"}},
		{"entry missing", sub("entry: k,", "entry: kk,"), nil, []string{"has no kernel \"kk\" (kernels found: k)"}},
		{"no output", sub(", out: true, tol: {atol: 1e-3}", ""), nil, []string{"no output"}},
		{"bad init", sub("shape: [rows, cols]}", "shape: [rows, cols], init: \"gauss(0, 1)\"}"), nil, []string{"buffers[X].init", "unknown init \"gauss\""}},
		{"bad dtype", sub("dtypes: [f32]", "dtypes: [f64]"), nil, []string{"dtypes[0]", "unknown dtype"}},
		{"default not allowed", sub("default: 64}", "default: 96}"), nil, []string{"knobs.WG.default", "WG=96 is not allowed"}},
		{"no check", sub("check: none", ""), nil, []string{"no check"}},
		// A CUDA built-in's name would be declared ahead of the source and hide it.
		{"knob named blockDim", sub("WG: {values", "blockDim: {values: [64], default: 64}\n  WG: {values"), nil, []string{"knobs.blockDim", "blockDim is a CUDA built-in variable", "blockDim.x would not compile", "rename it, e.g. WG"}},
		{"dim named gridDim", sub("rows: {default: 8}", "rows: {default: 8}\n  gridDim: {default: 2}"), nil, []string{"dims.gridDim", "gridDim is a CUDA built-in variable", "e.g. gridDim_"}},
		{"flag named warpSize", sub("rules:", "flags: {warpSize: false}\nrules:"), nil, []string{"flags.warpSize", "warpSize is a CUDA built-in variable"}},
		{"value named threadIdx", sub("rules:", "values: {threadIdx: 3}\nrules:"), nil, []string{"values.threadIdx", "threadIdx is a CUDA built-in variable"}},
		{"define named blockIdx", sub("rules:", "defines: {blockIdx: 3}\nrules:"), nil, []string{"defines.blockIdx", "blockIdx is a CUDA built-in variable"}},
		{"dtype_name warpSize", sub("dtypes: [f32]", "dtypes: [f32]\ndtype_name: warpSize"), nil, []string{"dtype_name", "warpSize is a CUDA built-in variable"}},
		// The macros mltop defines, and the Python reference's dtype key, stay refused, named.
		{"knob named DTYPE_F16", sub("WG: {values", "DTYPE_F16: {values: [1], default: 1}\n  WG: {values"), nil, []string{"knobs.DTYPE_F16", "DTYPE_F16 is a macro mltop defines in the source (the code of f16, compared with DTYPE): rename the knob, e.g. DTYPE_F16_"}},
		{"dim named DTYPE_F32", sub("rows: {default: 8}", "rows: {default: 8}\n  DTYPE_F32: {default: 2}"), nil, []string{"dims.DTYPE_F32", "DTYPE_F32 is a macro mltop defines in the source (the code of f32, compared with DTYPE): rename the dim"}},
		{"define named DTYPE_BF16", sub("rules:", "defines: {DTYPE_BF16: 3}\nrules:"), nil, []string{"defines.DTYPE_BF16", "DTYPE_BF16 is a macro mltop defines"}},
		{"flag named dtype", sub("rules:", "flags: {dtype: false}\nrules:"), nil, []string{"flags.dtype", `dtype is the key under which the Python reference reads the spec's dtype (dims["dtype"]): rename the flag, e.g. dtype_`}},
		{"dtype_name DTYPE", sub("dtypes: [f32]", "dtypes: [f32]\ndtype_name: DTYPE"), nil, []string{"dtype_name", "DTYPE is a macro mltop defines"}},
		{"check bad key", sub("check: none", "check: {pyton: ref.py}"), nil, []string{"unknown key \"pyton\""}},
		{"check python missing", sub("check: none", "check: {python: ref.py}"), nil, []string{"check.python", "ref.py"}},
		{"check against unknown", sub("check: none", "check: {against: nope}"), nil, []string{"unknown kernel \"nope\""}},
		{"duplicate name", sub("cols: {default: 16}", "WG: {default: 16}"), nil, []string{"already"}},
		{"tol on input", sub("shape: [rows, cols]}", "shape: [rows, cols], tol: {atol: 1}}"), nil, []string{"only outputs"}},
		{"no name", sub("name: t_kernel", "description: x"), nil, []string{"no name"}},
		{"macro clash", sub("cols: {default: 16}", "cols: {default: 16}\n  T: {default: 1}"), nil, []string{"already the dtype"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"kernel.yaml": c.yaml, "k.cu": usertest.Source}
			for k, v := range c.files {
				files[k] = v
			}
			_, err := Load(usertest.Write(t, files))
			errorSays(t, err, c.want)
		})
	}
}

func TestPlanErrors(t *testing.T) {
	y := strings.Replace(goodYAML, "grid: [rows]", "grid: [\"rows - 8\"]", 1)
	y = strings.Replace(y, "dims:\n  rows: {default: 8}", "dims:\n  rows: {default: 8}\n  big: {default: 1}", 1)
	y = strings.Replace(y, "shape: [rows, cols]}", "shape: [rows, cols, big]}", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source}))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema())
	err = f.Validate(s, cudaDev)
	if err == nil || !strings.Contains(err.Error(), "grid[0] 'rows - 8'") || !strings.Contains(err.Error(), "is 0 for rows=8") {
		t.Errorf("zero grid: %v", err)
	}
	s.Dims["rows"] = 16
	s.Dims["big"] = 1 << 30
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.CheckMemory(p, cudaDev); err == nil || !strings.Contains(err.Error(), "reduce the dims") {
		t.Errorf("too large a buffer: %v", err)
	}
	s.Knobs["WG"] = 128
	small := cudaDev
	small.MaxThreadsPerGroup = 64
	if err := f.Validate(profiler.Spec{Kernel: f.Name(), Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"rows": 16}}.WithDefaults(f.Schema()), small); err == nil || !strings.Contains(err.Error(), "128 threads per group") {
		t.Errorf("too many threads: %v", err)
	}
}

func TestIsPath(t *testing.T) {
	dir := t.TempDir()
	for arg, want := range map[string]bool{"softmax_bwd_not_registered_here": false, "./k.yaml": true, "k.yml": true, "a/b": true, dir: true, "transpose": false} {
		if got := IsPath(arg); got != want && !(arg == "transpose") {
			t.Errorf("IsPath(%q) = %v", arg, got)
		}
	}
}
