package csrc

import "testing"

func TestIntConst(t *testing.T) {
	src := `#define BINS 256
#define LOG2_WARP 5U
#define WARP (1U << LOG2_WARP)
#define WARPS 6
#define MEM (WARPS * BINS)
#define HALF (MEM / 2 - 0x10)
#define SELF SELF
#define TYPED ((int)4)
#define GONE 7
#undef GONE
#if 0
#define DEAD 3
#endif
#define F(x) (x * 2)
#ifdef FAST
#define TILE 4
#else
#define TILE 8
#endif
#define SAME 3
#define SAME 3
`
	macros := ObjectMacros(Scan(src))
	cases := []struct {
		text string
		want int64
		ok   bool
	}{
		{"MEM", 1536, true},
		{"WARP * WARPS", 192, true},
		{"HALF", 752, true},
		{"-(BINS % 100) + ~0", -57, true},
		{"BINS >> 2 | 1", 65, true},
		{"BINS / (WARPS - 6)", 0, false}, // division by zero
		{"SELF", 0, false},               // a macro naming itself
		{"TYPED", 0, false},              // a cast is not evaluated
		{"GONE", 0, false},               // #undef'd
		{"DEAD", 0, false},               // under #if 0
		{"F(2)", 0, false},               // function-like macros are not expanded
		{"WG * 4", 0, false},             // a name no macro defines
		{"BINS BINS", 0, false},          // trailing tokens
		{"TILE", 0, false},               // defined twice with other values: not known before compiling
		{"SAME * 2", 6, true},            // defined twice the same
		// sizeof of a built-in type, as the device has it
		{"sizeof(unsigned long long) * 8", 64, true}, // torchvision's threadsPerBlock
		{"sizeof(float4) / sizeof(float)", 4, true},
		{"BINS * sizeof(const unsigned int)", 1024, true},
		{"sizeof(long int) + sizeof(signed char) + sizeof(__half)", 11, true},
		{"sizeof(float*) + sizeof(const char *)", 16, true},
		{"sizeof(T)", 0, false},     // a type mltop cannot size
		{"sizeof(BINS)", 0, false},  // an expression
		{"sizeof(int**)", 0, false}, // not read
		{"sizeof int", 0, false},    // no parentheses
		{"sizeof(unsigned int", 0, false},
	}
	for _, c := range cases {
		got, ok := IntConst(c.text, macros)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("IntConst(%q) = %d, %v; want %d, %v", c.text, got, ok, c.want, c.ok)
		}
	}
}

// TypeBytes sizes a type as a declaration writes it, its words
// normalised (a leading signed, a trailing int), and knows no type of the
// source.
func TestTypeBytes(t *testing.T) {
	for in, want := range map[string]int{"float": 4, "unsigned long int": 8, "signed char": 1, "signed int": 4, "unsigned int": 4,
		"c10::BFloat16": 2, "bfloat": 2, "__nv_bfloat162": 4, "uint4": 16, " long  long ": 8, "block_q4_0": 0, "T": 0} {
		n, ok := TypeBytes(in)
		if n != want || ok != (want > 0) {
			t.Errorf("TypeBytes(%q) = %d, %v; want %d", in, n, ok, want)
		}
	}
}
