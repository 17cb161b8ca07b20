// Command figures-declare prints the figures of "declare each thing once"
// for the tree it is run in, each with its goal: how many RPCs declare
// their admission in the protos, how many RPC names the admission
// package's code holds, how many operations two services both define,
// how many Go files name an RPC, who wakes parked callers, the direct
// uses of package time outside the hub's clock, the init functions, and
// the registries of parked callers, the largest set of store methods
// one of the hub's services can reach, and the calls one service makes of
// another's unexported methods. Run it from the module's root:
//
//	go run ./scripts/figures-declare [-v]
//
// With -v it lists the store methods each service can reach.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

var verbose = flag.Bool("v", false, "list the store methods visible to each service")

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "figures-declare:", err)
		os.Exit(1)
	}
}

// rpc is one RPC of the protos.
type rpc struct {
	service, name string
	admission     bool // carries option (hub.v1.admission)
}

var (
	serviceRE = regexp.MustCompile(`(?m)^service (\w+) \{`)
	rpcRE     = regexp.MustCompile(`(?m)^\s*rpc (\w+)\(`)
	timeRE    = regexp.MustCompile(`\btime\.(Now|Since|Until|Sleep|After|AfterFunc|NewTimer|NewTicker|Tick)\b`)
	// A wake-up of parked callers: the waiters' Notify (an agent's waits),
	// wakeAnswer (calls parked on inbox items), wakeTask and wakeProject
	// (parked next_task calls).
	notifyRE = regexp.MustCompile(`\.(Notify\w*|(?i:wakeAnswer|wakeTask|wakeProject))\(`)
	initRE   = regexp.MustCompile(`(?m)^func init\(\)`)
	// A registry of parked callers: a struct of internal/hub named for
	// waits, parking or a feed that keeps them in a map.
	registryRE = regexp.MustCompile(`(?ms)^type (\w*(?i:wait|park|feed)\w*) struct \{(.*?)^\}`)
)

func run() error {
	rpcs, err := readRPCs("proto/hub/v1")
	if err != nil {
		return err
	}
	files, err := goFiles(".")
	if err != nil {
		return err
	}
	row := func(figure, value, goal string) { fmt.Printf("%-62s %-28s goal %s\n", figure, value, goal) }

	withOption := 0
	for _, r := range rpcs {
		if r.admission {
			withOption++
		}
	}
	row("RPCs carrying an admission option in the protos", fmt.Sprintf("%d of %d", withOption, len(rpcs)), "all")

	names := map[string]bool{}
	for _, r := range rpcs {
		names[r.service+"_"+r.name] = true
	}
	inAdmission := map[string]bool{}
	fullRE := regexp.MustCompile(`\b(\w+Service)_(\w+)_FullMethodName\b|"/hub\.v1\.(\w+Service)/(\w+)"`)
	for path, src := range files {
		if filepath.Dir(path) != "internal/admission" || strings.HasSuffix(path, "_test.go") {
			continue
		}
		for _, m := range fullRE.FindAllStringSubmatch(src, -1) {
			inAdmission[m[1]+m[3]+"_"+m[2]+m[4]] = true
		}
	}
	row("RPC names in the admission package's code (non-test)", fmt.Sprint(len(inAdmission)), "≤ 2")

	services := map[string][]string{}
	for _, r := range rpcs {
		services[r.name] = append(services[r.name], r.service)
	}
	var twice []string
	for name, s := range services {
		if len(s) > 1 {
			twice = append(twice, name)
		}
	}
	sort.Strings(twice)
	row("operations defined in two services", fmt.Sprint(len(twice)), "0")
	if len(twice) > 0 {
		fmt.Printf("    %s\n", strings.Join(twice, ", "))
	}

	// Files naming an RPC: non-test Go files outside gen/ holding the
	// RPC's name as a word. An operation of two services counts once.
	var counts []int
	most, mostName := 0, ""
	seen := map[string]bool{}
	for _, r := range rpcs {
		if seen[r.name] {
			continue
		}
		seen[r.name] = true
		re := regexp.MustCompile(`\b` + r.name + `\b`)
		n := 0
		for path, src := range files {
			if strings.HasPrefix(path, "gen/") || strings.HasSuffix(path, "_test.go") {
				continue
			}
			if re.MatchString(src) {
				n++
			}
		}
		counts = append(counts, n)
		if n > most {
			most, mostName = n, r.name
		}
	}
	row("non-test Go files outside gen/ naming an RPC, median over RPCs", fmt.Sprintf("%.1f (max %d, %s)", median(counts), most, mostName), "≤ 3.5")

	notifyFiles, notifyCalls := 0, 0
	timeFiles, timeUses := 0, 0
	inits := 0
	var registries []string
	for path, src := range files {
		test := strings.HasSuffix(path, "_test.go")
		if !test && filepath.Dir(path) == "internal/hub" {
			if n := len(notifyRE.FindAllString(src, -1)); n > 0 {
				notifyFiles++
				notifyCalls += n
			}
			for _, m := range registryRE.FindAllStringSubmatch(src, -1) {
				if strings.Contains(m[2], "map[") {
					registries = append(registries, m[1])
				}
			}
		}
		if !test && strings.HasPrefix(path, "internal/") && path != "internal/hub/clock.go" {
			if n := len(timeRE.FindAllString(src, -1)); n > 0 {
				timeFiles++
				timeUses += n
			}
		}
		if !strings.HasPrefix(path, "gen/") {
			inits += len(initRE.FindAllString(src, -1))
		}
	}
	row("hub files waking parked callers after a commit", fmt.Sprintf("%d files, %d calls", notifyFiles, notifyCalls), "≤ 1")
	row("direct `time` uses in internal/ outside the clock", fmt.Sprintf("%d in %d files", timeUses, timeFiles), "≤ 5")
	row("`func init()` outside gen/", fmt.Sprint(inits), "0")
	slices.Sort(registries)
	row("registries of parked callers", fmt.Sprintf("%d (%s)", len(registries), strings.Join(registries, ", ")), "1")

	most, mostName, err = storeMethodsSeen("internal/hub")
	if err != nil {
		return err
	}
	row("largest set of store methods visible to one service", fmt.Sprintf("%d (%s)", most, mostName), "≤ 40")

	calls, err := unexportedCalls("internal/hub")
	if err != nil {
		return err
	}
	row("calls of another service's unexported method", fmt.Sprint(len(calls)), "0")
	if *verbose {
		for _, c := range calls {
			fmt.Printf("    %s\n", c)
		}
	}
	return nil
}

// unexportedCalls returns the places in the hub package in dir where an
// unexported method of one service is called through what another service
// holds of it (a field of that service typed as the other service, or as an
// interface of the package declaring the method), each as "file:line
// caller → Callee.method".
func unexportedCalls(dir string) ([]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		return nil, err
	}
	types := map[string]ast.Expr{}
	var funcs []*ast.FuncDecl
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.GenDecl:
					if d.Tok == token.TYPE {
						for _, spec := range d.Specs {
							ts := spec.(*ast.TypeSpec)
							types[ts.Name.Name] = ts.Type
						}
					}
				case *ast.FuncDecl:
					funcs = append(funcs, d)
				}
			}
		}
	}
	services := map[string]bool{}
	if st, ok := types["Services"].(*ast.StructType); ok {
		for _, f := range st.Fields.List {
			if star, ok := f.Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name != "Core" {
					services[id.Name] = true
				}
			}
		}
	}
	// methods: service → its methods' names.
	methods := map[string]map[string]bool{}
	recvOf := func(fd *ast.FuncDecl) (recv, typ string) {
		if fd.Recv == nil || len(fd.Recv.List) == 0 {
			return "", ""
		}
		r := fd.Recv.List[0]
		if star, ok := r.Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok {
				typ = id.Name
			}
		}
		if len(r.Names) > 0 {
			recv = r.Names[0].Name
		}
		return recv, typ
	}
	for _, fd := range funcs {
		if _, typ := recvOf(fd); services[typ] {
			if methods[typ] == nil {
				methods[typ] = map[string]bool{}
			}
			methods[typ][fd.Name.Name] = true
		}
	}
	// holds returns the services a field's type may stand for, and
	// whether it declares method m: another service itself, or an
	// interface of the package naming m.
	declares := func(t ast.Expr, m string) bool {
		switch t := t.(type) {
		case *ast.StarExpr:
			if id, ok := t.X.(*ast.Ident); ok {
				return services[id.Name] && methods[id.Name][m]
			}
		case *ast.Ident:
			if it, ok := types[t.Name].(*ast.InterfaceType); ok {
				for _, f := range it.Methods.List {
					for _, n := range f.Names {
						if n.Name == m {
							return true
						}
					}
				}
			}
		}
		return false
	}
	// held: a field name of a service → the service and the field's type.
	type field struct {
		service string
		typ     ast.Expr
	}
	held := map[string][]field{}
	for svc := range services {
		if st, ok := types[svc].(*ast.StructType); ok {
			for _, f := range st.Fields.List {
				for _, n := range f.Names {
					held[n.Name] = append(held[n.Name], field{svc, f.Type})
				}
			}
		}
	}
	var out []string
	for _, fd := range funcs {
		if fd.Body == nil {
			continue
		}
		caller := fd.Name.Name
		if _, typ := recvOf(fd); typ != "" {
			caller = typ + "." + caller
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || ast.IsExported(sel.Sel.Name) {
				return true
			}
			inner, ok := sel.X.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			for _, f := range held[inner.Sel.Name] {
				if !declares(f.typ, sel.Sel.Name) {
					continue
				}
				for other := range methods {
					if other != f.service && methods[other][sel.Sel.Name] {
						pos := fset.Position(sel.Pos())
						out = append(out, fmt.Sprintf("%s:%d %s → %s.%s", filepath.ToSlash(pos.Filename), pos.Line, caller, other, sel.Sel.Name))
					}
				}
			}
			return true
		})
	}
	sort.Strings(out)
	return out, nil
}

// readRPCs returns the RPCs of the .proto files in dir, with whether each
// declares its admission.
func readRPCs(dir string) ([]rpc, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.proto"))
	if err != nil {
		return nil, err
	}
	var out []rpc
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		src := string(b)
		for _, loc := range serviceRE.FindAllStringSubmatchIndex(src, -1) {
			service := src[loc[2]:loc[3]]
			body := src[loc[1]:]
			if end := strings.Index(body, "\n}"); end >= 0 {
				body = body[:end]
			}
			rl := rpcRE.FindAllStringSubmatchIndex(body, -1)
			for i, m := range rl {
				decl := body[m[0]:]
				if i+1 < len(rl) {
					decl = body[m[0]:rl[i+1][0]]
				}
				out = append(out, rpc{service: service, name: body[m[2]:m[3]], admission: strings.Contains(decl, "(hub.v1.admission)")})
			}
		}
	}
	return out, nil
}

// goFiles returns the Go files under root by slash path, with their text.
func goFiles(root string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(path)] = string(b)
		return nil
	})
	return out, err
}

func median(v []int) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return float64(v[len(v)/2])
	}
	return float64(v[len(v)/2-1]+v[len(v)/2]) / 2
}

// storeMethodsSeen returns the largest number of store methods (those of
// the hub's Tx) that one service of the hub package in dir can reach
// through what it holds, and that service's name. A service is a field of
// the Services struct. What a type holds is walked through the package's
// own types: an interface counts its methods that are Tx's and whatever
// its methods' signatures name (the Store, whose transactions are the
// whole Tx), a struct whatever its fields hold (the core it embeds,
// another service), a generic type its type arguments too.
func storeMethodsSeen(dir string) (int, string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		return 0, "", err
	}
	types := map[string]ast.Expr{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
					for _, spec := range g.Specs {
						ts := spec.(*ast.TypeSpec)
						types[ts.Name.Name] = ts.Type
					}
				}
			}
		}
	}
	// methods returns the methods an interface type declares, with those
	// of the interfaces it embeds.
	var methods func(name string, seen map[string]bool) []string
	methods = func(name string, seen map[string]bool) []string {
		it, ok := types[name].(*ast.InterfaceType)
		if !ok || seen[name] {
			return nil
		}
		seen[name] = true
		var out []string
		for _, m := range it.Methods.List {
			if len(m.Names) > 0 {
				out = append(out, m.Names[0].Name)
			} else if id, ok := m.Type.(*ast.Ident); ok {
				out = append(out, methods(id.Name, seen)...)
			}
		}
		return out
	}
	tx := map[string]bool{}
	for _, m := range methods("Tx", map[string]bool{}) {
		tx[m] = true
	}
	services, ok := types["Services"].(*ast.StructType)
	if !ok {
		return 0, "", fmt.Errorf("%s: no Services struct", dir)
	}
	most, mostName := 0, ""
	for _, f := range services.Fields.List {
		star, ok := f.Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		name := star.X.(*ast.Ident).Name
		if name == "Core" {
			continue
		}
		seen := map[string]bool{}
		visited := map[string]bool{}
		var walk func(n ast.Node)
		walk = func(n ast.Node) {
			ast.Inspect(n, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Field: // its type, not its names
					walk(n.Type)
					return false
				case *ast.SelectorExpr: // another package's
					return false
				}
				id, ok := n.(*ast.Ident)
				if !ok || visited[id.Name] || types[id.Name] == nil {
					return true
				}
				visited[id.Name] = true
				switch t := types[id.Name].(type) {
				case *ast.InterfaceType:
					for _, m := range methods(id.Name, map[string]bool{}) {
						if tx[m] {
							seen[m] = true
						}
					}
					walk(t)
				default:
					walk(t)
				}
				return true
			})
		}
		walk(types[name])
		if *verbose {
			fmt.Printf("    %-14s %d\n", name, len(seen))
		}
		if len(seen) > most {
			most, mostName = len(seen), name
		}
	}
	return most, mostName, nil
}
