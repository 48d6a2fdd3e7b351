package profiler

import (
	"fmt"
	"strings"
)

// ParseBool is the one boolean parser of the command line (--set
// causal=yes) and sweep files (causal: yes): true/false, 1/0, yes/no,
// on/off, in any case.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean: use true/false, 1/0, yes/no or on/off", s)
}
