// Package suggest finds the names a mistyped one was most likely meant to
// be, for "did you mean ...?" in error messages. Its functions are pure
// and safe for concurrent use.
package suggest

import "strings"

// maxEdits is how far a name may be from a valid one and still be
// suggested: two edits catch a swapped pair plus a slip, and rarely
// suggest an unrelated word for a short one.
const maxEdits = 2

// Closest returns the names of valid within two edits of name
// (insertions, deletions, substitutions and swaps of neighbours,
// case-insensitive), nearest first, in valid's order among equals; and a
// name of valid that name starts, or that starts name, when none is that
// close (so "sliding" finds "sliding-log"). A name equal to a valid one
// but for case is the nearest of all.
func Closest(name string, valid []string) []string {
	n := strings.ToLower(name)
	var out []string
	for d := 0; d <= maxEdits; d++ {
		for _, v := range valid {
			if distance(n, strings.ToLower(v)) == d {
				out = append(out, v)
			}
		}
	}
	if len(out) > 0 || len(n) < 3 {
		return out
	}
	for _, v := range valid {
		lv := strings.ToLower(v)
		if strings.HasPrefix(lv, n) || strings.HasPrefix(n, lv) {
			out = append(out, v)
		}
	}
	return out
}

// DidYouMean is " (did you mean X?)" or " (did you mean X or Y?)" for the
// names of valid closest to name, or "" when none is close.
func DidYouMean(name string, valid []string) string {
	c := Closest(name, valid)
	if len(c) == 0 {
		return ""
	}
	if len(c) > 3 {
		c = c[:3]
	}
	return " (did you mean " + strings.Join(c, " or ") + "?)"
}

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev2 := make([]int, len(y)+1) // row i-2
	prev := make([]int, len(y)+1)  // row i-1
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
