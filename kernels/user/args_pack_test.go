package user

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// forListsCU is a multi-tensor-apply shaped kernel of our own: a class
// template of lists whose extents index a constexpr array, an empty
// functor taken by value, and a parameter pack of extra arguments (one an
// enum).
const forListsCU = `#include <cstdint>
enum Level : unsigned char { LOW = 0, HIGH = 1 };
typedef enum : int { OFF = 0, ON = 1 } switch_t;
constexpr int kLanes[3] = {2, 4, 8};
template <int n>
struct Lists {
    void* ptrs[n][kLanes[n - 1]];
    int64_t lens[kLanes[n - 1]];
    unsigned char owner[6];
    int chunk_of[6];
    int first;
};
struct Twice {
    __device__ void operator()(int chunk, float* y, const float* x, int64_t n, float a, switch_t on) const {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n && on == ON) y[i] = a * x[i];
    }
};
template <typename L, typename F, typename... Extra>
__global__ void for_lists(int chunk, L lists, F fn, Extra... extra)
{
    fn(chunk, (float*)lists.ptrs[0][lists.owner[blockIdx.x % 6]], (const float*)lists.ptrs[1][0], lists.lens[0], extra...);
}
`

const forListsYAML = `name: t_for_lists
sources: {cuda: k.cu}
dtypes: [f32]
dims:
  N: {default: 1000}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - entry: "ENTRY"
    grid: ["cdiv(N, 128)"]
    threads: [128]
    args: ARGS
check: none
`

func forListsFamily(t *testing.T, entry, args string) (*Family, error) {
	t.Helper()
	y := strings.Replace(strings.Replace(forListsYAML, "ENTRY", entry, 1), "ARGS", args, 1)
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": forListsCU}))
}

const forListsEntry = "for_lists<Lists<2>, Twice, float, switch_t>"
const forListsArgs = `[128, {ptrs: [[y], [x]], lens: [N], owner: 0, chunk_of: i}, {}, 2.0, 1]`

// The pack's types come from the entry's template arguments after L and F,
// one parameter each with its C type (the enum as its underlying int);
// Lists<2> is laid out with n = 2 (kLanes[1] = 4 lanes); the functor is
// one byte; nested lists fill rows from their start, an expression with i
// every element.
func TestPackAndListsPlan(t *testing.T) {
	f, err := forListsFamily(t, forListsEntry, forListsArgs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dispatches[0]
	if len(d.Scalars) != 3 || d.Scalars[1].Name != "extra...[0]" || d.Scalars[1].Kind != profiler.ScalarF32 || d.Scalars[2].Kind != profiler.ScalarI32 || d.Scalars[2].I != 1 {
		t.Fatalf("scalars %+v: want chunk, extra...[0] f32, extra...[1] i32 = 1", d.Scalars)
	}
	if len(d.Structs) != 2 {
		t.Fatalf("structs %+v", d.Structs)
	}
	lists, fn := d.Structs[0], d.Structs[1]
	// ptrs 2*4*8 = 64, lens 4*8 = 32, owner 6 (+2 padding), chunk_of 24, first 4, padded to 8: 136
	if lists.Type != "Lists<2>" || len(lists.Bytes) != 136 || fn.Type != "Twice" || len(fn.Bytes) != 1 {
		t.Fatalf("structs %s of %d bytes and %s of %d, want Lists<2> of 136 and Twice of 1", lists.Type, len(lists.Bytes), fn.Type, len(fn.Bytes))
	}
	wantPtrs := []profiler.StructPointer{{Field: "ptrs[0]", Offset: 0, Arg: 0}, {Field: "ptrs[4]", Offset: 32, Arg: 1}}
	if !slices.Equal(lists.Pointers, wantPtrs) || !slices.Equal(d.Args, []string{"y", "x"}) {
		t.Errorf("pointers %+v args %v, want %+v and [y x]", lists.Pointers, d.Args, wantPtrs)
	}
	le := binary.LittleEndian
	if n := le.Uint64(lists.Bytes[64:]); n != 1000 {
		t.Errorf("lens[0] = %d, want 1000", n)
	}
	if n := le.Uint64(lists.Bytes[72:]); n != 0 {
		t.Errorf("lens[1] = %d, want 0 (past the list)", n)
	}
	for k := range 6 {
		if c := le.Uint32(lists.Bytes[104+4*k:]); c != uint32(k) {
			t.Errorf("chunk_of[%d] = %d, want %d", k, c, k)
		}
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool {
		return strings.Contains(n, "struct Lists<2> lists (136 bytes): fields not in args are zero: first; array fields given in part, the rest zero: ptrs (2 of 8), lens (1 of 4)")
	}) {
		t.Errorf("notes %q do not name the fields given in part", p.Notes)
	}
}

// A pack of an enum with a fixed underlying type takes that type: 300
// does not fit unsigned char.
func TestPackEnumUnderlyingType(t *testing.T) {
	entry := "for_lists<Lists<2>, Twice, float, Level>"
	for _, c := range []struct {
		v    string
		want string
	}{{"1", ""}, {"300", "300"}} {
		f, err := forListsFamily(t, entry, strings.Replace(forListsArgs, ", 1]", ", "+c.v+"]", 1))
		var p *profiler.Plan
		if err == nil { // a constant out of range is refused at load, else at plan time
			p, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
		}
		if c.want == "" {
			if err != nil || p.Dispatches[0].Scalars[2].Kind != profiler.ScalarU8 {
				t.Errorf("Level 1: %v, want a u8 scalar", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "300 does not fit in u8") {
			t.Errorf("Level %s: %v, want an error naming %s", c.v, err, c.want)
		}
	}
}

func TestPackAndListsErrors(t *testing.T) {
	for _, c := range []struct{ entry, args, want string }{
		{"for_lists<Lists<2>, Twice>", forListsArgs, "parameter `Extra... extra` of for_lists (line 20) is a pack whose types C++ would deduce from a launch's arguments, which mltop does not do: name its types in entry: after those of L, F"},
		{"for_lists<Lists<2>, Twice, {N}>", forListsArgs, "{N} is a value, not a type"},
		{forListsEntry, `[128, {}, {}, 2.0, 1]`, "k.cu:20, struct Lists<2>, which has fields: give the fields to set, as {ptrs: …, lens: …, owner: …} (fields: ptrs[2][4], lens[4]"},
		{forListsEntry, `[128, {}, {}, 2.0]`, "k.cu:20 for_lists(int chunk, L lists, F fn, float extra...[0], switch_t extra...[1]) takes 5 parameters: unbound `switch_t extra...[1]`"},
		{forListsEntry, `[128, {lens: [1, 2, 3, 4, 5]}, {}, 2.0, 1]`, "list [1, 2, 3, 4, 5] has 5 elements for field `int64_t lens[4]` of struct Lists<2>: give at most 4"},
		{forListsEntry, `[128, {ptrs: [[[y]]]}, {}, 2.0, 1]`, "list [[[y]]] nests 3 deep at element 0, but field"},
		{forListsEntry, `[128, {ptrs: [[y, x, y, x, y]]}, {}, 2.0, 1]`, "has 5 elements in dimension 2 of field"},
		{forListsEntry, `[128, {first: i}, {}, 2.0, 1]`, "i reads i, the element index of an array field, but field `int first` of struct Lists<2> is not an array"},
		{forListsEntry, `[128, {ptrs: y}, {}, 2.0, 1]`, "an array of pointers: give a list of buffers"},
		{forListsEntry, `[128, {lens: [N]}, 1, 2.0, 1]`, "expression 1 goes to parameter `F fn`"},
	} {
		_, err := forListsFamily(t, c.entry, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v\nwant it to say %q", c.entry, c.args, err, c.want)
		}
	}
}

// An element expression that does not fit its field is invalid at plan
// time, naming the element and i.
func TestListsElementExpressionRange(t *testing.T) {
	f, err := forListsFamily(t, forListsEntry, `[128, {owner: "i * 100"}, {}, 2.0, 1]`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	if err == nil || !strings.Contains(err.Error(), "owner[3] = i * 100 with i = 3") {
		t.Errorf("%v", err)
	}
}

// With no values for it, a pack the entry leaves out is empty.
func TestPackEmpty(t *testing.T) {
	if _, err := forListsFamily(t, "for_lists<Lists<2>, Twice>", `[128, {lens: [N]}, {}]`); err != nil {
		t.Errorf("an empty pack: %v", err)
	}
}
