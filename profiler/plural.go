package profiler

import "fmt"

// Plural is a count with its noun: "1 spec", "3 specs", "0 specs".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
