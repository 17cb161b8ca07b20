// Command figures-store prints the static figures of the two stores, the
// measures by which persistence is written once: the methods each store
// declares, the code lines of both, the SQL statement literals that live in
// shared packages, the duplicate runs between the stores (when the
// duplicates command is on PATH) and whether the migrations are one list.
//
// Run it from the module root: go run ./scripts/figures-store
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

const storeDir = "internal/store"

// stores are the two dialects' packages, below storeDir.
var stores = []string{"sqlite", "postgres"}

// statement matches the start of a SQL statement.
var statement = regexp.MustCompile(`(?is)^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER|PRAGMA|LISTEN|UNLISTEN|NOTIFY|VACUUM|ANALYZE)\s`)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "figures-store:", err)
		os.Exit(1)
	}
}

func run() error {
	if _, err := os.Stat(storeDir); err != nil {
		return fmt.Errorf("run me from the module root: %w", err)
	}
	fmt.Println("| figure | value |")
	fmt.Println("|---|---|")
	lines := 0
	for _, s := range stores {
		files, err := sources(filepath.Join(storeDir, s))
		if err != nil {
			return err
		}
		methods := 0
		for _, f := range files {
			fs := token.NewFileSet()
			af, err := parser.ParseFile(fs, f, nil, 0)
			if err != nil {
				return err
			}
			for _, d := range af.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
					methods++
				}
			}
			if filepath.Base(f) != "migrate.go" {
				n, err := codeLines(f)
				if err != nil {
					return err
				}
				lines += n
			}
		}
		fmt.Printf("| methods declared in %s/%s (non-test) | %d |\n", storeDir, s, methods)
	}
	fmt.Printf("| code lines (not blank, not comments) of both stores, non-test, non-migration | %d |\n", lines)

	shared, perStore, err := statements()
	if err != nil {
		return err
	}
	fmt.Printf("| SQL statement literals living in shared packages | %d of %d (%.0f %%) |\n",
		shared, shared+perStore, 100*float64(shared)/float64(max(1, shared+perStore)))
	fmt.Printf("| duplicate pairs of six or more lines between sqlite/ and postgres/ (non-test Go) | %s |\n", duplicates())
	var own []string
	for _, s := range stores {
		if _, err := os.Stat(filepath.Join(storeDir, s, "migrations")); err == nil {
			own = append(own, s)
		}
	}
	one := "yes"
	if len(own) > 0 {
		one = "no (" + strings.Join(own, " and ") + " have lists of their own)"
	}
	fmt.Printf("| migrations: one numbered list for both dialects | %s |\n", one)
	return nil
}

// sources lists the non-test Go files of dir.
func sources(dir string) ([]string, error) {
	all, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range all {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	return out, nil
}

// codeLines counts the lines of f that are neither blank nor comments.
func codeLines(f string) (int, error) {
	file, err := os.Open(f)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	n := 0
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "//") {
			n++
		}
	}
	return n, sc.Err()
}

// statements counts the string literals of the store's non-test Go files
// that start a SQL statement: those of the two stores' packages, and those
// of every other package below storeDir (shared; storetest excepted, it
// is the contract's tests).
func statements() (shared, perStore int, err error) {
	err = filepath.WalkDir(storeDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(storeDir, path)
		top := strings.Split(filepath.ToSlash(rel), "/")[0]
		if top == "storetest" {
			return nil
		}
		fs := token.NewFileSet()
		af, err := parser.ParseFile(fs, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(af, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !statement.MatchString(s) {
				return true
			}
			if top == "sqlite" || top == "postgres" {
				perStore++
			} else {
				shared++
			}
			return true
		})
		return nil
	})
	return shared, perStore, err
}

// duplicates counts the pairs the duplicates command lists between a
// non-test Go file of one store and one of the other.
func duplicates() string {
	out, err := exec.Command("duplicates", "--repo", storeDir, "--most", "200", "--seconds", "120").Output()
	if err != nil {
		return "not measured (no duplicates command: " + err.Error() + ")"
	}
	pair := regexp.MustCompile(`^D\d+ (\S+?):\S+ ~ (\S+?):\S+`)
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		m := pair.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		a, b := m[1], m[2]
		if !strings.HasSuffix(a, ".go") || !strings.HasSuffix(b, ".go") ||
			strings.HasSuffix(a, "_test.go") || strings.HasSuffix(b, "_test.go") {
			continue
		}
		da, db := strings.Split(a, "/")[0], strings.Split(b, "/")[0]
		if da != db && isStore(da) && isStore(db) {
			n++
		}
	}
	return strconv.Itoa(n)
}

func isStore(dir string) bool {
	for _, s := range stores {
		if dir == s {
			return true
		}
	}
	return false
}
