package setup

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines a diff shows around a change.
const diffContext = 2

// diff returns the line changes from old to new as "-"/"+" lines with a
// few unchanged lines of context, in the manner of diff -u (without line
// numbers); "" when they are equal.
func diff(name, old, new string) string {
	if old == new {
		return ""
	}
	a, b := lines(old), lines(new)
	// lcs[i][j]: length of the longest common subsequence of a[i:], b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		text string
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s (after hub setup)\n", name, name)
	last := -1 // index of the last op written
	for k, o := range ops {
		if o.kind == ' ' {
			continue
		}
		from := max(k-diffContext, last+1)
		if last >= 0 && from > last+1 {
			sb.WriteString("…\n")
		}
		for c := from; c < k; c++ {
			fmt.Fprintf(&sb, " %s\n", ops[c].text)
		}
		fmt.Fprintf(&sb, "%c%s\n", o.kind, o.text)
		last = k
		// Trailing context; a change close behind continues the hunk.
		for c := k + 1; c < len(ops) && c <= k+diffContext && ops[c].kind == ' '; c++ {
			fmt.Fprintf(&sb, " %s\n", ops[c].text)
			last = c
		}
	}
	return sb.String()
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
