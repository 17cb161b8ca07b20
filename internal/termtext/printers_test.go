package termtext

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// printers are the packages that print what agents wrote to a person's
// terminal (hubctl's output, the git hook's refusal, the tmux pane, the
// hooks' warnings, hub's own output and logs).
var printers = []string{"cmd/hubctl", "cmd/hub", "internal/guard", "internal/deliver", "internal/hook", "internal/setup"}

// TestPrintersGoThroughTheSanitizer reads the printers' source and fails
// on any way to reach a terminal that does not go through this package:
// the process's stdout and stderr may appear only wrapped,
// termtext.NewWriter(os.Stdout), so every writer a printer is handed is
// a sanitizing one; fmt.Print*, print, the log package's and slog's
// default loggers and other raw descriptors write to them unwrapped and
// are refused. In internal/deliver, text reaches the pane only as a paste
// of termtext.Line, never as typed keys. A new printer that bypasses the
// sanitizer fails here.
func TestPrintersGoThroughTheSanitizer(t *testing.T) {
	t.Parallel()
	var problems []string
	for _, dir := range printers {
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			problems = append(problems, checkPrinter(t, dir, f)...)
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.Log("print agent text through termtext: hubctl's c.out and c.errOut, the stdout and stderr hub's run hands each command, termtext.Line for one line, Tmux.Paste for a pane")
	}
}

// forbidden are functions and values that reach the terminal unwrapped,
// by import path and name ("" name: every exported function of the
// package-level default logger).
var forbidden = map[string][]string{
	"fmt":                   {"Print", "Printf", "Println"},
	"log":                   {"Print", "Printf", "Println", "Fatal", "Fatalf", "Fatalln", "Panic", "Panicf", "Panicln", "Writer", "Default"},
	"log/slog":              {"Debug", "Info", "Warn", "Error", "Log", "LogAttrs", "DebugContext", "InfoContext", "WarnContext", "ErrorContext", "Default"},
	"os":                    {"NewFile"},
	"syscall":               {"Stdout", "Stderr", "Write"},
	"golang.org/x/sys/unix": {"Stdout", "Stderr", "Write"},
}

func checkPrinter(t *testing.T, dir, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]string{} // local name → import path
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name == "." {
			return []string{fmt.Sprintf("%s: dot-import of %s hides what is called", fset.Position(spec.Pos()), p)}
		}
		imports[name] = p
	}
	// pkgSel returns the import path and name of a selector pkg.Name.
	pkgSel := func(e ast.Expr) (string, string) {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", ""
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", ""
		}
		return imports[id.Name], sel.Sel.Name
	}
	var problems []string
	report := func(n ast.Node, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	wrapped := map[ast.Expr]bool{} // os.Stdout / os.Stderr inside termtext.NewWriter(...)
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if p, name := pkgSel(call.Fun); p == "github.com/agenthub/hub/internal/termtext" && name == "NewWriter" {
				for _, a := range call.Args {
					wrapped[a] = true
				}
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			p, name := pkgSel(n)
			if p == "os" && (name == "Stdout" || name == "Stderr") && !wrapped[n] {
				report(n, "os.%s used without termtext.NewWriter around it", name)
			}
			for _, bad := range forbidden[p] {
				if name == bad {
					report(n, "%s.%s writes to the terminal without the sanitizer", p, name)
				}
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "print" || id.Name == "println") {
				report(n, "builtin %s writes to stderr without the sanitizer", id.Name)
			}
			if dir == "internal/deliver" {
				problems = append(problems, checkTmuxCall(fset, n)...)
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && strings.HasPrefix(s, "/dev/tty") {
				report(n, "opens the terminal (%s) directly", s)
			}
		}
		return true
	})
	return problems
}

// checkTmuxCall checks a call that runs tmux: keys are never typed from
// text (send-keys carries only literal key names and the target, never
// -l), a buffer is loaded only from termtext.Line, never set from an
// argument (set-buffer).
func checkTmuxCall(fset *token.FileSet, call *ast.CallExpr) []string {
	verb := ""
	for _, a := range call.Args {
		if lit, ok := a.(*ast.BasicLit); ok {
			if s, _ := strconv.Unquote(lit.Value); s == "send-keys" || s == "load-buffer" || s == "set-buffer" {
				verb = s
			}
		}
	}
	at := fset.Position(call.Pos())
	switch verb {
	case "set-buffer":
		return []string{fmt.Sprintf("%s: tmux set-buffer takes the text as an argument: load it from termtext.Line on stdin (Tmux.Paste)", at)}
	case "send-keys":
		var out []string
		for _, a := range call.Args[1:] { // the first is the context
			switch a := a.(type) {
			case *ast.BasicLit:
				if s, _ := strconv.Unquote(a.Value); s == "-l" {
					out = append(out, fmt.Sprintf("%s: tmux send-keys -l types text as keys: paste it (Tmux.Paste)", at))
				}
			case *ast.SelectorExpr:
				if a.Sel.Name != "Target" {
					out = append(out, fmt.Sprintf("%s: tmux send-keys with %s: only literal key names and the target", at, a.Sel.Name))
				}
			default:
				out = append(out, fmt.Sprintf("%s: tmux send-keys with a computed argument: only literal key names and the target", at))
			}
		}
		return out
	case "load-buffer":
		line := false
		ast.Inspect(call, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Line" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "termtext" {
						line = true
					}
				}
			}
			return true
		})
		if !line {
			return []string{fmt.Sprintf("%s: tmux load-buffer of text that is not termtext.Line(...)", at)}
		}
	}
	return nil
}
