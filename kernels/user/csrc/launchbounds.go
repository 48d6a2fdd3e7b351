package csrc

import "strings"

// LaunchBounds is the first argument of the `__launch_bounds__(…)` that
// comes before the kernel name at toks[at] in its declaration (the most
// threads per block the kernel is compiled for), as written with single
// spaces between tokens, and the line it is on; "" when the declaration
// has none. `mltop new` makes the thread count of it and `mltop check`
// holds the threads against it.
func LaunchBounds(toks []Token, at int) (string, int) {
	for i := at - 1; i >= 0; i-- {
		switch toks[i].Text {
		case ";", "{", "}":
			return "", 0
		case "__launch_bounds__":
			if i+1 >= len(toks) || toks[i+1].Text != "(" {
				return "", 0
			}
			end := Matching(toks, i+1)
			if end < 0 {
				return "", 0
			}
			return strings.Join(firstArg(toks[i+2:end]), " "), toks[i].Line
		}
	}
	return "", 0
}

// firstArg are the texts of the tokens before the first top-level comma.
func firstArg(toks []Token) []string {
	var out []string
	for _, t := range SplitAtCommas(toks, true)[0] {
		out = append(out, t.Text)
	}
	return out
}
