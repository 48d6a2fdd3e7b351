package user

import "testing"

// A reference's Rows names each output's element count when there are
// several (a summary's total then adds up), once per run of outputs with
// the same rows; one output reads as before; a 1-D output is "all".
func TestDescribeChecked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts []checkedRows
		want  string
	}{
		{"one output", []checkedRows{{"y", "all 128 rows", 16384}}, "all 128 rows of y (python reference)"},
		{"same rows", []checkedRows{{"y", "all 128 rows", 16384}, {"z", "all 128 rows", 8192}},
			"all 128 rows of y (16384 elements) and of z (8192 elements) (python reference)"},
		{"other rows", []checkedRows{{"y", "all 128 rows", 16384}, {"m", rowsChecked([]int{0}, 1, 7), 128}},
			"all 128 rows of y (16384 elements) and all of m (128 elements) (python reference)"},
		{"three", []checkedRows{{"a", "all 2 rows", 2}, {"b", "all 2 rows", 1}, {"c", "all 3 rows", 3}},
			"all 2 rows of a (2 elements), of b (1 element) and all 3 rows of c (3 elements) (python reference)"},
	} {
		if got := describeChecked(tc.parts, "python reference"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := rowsChecked([]int{0, 3}, 4, 7); got != "2 of 4 rows (first, last and 0 seeded with 7)" {
		t.Errorf("sampled rows: %q", got)
	}
}
