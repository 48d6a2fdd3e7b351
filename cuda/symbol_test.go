package cuda

import (
	"slices"
	"testing"
)

func TestGlobalSymbolNames(t *testing.T) {
	for cxx, want := range map[string][]string{
		"c_Kernel":            {"c_Kernel", "_ZL8c_Kernel"},
		"::c_Kernel":          {"c_Kernel", "_ZL8c_Kernel"},
		"tables::twiddle":     {"_ZN6tables7twiddleE", "_ZN6tablesL7twiddleE"},
		"a::bb::tab":          {"_ZN1a2bb3tabE", "_ZN1a2bbL3tabE"},
		"_ZN6tables7twiddleE": {"_ZN6tables7twiddleE"},
	} {
		if got := globalSymbolNames(cxx); !slices.Equal(got, want) {
			t.Errorf("globalSymbolNames(%q) = %v, want %v", cxx, got, want)
		}
	}
}
