package profiler

import "strings"

// Nearest is the candidate closest to name, "" when none is close enough
// to be the name meant: the same letters in another case first, then an
// edit distance of at most 1 for names under 5 letters and 2 from 5 on
// (atn_fwd suggests attn_fwd, BQQ suggests BQ). When two candidates are
// equally close (BX: BQ or BK?) it suggests neither; one-letter
// candidates are never suggested (every one-letter typo is "close").
func Nearest(name string, candidates []string) string {
	for _, c := range candidates {
		if c != name && strings.EqualFold(c, name) {
			return c
		}
	}
	limit := 1
	if len([]rune(name)) >= 5 {
		limit = 2
	}
	best, bestD, tied := "", limit+1, false
	for _, c := range candidates {
		if c == name || len([]rune(c)) < 2 {
			continue
		}
		switch d := EditDistance(name, c); {
		case d < bestD:
			best, bestD, tied = c, d, false
		case d == bestD && c != best:
			tied = true
		}
	}
	if tied {
		return ""
	}
	return best
}

// DidYouMean is "did you mean X? " for the candidate nearest name, or ""
// when none is near: the head of a hint in front of the list of names.
func DidYouMean(name string, candidates []string) string {
	if n := Nearest(name, candidates); n != "" {
		return "did you mean " + n + "? "
	}
	return ""
}

// EditDistance is the Damerau (optimal string alignment) distance:
// insertions, deletions, substitutions and swaps of neighbours cost 1.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
