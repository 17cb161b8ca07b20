package hub

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestRulesUseNoServiceDeclarations parses the package: a rule file
// (NOUN.go, and every other file but the services' and their wiring)
// may use nothing declared in a service file (NOUN_service.go). Values
// shared by several nouns live in files of their own, so that a noun's
// rules read without its services.
func TestRulesUseNoServiceDeclarations(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := pkgs["hub"].Files
	isService := func(name string) bool { return strings.HasSuffix(name, "_service.go") }
	wiring := map[string]bool{"core.go": true, "services.go": true, "store.go": true} // they assemble the services and the store groups
	declaredIn := map[string]string{}
	for name, f := range files {
		if !isService(name) {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					declaredIn[d.Name.Name] = name
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						declaredIn[sp.Name.Name] = name
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							declaredIn[n.Name] = name
						}
					}
				}
			}
		}
	}
	var uses []string
	checked := 0
	for name, f := range files {
		if isService(name) || wiring[name] {
			continue
		}
		checked++
		// Names that are not references: fields, methods, keys of
		// composite literals, selected members.
		skip := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				for _, id := range n.Names {
					skip[id] = true
				}
			case *ast.FuncDecl:
				skip[n.Name] = true
			case *ast.SelectorExpr:
				skip[n.Sel] = true
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok {
					skip[id] = true
				}
			case *ast.Ident:
				// Obj is set for what the file itself declares (locals
				// included): a name declared in another file has none.
				if svc, ok := declaredIn[n.Name]; ok && !skip[n] && n.Obj == nil {
					uses = append(uses, fset.Position(n.Pos()).String()+": uses "+n.Name+", declared in "+svc+": move it to a file of its own (or to its noun's rule file)")
				}
			}
			return true
		})
	}
	sort.Strings(uses)
	for _, u := range uses {
		t.Error(u)
	}
	if checked < 20 {
		t.Fatalf("only %d rule files checked: the test no longer sees the package", checked)
	}
}

// TestTimeComesFromTheClock: outside clock.go, nothing in the package
// reads the time or starts a timer but through the Clock, so that tests
// drive every rule, wait and cache with a fake one.
func TestTimeComesFromTheClock(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go") && fi.Name() != "clock.go"
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	banned := map[string]bool{"Now": true, "Since": true, "Until": true, "After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true, "Sleep": true}
	for _, f := range pkgs["hub"].Files {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && id.Obj == nil && banned[sel.Sel.Name] {
				t.Errorf("%s: time.%s: read the time and start timers through the Clock", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
