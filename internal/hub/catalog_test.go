package hub

import (
	"regexp"
	"slices"
	"testing"
)

func TestParseLocale(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Locale
		ok   bool
	}{
		{"", LocaleEN, true},
		{"en", LocaleEN, true},
		{" EN ", LocaleEN, true},
		{"ja", LocaleJA, true},
		{"ja-JP", LocaleJA, true},
		{"ja_JP", LocaleJA, true},
		{"en-US", LocaleEN, true},
		{"fr", "", false},
		{"-ja", "", false},
	}
	for _, tt := range tests {
		got, err := ParseLocale(tt.in)
		if tt.ok != (err == nil) || got != tt.want {
			t.Errorf("ParseLocale(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && ErrorCode(err) != EINVALID {
			t.Errorf("ParseLocale(%q) code = %q, want %q", tt.in, ErrorCode(err), EINVALID)
		}
	}
}

var verbRE = regexp.MustCompile(`%[-+# 0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)

// verbs returns the fmt verbs of format, with %q counted as %s (a quoted
// string in English may be in 「」 in Japanese).
func verbs(format string) []string {
	vs := verbRE.FindAllString(format, -1)
	for i, v := range vs {
		if v == "%q" {
			vs[i] = "%s"
		}
	}
	return vs
}

// TestCatalogComplete checks that every locale has every key of the default
// locale with the same fmt verbs in the same order, so a text never renders
// with %!(EXTRA) or %!d(MISSING).
func TestCatalogComplete(t *testing.T) {
	t.Parallel()
	base := catalog[DefaultLocale]
	for _, loc := range Locales {
		texts, ok := catalog[loc]
		if !ok {
			t.Fatalf("catalog has no locale %q", loc)
		}
		if len(texts) != len(base) {
			t.Errorf("locale %q has %d texts, want %d", loc, len(texts), len(base))
		}
		for key, format := range base {
			got, ok := texts[key]
			if !ok {
				t.Errorf("locale %q lacks key %q", loc, key)
				continue
			}
			if got == "" {
				t.Errorf("locale %q key %q is empty", loc, key)
			}
			if a, b := verbs(format), verbs(got); !slices.Equal(a, b) {
				t.Errorf("locale %q key %q verbs = %v, want %v (as in %q)", loc, key, b, a, DefaultLocale)
			}
		}
	}
}

func TestLocaleText(t *testing.T) {
	t.Parallel()
	if got, want := LocaleJA.Text(MsgElapsedInfo, 7), "経過時間通知: ハートビート開始から7分が経過しています。"; got != want {
		t.Errorf("ja info = %q, want %q", got, want)
	}
	if got, want := Locale("xx").Text(MsgElapsedRelaxed), LocaleEN.Text(MsgElapsedRelaxed); got != want {
		t.Errorf("unknown locale = %q, want the default %q", got, want)
	}
	if got, want := LocaleEN.Text("no.such.key"), "no.such.key"; got != want {
		t.Errorf("missing key = %q, want %q", got, want)
	}
	if got, want := Locale("").Or(LocaleJA), LocaleJA; got != want {
		t.Errorf(`Locale("").Or(ja) = %q, want %q`, got, want)
	}
	if got, want := LocaleEN.Or(LocaleJA), LocaleEN; got != want {
		t.Errorf("en.Or(ja) = %q, want %q", got, want)
	}
}
