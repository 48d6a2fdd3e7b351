package metal

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

const structSource = `
#define NSRC 3
typedef struct {
    int32_t  ne00;
    uint64_t nb1; // row stride in bytes
    float    eps;
    int32_t  nef[NSRC];
} norm_args;
struct plain_args { uint n; half2 h; };
struct half_args { uint n; half h; bfloat b; };
struct nested_args { norm_args inner; };
typedef struct { int32_t a, b; } two_per_line;
`

func TestStructFields(t *testing.T) {
	got, found, err := StructFields(structSource, "norm_args")
	want := []StructField{
		{Name: "ne00", Type: "int32_t", Kind: profiler.ScalarI32, Count: 1},
		{Name: "nb1", Type: "uint64_t", Kind: profiler.ScalarU64, Count: 1},
		{Name: "eps", Type: "float", Kind: profiler.ScalarF32, Count: 1},
		{Name: "nef", Type: "int32_t", Kind: profiler.ScalarI32, Count: 3},
	}
	if err != nil || !found || !reflect.DeepEqual(got, want) {
		t.Errorf("norm_args: %v, %v, %v\nwant %v", got, found, err, want)
	}
	got, _, err = StructFields(structSource, "half_args")
	want = []StructField{
		{Name: "n", Type: "uint", Kind: profiler.ScalarU32, Count: 1},
		{Name: "h", Type: "half", Kind: profiler.ScalarF16, Count: 1},
		{Name: "b", Type: "bfloat", Kind: profiler.ScalarBF16, Count: 1},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("half_args: %v, %v\nwant %v", got, err, want)
	}
	if _, found, err := StructFields(structSource, "missing_args"); found || err != nil {
		t.Errorf("an undefined struct: found %v, %v", found, err)
	}
	for name, msg := range map[string]string{
		"plain_args":   "field h has type half2",
		"nested_args":  "field inner has type norm_args",
		"two_per_line": "cannot read the field `int32_t a, b`",
	} {
		if _, found, err := StructFields(structSource, name); !found || err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: found %v, error %v, want one containing %q", name, found, err, msg)
		}
	}
}
