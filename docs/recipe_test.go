package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRecipeNamesTheFilesOfAnRPC keeps CORE.md's recipe for an RPC true:
// the files it lists as naming its sample RPC are those of the repository
// (Go files other than tests, protos and the gateway's routes, outside
// gen/) that name it, no more and no fewer.
func TestRecipeNamesTheFilesOfAnRPC(t *testing.T) {
	core, err := os.ReadFile("CORE.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(core)), " ")
	m := regexp.MustCompile("The files naming the RPC `(\\w+)` outside `gen/` and the tests, for example, are (.*?) \\(`TestRecipeNamesTheFilesOfAnRPC`").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("CORE.md has no sentence \"The files naming the RPC `Name` outside `gen/` and the tests, for example, are … (`TestRecipeNamesTheFilesOfAnRPC` …\"")
	}
	rpc := m[1]
	var listed []string
	for _, span := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[2], -1) {
		listed = append(listed, span[1])
	}
	word := regexp.MustCompile(`\b` + rpc + `\b`)
	var naming []string
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, ".."+string(filepath.Separator)))
		if d.IsDir() {
			if rel == "gen" || strings.HasPrefix(d.Name(), ".") && path != ".." || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(rel)
		if (ext != ".go" && ext != ".proto" && ext != ".yaml") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if word.Match(src) {
			naming = append(naming, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	slices.Sort(naming)
	if !slices.Equal(listed, naming) {
		t.Errorf("CORE.md lists the files naming %s as %v; the repository's are %v", rpc, listed, naming)
	}
}
