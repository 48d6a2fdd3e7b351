package profiler

import (
	"errors"
	"fmt"
	"strings"
)

// InputError is bad input: a malformed or impossible sweep file or flag. The
// CLI exits 2 on it, before anything runs.
type InputError struct {
	File      string
	Line, Col int
	Field     string
	Msg       string
	Snippet   string
}

func (e *InputError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
			if e.Col > 0 {
				fmt.Fprintf(&b, ":%d", e.Col)
			}
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "%s: ", e.Field)
	}
	b.WriteString(e.Msg)
	if e.Snippet != "" {
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(e.Snippet, "\n"))
	}
	return b.String()
}

// IsInputError reports whether err is bad input (exit code 2).
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}
