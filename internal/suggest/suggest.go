// Package suggest finds the known name a mistyped one was meant to be, for "did you mean"
// errors: one suggestion instead of the whole list.
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns the known name nearest to name by edit distance (Damerau: a swap of two
// neighbours counts one, the commonest typo), case folded, or "" when none is near enough to
// be a typo: at most a third of the name's length (at least 1, at most 3) away. A known name
// that name is the start of (h100 for h100-80gb) comes first: a shortened name is the likelier
// slip (of several, the first in known's order).
func Closest(name string, known []string) string {
	n := strings.ToLower(name)
	if n == "" {
		return ""
	}
	limit := min(max(len([]rune(n))/3, 1), 3)
	best, bestD := "", limit+1
	var prefixed []string
	for _, k := range known {
		kl := strings.ToLower(k)
		if strings.HasPrefix(kl, n) {
			prefixed = append(prefixed, k)
		}
		if d := Distance(n, kl); d < bestD {
			best, bestD = k, d
		}
	}
	if len(prefixed) > 0 {
		return prefixed[0]
	}
	return best
}

// Hint is what an "unknown X" error says after the name: the suggestion if there is one, and
// where the full list is (a command such as "gpusim list devices").
func Hint(name string, known []string, listed string) string {
	if s := Closest(name, known); s != "" {
		return fmt.Sprintf("did you mean %q? %s lists all %d", s, listed, len(known))
	}
	return fmt.Sprintf("%s lists all %d", listed, len(known))
}

// Distance is the optimal-string-alignment edit distance between a and b: insertions,
// deletions, substitutions and swaps of two neighbours each count one.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
