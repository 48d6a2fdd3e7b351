package profiler

import "strings"

// FirstLine is the first line of a message, trimmed: what a status line
// or a one-line progress report shows of a multi-line error.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// OneLine is the whole of a message on one line: each line break becomes
// " | " and a carriage return a space, so that a CSV cell or a log line
// keeps every line of a compiler's error.
func OneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " | ")
}
