package usage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestReadKeysDeclared: every attribute the package reads is read by a
// literal key that readKeys holds, so that pruning a log record on the
// wire to readKeys never drops what a rule reads.
func TestReadKeysDeclared(t *testing.T) {
	t.Parallel()
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	for _, fi := range files {
		if !strings.HasSuffix(fi.Name(), ".go") || strings.HasSuffix(fi.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, fi.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			// The accessors themselves, and the series' key of a
			// metric (which is every attribute, never pruned).
			if ok && (fn.Name.Name == "count" || fn.Name.Name == "seriesKey") {
				continue
			}
			ast.Inspect(d, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 1 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "str" && sel.Sel.Name != "num" && sel.Sel.Name != "count") {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: an attribute read by a key that is not a literal: readKeys cannot be checked", fset.Position(call.Pos()))
					return true
				}
				key, _ := strconv.Unquote(lit.Value)
				if !readKeys[key] {
					t.Errorf("%s: attribute %q is read but not in readKeys: pruning drops it", fset.Position(call.Pos()), key)
				}
				found++
				return true
			})
		}
	}
	if found < len(readKeys) {
		t.Errorf("found %d reads of attributes, want at least one of each of the %d keys of readKeys", found, len(readKeys))
	}
}
