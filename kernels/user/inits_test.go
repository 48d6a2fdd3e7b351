package user

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// gatherSource is an embedding gather with 64-bit indices, as training
// code writes it.
const gatherSource = `__global__ void gather(T* out, const T* table, const long* ids, int C) {
    int i = blockIdx.x, c = threadIdx.x;
    if (c < C) out[i * C + c] = table[ids[i] * C + c];
}
`

// gatherYAML has its ids line on line 15, the init's text from column 48.
const gatherYAML = `name: t_gather
sources: {cuda: g.cu}
dtypes: [f32]
knobs:
  WG: {values: [64, 128], default: 64}
  SPLIT: {values: [1, 2], default: 1, shape: true}
dims:
  N: {default: 8}
  V: {default: 32}
  C: {default: 4}
values:
  wg_half: "WG / 2"
  v_split: "V * SPLIT"
buffers:
  - {name: ids, dtype: i64, shape: [N], init: "randint(0, V)"}
  - {name: table, dtype: T, shape: [V, C], init: "uniform(-1.0 / C, 1.0 / C)"}
  - {name: out, dtype: T, shape: [N, C], out: true}
dispatches:
  - {entry: gather, grid: [N], threads: [WG], args: [out, table, ids, C]}
check: none
`

const idsInit = `init: "randint(0, V)"`

// withIDs is gatherYAML with the ids buffer's init (and dtype) replaced.
func withIDs(t *testing.T, dtype, init string) string {
	t.Helper()
	y := strings.Replace(gatherYAML, idsInit, "init: "+init, 1)
	return strings.Replace(y, "dtype: i64, shape: [N]", "dtype: "+dtype+", shape: [N]", 1)
}

func loadGather(t *testing.T, yaml string) (*Family, error) {
	t.Helper()
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": yaml, "g.cu": gatherSource}))
}

// Init arguments are expressions of the spec: randint(0, V) indexes
// below V whatever V the spec (or the check's tiny shape) has.
func TestInitArgumentsAreExpressions(t *testing.T) {
	for _, c := range []struct {
		name, init string
		dims       map[string]int
		knobs      map[string]int
		lo, hi     float64
	}{
		{"a dim", `"randint(0, V)"`, nil, nil, 0, 32},
		{"the dim lowered", `"randint(0, V)"`, map[string]int{"V": 3}, nil, 0, 3},
		{"a call with a comma", `"randint(1, min(V, 10))"`, nil, nil, 1, 10},
		{"a value over a shape knob", `"randint(0, v_split)"`, map[string]int{"V": 5}, map[string]int{"SPLIT": 2}, 0, 10},
		{"numbers", `"randint(2, 7)"`, nil, nil, 2, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := loadGather(t, withIDs(t, "i64", c.init))
			if err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
			for k, v := range c.dims {
				s.Dims[k] = v
			}
			for k, v := range c.knobs {
				s.Knobs[k] = v
			}
			p, err := f.Plan(s, cudaDev)
			if err != nil {
				t.Fatal(err)
			}
			ids := p.Buffers[0]
			if ids.Type != profiler.I64 || ids.Init != profiler.InitInts || ids.Lo != c.lo || ids.Hi != c.hi {
				t.Fatalf("ids %s %s [%g, %g), want i64 ints [%g, %g)", ids.Type, ids.Init, ids.Lo, ids.Hi, c.lo, c.hi)
			}
			if !ids.IntBits {
				t.Fatal("an i64 randint buffer carries no integer patterns (IntBits)")
			}
			for i, s := range profiler.Fill(ids, 7) {
				if v := profiler.IntValue(ids, s); float64(v) < c.lo || float64(v) >= c.hi {
					t.Fatalf("ids[%d] = %d, outside [%g, %g)", i, v, c.lo, c.hi)
				}
			}
			if tb := p.Buffers[1]; tb.Lo != -1.0/float64(s.Dims["C"]) || tb.Hi != 1.0/float64(s.Dims["C"]) {
				t.Errorf("table uniform(-1.0 / C, 1.0 / C) at C=%d: [%g, %g)", s.Dims["C"], tb.Lo, tb.Hi)
			}
		})
	}
}

// A bad init argument is a load error naming the buffer, the argument
// and the init, at the argument's line and column.
func TestBadInitArguments(t *testing.T) {
	for _, c := range []struct {
		name, dtype, init string
		want              []string
	}{
		{"unknown name", "i64", `"randint(0, Vx)"`, []string{"kernel.yaml:15:59:", "buffers[ids].init", "unknown name 'Vx'", "init randint(0, Vx)"}},
		{"a comparison", "i64", `"randint(0, V > 2)"`, []string{"buffers[ids].init", "'V > 2' in init randint(0, V > 2) is true or false"}},
		{"a knob that keeps the shape", "i64", `"randint(0, WG)"`, []string{"buffers[ids].init", "uses knob WG, which does not change the shape", "shape: true"}},
		{"a value over such a knob", "i64", `"randint(0, wg_half)"`, []string{"uses knob WG"}},
		{"a keyword is a number", "f32", `"normal(0, 1, outliers=V, scale=2)"`, []string{"buffers[ids].init", `"V" in "normal(0, 1, outliers=V, scale=2)" is not a number: outliers= takes a number`}},
		{"an empty argument", "i64", `"randint(0, )"`, []string{"buffers[ids].init", `"" in "randint(0, )" is not a number`}},
		{"constant bounds still checked at load", "i64", `"randint(5, 5)"`, []string{"buffers[ids].init", "randint(5, 5): want integers lo < hi"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadGather(t, withIDs(t, c.dtype, c.init))
			errorSays(t, err, c.want)
		})
	}
}

// Arguments valid at the defaults but not for every spec are refused per
// spec, naming the buffer, the init, what it came to and the values.
func TestInitArgumentsPerSpec(t *testing.T) {
	for _, c := range []struct {
		init string
		dims map[string]int
		want []string
	}{
		{`"randint(0, V - 8)"`, map[string]int{"V": 8}, []string{"buffer ids: init randint(0, V - 8) is randint(0, 0): want integers lo < hi", "for V=8"}},
		{`"randint(0, V / 4.0)"`, map[string]int{"V": 6}, []string{"buffer ids", "randint(0, 1.5)", "for V=6"}},
		{`"normal(0, C - 4)"`, map[string]int{"C": 2}, []string{"buffer ids", "normal(0, -2): the standard deviation must be ≥ 0", "for C=2"}},
		// both bounds expressions: each name once, in the order they come
		{`"uniform(C - 4, V - C)"`, map[string]int{"V": 4}, []string{"buffer ids", "uniform(0, 0): want lo < hi", "for C=4, V=4: make it valid"}},
	} {
		t.Run(c.init, func(t *testing.T) {
			dt := "i64"
			if !strings.HasPrefix(c.init, `"randint`) {
				dt = "f32"
			}
			src := gatherSource
			if dt == "f32" { // a float buffer at `const long*` would be refused
				src = strings.Replace(src, "const long* ids", "const T* ids", 1)
			}
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": withIDs(t, dt, c.init), "g.cu": src}))
			if err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
			if _, err := f.Plan(s, cudaDev); err != nil {
				t.Fatalf("at the defaults: %v", err)
			}
			for k, v := range c.dims {
				s.Dims[k] = v
			}
			_, err = f.Plan(s, cudaDev)
			errorSays(t, err, c.want)
		})
	}
}

// A buffer bound to an integer pointer must have that integer's width:
// an i32 buffer read through `const long*` would be read 8 bytes at a
// time. (The table also holds the other pointee rules: fp8, char, vectors.)
func TestIntegerPointeeWidth(t *testing.T) {
	for _, c := range []struct{ pointee, dtype, want string }{
		{"long", "i64", ""},
		{"int64_t", "i64", ""},
		{"unsigned long", "u64", ""},
		{"size_t", "u64", ""},
		{"int", "i32", ""},
		{"long", "i32", "buffer ids holds i32 but parameter `const long* ids` points to i64"},
		{"int", "i64", "buffer ids holds i64 but parameter `const int* ids` points to i32"},
		{"uint64_t", "i64", "points to u64"},
		{"unsigned int", "i32", ""},
		{"uint32_t", "i32", ""},
		{"unsigned", "i64", "buffer ids holds i64 but parameter `const unsigned* ids` points to u32"},
		{"uint", "u64", "points to u32"},
		{"uint32_t", "u32", ""},
		{"int", "u32", "buffer ids holds u32 but parameter `const int* ids` points to i32"},
		{"unsigned char", "u8", ""},
		{"uint8_t", "u8", ""},
		{"uint8_t", "fp8e4m3", ""}, // fp8 bytes read as uint8_t and converted by the kernel
		{"int8_t", "i8", ""},
		{"signed char", "u8", "buffer ids holds u8 but parameter `const signed char* ids` points to i8"},
		{"char", "u8", ""}, // a plain char* views any buffer's bytes
		{"short", "i16", ""},
		{"uint16_t", "u16", ""},
		{"uint16_t", "i16", "points to u16"},
		{"float", "u8", "buffer ids holds u8 but parameter `const float* ids` points to f32"},
		{"double", "f64", ""},
		{"double", "f32", "buffer ids holds f32 but parameter `const double* ids` points to f64"},
		{"__nv_fp8_e4m3", "fp8e4m3", ""},
		{"__nv_fp8_e4m3", "fp8e5m2", "buffer ids holds fp8e5m2 but parameter `const __nv_fp8_e4m3* ids` points to fp8e4m3"},
		{"__nv_fp8_e5m2", "u8", "points to fp8e5m2"},
		// An 8- or 16-byte integer vector is the width of a load, not the
		// data's type (Marlin's `const int4* A` carries an fp16 matrix): it
		// takes any buffer, as char* does; float vectors keep their type.
		{"int4", "f16", ""},
		{"uint4", "bf16", ""},
		{"int2", "f32", ""},
		{"uint2", "u8", ""},
		{"int4", "i32", ""},
		{"float4", "f16", "buffer ids holds f16 but parameter `const float4* ids` points to f32"},
		{"__half2", "f32", "buffer ids holds f32 but parameter `const __half2* ids` points to f16"},
	} {
		t.Run(fmt.Sprintf("%s* given %s", c.pointee, c.dtype), func(t *testing.T) {
			src := strings.Replace(gatherSource, "const long* ids", "const "+c.pointee+"* ids", 1)
			init := idsInit[6:]
			if dt, _ := profiler.ParseBufferDType(c.dtype); !dt.IsInt() {
				init = `"uniform(0, 4)"`
			}
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": withIDs(t, c.dtype, init), "g.cu": src}))
			if err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
			_, err = f.Plan(s, cudaDev)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// Integer buffers keep every value exactly: an i32 or u32 buffer any of
// its type, an i64 (u64) one those within int32's (uint32's) range, as
// their 32-bit patterns travel on the host (profiler.BufferSpec.IntBits);
// and a u64 buffer holds no negative value: an init that would leave
// those is refused, naming the init and the bound, where before its
// values were rounded (a randint could reach its excluded bound: an index
// one past the table) or clamped to 0.
func TestIntegerInitsStayExact(t *testing.T) {
	for _, c := range []struct {
		name, dtype, init string
		dims              map[string]int
		npy               []float64
		want              string // "" when it plans
	}{
		{"randint past 2^24", "i64", `"randint(-16777218, 16777219)"`, nil, nil, ""},
		{"randint over all of u32", "u32", `"randint(0, 4294967296)"`, nil, nil, ""},
		{"randint over all of i32", "i32", `"randint(-2147483648, 2147483648)"`, nil, nil, ""},
		{"randint over all of u32 into u64", "u64", `"randint(0, 4294967296)"`, nil, nil, ""},
		{"randint past i32's range", "i32", `"randint(0, 2147483649)"`, nil, nil, "randint(0, 2147483649): an i32 buffer holds -2147483648 to 2147483647, and 2147483648 is out of that range"},
		{"randint past int32 into i64", "i64", `"randint(0, 2147483649)"`, nil, nil, "randint(0, 2147483649): i64 values reach 2147483648, but mltop keeps an i64 buffer's values exactly only within int32's range, -2147483648 to 2147483647 (they travel as 32-bit patterns on the host): keep them within it, or give the buffer `dtype: u64` (exact from 0 to 4294967295)"},
		{"randint below int32 into i64", "i64", `"randint(-2147483649, 0)"`, nil, nil, "randint(-2147483649, 0): i64 values reach -2147483649, but mltop keeps an i64 buffer's values exactly only within int32's range, -2147483648 to 2147483647 (they travel as 32-bit patterns on the host): keep them within it"},
		{"randint past uint32 into u64", "u64", `"randint(0, 4294967297)"`, nil, nil, "randint(0, 4294967297): u64 values reach 4294967296, but mltop keeps a u64 buffer's values exactly only within uint32's range, 0 to 4294967295 (they travel as 32-bit patterns on the host): keep them within it"},
		{"one value within uint32", "u64", `"randint(V, V + 1)"`, map[string]int{"V": 1 << 30}, nil, ""},
		{"one value past 2^24", "i64", `"randint(V, V + 1)"`, map[string]int{"V": 1<<24 + 1}, nil, ""},
		{"one value past uint32", "u64", `"randint(V, V + 1)"`, map[string]int{"V": 1 << 33}, nil, "init randint(V, V + 1) is randint(8589934592, 8589934593): u64 values reach 8589934592"},
		{"randint past int32 for one spec", "i64", `"randint(0, V)"`, map[string]int{"V": 1 << 32}, nil, "init randint(0, V) is randint(0, 4294967296): i64 values reach 4294967295"},
		{"one negative value into u64", "u64", `"randint(-1, 0)"`, nil, nil, "a u64 buffer holds no negative value (-1)"},
		{"negative randint into u64", "u64", `"randint(-4, 4)"`, nil, nil, "a u64 buffer holds no negative value (-4)"},
		{"arange past 2^24", "i64", "arange", map[string]int{"N": 1<<24 + 2}, nil, ""},
		{"arange past int32", "i64", "arange", map[string]int{"N": 1<<31 + 2}, nil, "buffer ids: arange over 2147483650 elements: i64 values reach 2147483649, but mltop keeps an i64 buffer's values exactly only within int32's range"},
		{"arange of u32 past 2^24", "u32", "arange", map[string]int{"N": 1<<24 + 2}, nil, ""},
		{"arange of floats past 2^24", "f32", "arange", map[string]int{"N": 1<<24 + 2}, nil, ""},
		{"npy past 2^24", "i64", `"npy:ids.npy"`, map[string]int{"N": 3}, []float64{0, -1 << 31, 1<<30 + 1}, ""},
		{"npy past int32", "i64", `"npy:ids.npy"`, map[string]int{"N": 3}, []float64{0, 1, 1 << 40}, "npy:ids.npy: i64 values reach 1099511627776, but mltop keeps an i64 buffer's values exactly only within int32's range"},
		{"npy past uint32", "u64", `"npy:ids.npy"`, map[string]int{"N": 2}, []float64{0, 1 << 32}, "npy:ids.npy: u64 values reach 4294967296, but mltop keeps a u64 buffer's values exactly only within uint32's range"},
		{"npy over all of u32", "u32", `"npy:ids.npy"`, map[string]int{"N": 3}, []float64{0, 1<<24 + 1, 1<<32 - 1}, ""},
		{"negative npy into u64", "u64", `"npy:ids.npy"`, map[string]int{"N": 3}, []float64{0, -1, 5}, "npy:ids.npy: a u64 buffer holds no negative value (-1)"},
		{"randint over u8's range", "u8", `"randint(0, 256)"`, nil, nil, ""},
		// every 32-bit pattern of an int* word: the signed draw, not a wider dtype
		{"randint over u32's range into i32", "i32", `"randint(0, 4294967296)"`, nil, nil, "randint(0, 4294967296): an i32 buffer holds -2147483648 to 2147483647, and 4294967295 is out of that range: for every bit pattern of its words (packed values, hashes) draw randint(-2147483648, 2147483648)"},
		{"randint past u8's range", "u8", `"randint(0, 257)"`, nil, nil, "buffers[ids].init: randint(0, 257): a u8 buffer holds 0 to 255, and 256 is out of that range"},
		{"negative randint into u8", "u8", `"randint(-1, 3)"`, nil, nil, "a u8 buffer holds no negative value (-1): make the values ≥ 0, or give the buffer a signed dtype (i8)"},
		{"randint below i8's range", "i8", `"randint(-129, 0)"`, nil, nil, "an i8 buffer holds -128 to 127, and -129 is out of that range"},
		{"randint past i16's range for one spec", "i16", `"randint(0, V)"`, map[string]int{"V": 40000}, nil, "init randint(0, V) is randint(0, 40000): an i16 buffer holds -32768 to 32767, and 39999 is out of that range"},
		{"uniform past u16's range", "u16", `"uniform(0, 70000)"`, nil, nil, "uniform(0, 70000): a u16 buffer holds 0 to 65535, and 70000 is out of that range"},
		{"uniform within u32", "u32", `"uniform(0, 100000)"`, nil, nil, ""},
		{"npy past u8's range", "u8", `"npy:ids.npy"`, map[string]int{"N": 3}, []float64{0, 255, 300}, "npy:ids.npy: a u8 buffer holds 0 to 255, and 300 is out of that range"},
		{"uniform past e4m3's range", "fp8e4m3", `"uniform(-500, 1)"`, nil, nil, "uniform(-500, 1): fp8e4m3 holds finite values up to ±448, and -500 is out of that range"},
		{"uniform within e5m2's range", "fp8e5m2", `"uniform(-500, 1)"`, nil, nil, ""},
		{"npy past e5m2's range", "fp8e5m2", `"npy:ids.npy"`, map[string]int{"N": 2}, []float64{0, 60000}, "npy:ids.npy: fp8e5m2 holds finite values up to ±57344, and 60000 is out of that range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := gatherSource
			switch c.dtype {
			case "i32":
				src = strings.Replace(src, "const long* ids", "const int* ids", 1)
			case "u64":
				src = strings.Replace(src, "const long* ids", "const unsigned long* ids", 1)
			case "f32":
				src = strings.Replace(src, "const long* ids", "const T* ids", 1)
			case "i64":
			default:
				src = strings.Replace(src, "const long* ids", "const void* ids", 1)
			}
			files := map[string]string{"kernel.yaml": withIDs(t, c.dtype, c.init), "g.cu": src}
			if c.npy != nil {
				files["ids.npy"] = npyFile(t, []int{len(c.npy)}, c.npy)
			}
			f, err := Load(usertest.Write(t, files))
			if err == nil {
				s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
				for k, v := range c.dims {
					s.Dims[k] = v
				}
				_, err = f.Plan(s, cudaDev)
			}
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v\nwant %q", err, c.want)
			}
		})
	}
}

// randint fills a float buffer too (integers as floats: exact distances
// in a ball query's reference); its bounds are still checked.
func TestRandintOfFloats(t *testing.T) {
	if _, err := loadGather(t, withIDs(t, "f32", `"randint(-12, 12)"`)); err != nil && strings.Contains(err.Error(), "init") {
		t.Errorf("randint on an f32 buffer: %v", err)
	}
	_, err := loadGather(t, withIDs(t, "f32", `"randint(3, 3)"`))
	errorSays(t, err, []string{"buffers[ids].init", "randint(3, 3): want integers lo < hi"})
}
