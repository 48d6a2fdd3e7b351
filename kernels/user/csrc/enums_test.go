package csrc

import (
	"slices"
	"testing"
)

func TestEnumDefs(t *testing.T) {
	src := `enum Mode : uint8_t;
enum ReductionType { SUM, MEAN, MAX = 5 };
enum class Op : unsigned int { A = 1, B = 4 };
typedef enum { X, Y } xy_t;
struct S { enum Mode m; };
typedef enum tag : short { P } p_t;`
	toks := Tokenize(src)
	var got []EnumDef
	for _, d := range EnumDefs(toks) {
		if toks[d.Open].Text != "{" || toks[d.End].Text != "}" {
			t.Errorf("%+v: body not at its braces", d)
		}
		d.Open, d.End = 0, 0
		got = append(got, d)
	}
	want := []EnumDef{{Name: "ReductionType"}, {Name: "Op", Base: "unsigned int"}, {Alias: "xy_t"}, {Name: "tag", Base: "short", Alias: "p_t"}}
	if !slices.Equal(got, want) {
		t.Errorf("EnumDefs = %+v, want %+v", got, want)
	}
}
