package metal

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

const constantsSource = `
constant int BQ [[function_constant(0)]];
constant bool causal [[ function_constant(1) ]];
// constant int hidden [[function_constant(7)]];
constant half scale [[function_constant(2)]];
constant unsigned short mask [[function_constant(3)]];
constant bool has_bq = is_function_constant_defined(BQ);
`

func TestFunctionConstantsReadsDeclarations(t *testing.T) {
	got, err := FunctionConstants(constantsSource)
	if err != nil {
		t.Fatal(err)
	}
	want := []DeclaredConstant{{Name: "BQ", Index: 0, Type: "int", Kind: profiler.ConstInt}, {Name: "causal", Index: 1, Type: "bool", Kind: profiler.ConstBool},
		{Name: "scale", Index: 2, Type: "half", Kind: profiler.ConstHalf}, {Name: "mask", Index: 3, Type: "unsigned short", Kind: profiler.ConstUShort}}
	if len(got) != len(want) {
		t.Fatalf("got %d constants %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		g := got[i]
		if g.Name != want[i].Name || g.Index != want[i].Index || g.Type != want[i].Type || g.Kind != want[i].Kind {
			t.Errorf("constant %d = %+v, want %+v", i, g, want[i])
		}
	}
	bad := map[string]string{
		"macro index": "constant int A [[function_constant(IDX)]];",
		"vector type": "constant float4 A [[function_constant(0)]];",
		"same index":  "constant int A [[function_constant(0)]];\nconstant int B [[function_constant(0)]];",
		"same name":   "constant int A [[function_constant(0)]];\nconstant int A [[function_constant(1)]];",
	}
	for name, src := range bad {
		if _, err := FunctionConstants(src); err == nil || !strings.Contains(err.Error(), "A") {
			t.Errorf("%s: error %v does not name the constant", name, err)
		}
	}
}

// TestFunctionConstantsMacroIndex: an index written with the source's
// #defines, as ggml-metal writes all of its own, is evaluated; one that
// names no macro, an ambiguous one or a negative one is an error naming
// the constant and the index.
func TestFunctionConstantsMacroIndex(t *testing.T) {
	const head = "#define FC_BASE 100\n#define FC_NEXT (FC_BASE + 100)\n"
	for src, want := range map[string]int{
		"constant short op [[function_constant(FC_BASE + 0)]];":       100,
		"constant short op [[function_constant(FC_NEXT+1)]];":         201,
		"constant short op [[ function_constant( (FC_BASE) * 2 ) ]];": 200,
		"constant short op [[function_constant(FC_BASE + (3))]];":     103,
		"constant short op [[function_constant(0x10)]];":              16,
	} {
		got, err := FunctionConstants(head + src)
		if err != nil || len(got) != 1 || got[0].Index != want || got[0].Name != "op" {
			t.Errorf("%s: got %+v, %v; want op at index %d", src, got, err, want)
		}
	}
	for name, src := range map[string]string{
		"undefined":   "constant short op [[function_constant(FC_OTHER + 0)]];",
		"ambiguous":   "#ifdef X\n#define FC_TWO 1\n#else\n#define FC_TWO 2\n#endif\nconstant short op [[function_constant(FC_TWO)]];",
		"negative":    "constant short op [[function_constant(FC_BASE - 101)]];",
		"not integer": "constant short op [[function_constant(FC_BASE + 0.5)]];",
	} {
		_, err := FunctionConstants(head + src)
		if err == nil || !strings.Contains(err.Error(), "function constant op") || !strings.Contains(err.Error(), "index") {
			t.Errorf("%s: error %v does not name the constant and its index", name, err)
		}
	}
	// The same index reached by two spellings is still one index.
	if _, err := FunctionConstants(head + "constant int a [[function_constant(FC_BASE)]];\nconstant int b [[function_constant(50 * 2)]];"); err == nil || !strings.Contains(err.Error(), "share index 100") {
		t.Errorf("two spellings of index 100: error %v, want them sharing it", err)
	}
}

func TestResolveConstantsEncodes(t *testing.T) {
	got, err := ResolveConstants(constantsSource, []profiler.FunctionConstant{
		{Name: "BQ", I: -2}, {Name: "causal", Kind: profiler.ConstBool, I: 1}, {Name: "scale", F: 0.5}, {Index: 3, I: 65535},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		dt  uint64
		b   []byte
		lit string
	}{
		{MTLDataTypeInt, []byte{0xfe, 0xff, 0xff, 0xff}, "-2"},
		{MTLDataTypeBool, []byte{1}, "true"},
		{MTLDataTypeHalf, []byte{0x00, 0x38}, "half(0.5f)"},
		{MTLDataTypeUShort, []byte{0xff, 0xff}, "65535u"},
	}
	for i, w := range want {
		if got[i].DataType != w.dt || !bytes.Equal(got[i].Bytes, w.b) || got[i].Literal != w.lit {
			t.Errorf("value %d = %+v, want type %d bytes %x literal %s", i, got[i], w.dt, w.b, w.lit)
		}
	}
	bad := map[string]profiler.FunctionConstant{
		"undeclared":     {Name: "BK", I: 1},
		"wrong kind":     {Name: "BQ", Kind: profiler.ConstFloat, F: 1},
		"bool not 0/1":   {Name: "causal", I: 2},
		"ushort too big": {Name: "mask", I: 65536},
		"negative uint":  {Name: "mask", I: -1},
		"half too big":   {Name: "scale", F: 1e6},
	}
	for name, c := range bad {
		_, err := ResolveConstants(constantsSource, []profiler.FunctionConstant{c})
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if c.Name != "" && !strings.Contains(err.Error(), c.Name) {
			t.Errorf("%s: error %q does not name %s", name, err, c.Name)
		}
	}
	if _, err := ResolveConstants(constantsSource, []profiler.FunctionConstant{{Name: "BQ"}, {Index: 0}}); err == nil {
		t.Error("setting BQ twice: no error")
	}
}

func TestInlineFunctionConstants(t *testing.T) {
	vals, err := ResolveConstants(constantsSource, []profiler.FunctionConstant{{Name: "BQ", I: 8}, {Name: "causal", I: 0}, {Name: "scale", F: 2}, {Name: "mask", I: 3}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := InlineFunctionConstants(constantsSource, vals)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"constexpr bool mltop_fc_defined_BQ = true; constexpr int BQ = 8;", "constexpr bool causal = false;", "constexpr half scale = half(2.0f);", "constexpr unsigned short mask = 3u;", "// constant int hidden [[function_constant(7)]];"} {
		if !strings.Contains(got, want) {
			t.Errorf("inlined source lacks %q:\n%s", want, got)
		}
	}
	if _, err := InlineFunctionConstants(constantsSource, vals[:1]); err == nil || !strings.Contains(err.Error(), "causal") {
		t.Errorf("missing value: %v", err)
	}
	// BQ is tested with is_function_constant_defined: left unset, it is
	// its type's zero and the test is false.
	got, err = InlineFunctionConstants(constantsSource, vals[1:])
	if err != nil || !strings.Contains(got, "constexpr bool mltop_fc_defined_BQ = false; constexpr int BQ = {};") {
		t.Errorf("a constant with a definedness test left unset: %v\n%s", err, got)
	}
	if !TestsDefined(constantsSource, "BQ") || TestsDefined(constantsSource, "causal") || TestsDefined("// is_function_constant_defined(causal)", "causal") {
		t.Error("TestsDefined")
	}
}

func TestCacheKeySplitsOnConstants(t *testing.T) {
	a := CompileOptions{Constants: []ConstantValue{{Index: 0, DataType: MTLDataTypeInt, Bytes: []byte{1, 0, 0, 0}}}}
	b := CompileOptions{Constants: []ConstantValue{{Index: 0, DataType: MTLDataTypeInt, Bytes: []byte{2, 0, 0, 0}}}}
	if CacheKey("s", "k", a) == CacheKey("s", "k", b) || CacheKey("s", "k", a) == CacheKey("s", "k", CompileOptions{}) {
		t.Error("constant values do not change the cache key")
	}
}
