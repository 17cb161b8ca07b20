package hub

// PatternsOverlap reports whether some path is covered by both normalised
// patterns: the rule the service applies to compiled patterns
// (overlapTable), on two strings, for the tests and benchmarks of package
// hub_test.
func PatternsOverlap(a, b string) bool {
	var o overlapper
	return o.overlap(compileGlob(a), compileGlob(b))
}
