package migration

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	good := fstest.MapFS{
		"m/0002_more.sql": {Data: []byte("B")},
		"m/0001_core.sql": {Data: []byte("A")},
		"m/0010_late.sql": {Data: []byte("C")},
	}
	ms, err := Load(good, "m")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Name+"="+m.SQL)
	}
	if want := "0001_core.sql=A 0002_more.sql=B 0010_late.sql=C"; strings.Join(got, " ") != want || ms[2].Version != 10 {
		t.Errorf("Load = %v, want %s (version 10 last)", got, want)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"unnumbered":  {"m/core.sql": {}},
		"not sql":     {"m/0001_core.txt": {}},
		"same number": {"m/0001_a.sql": {}, "m/01_b.sql": {}},
	} {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: Load succeeded, want an error", name)
		}
	}
}
