package hub

import (
	"slices"
	"strings"
	"testing"
)

func TestParseActivityType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want ActivityType
	}{
		{"thinking", ActivityThinking},
		{" Observation ", ActivityObservation},
		{"CREATION", ActivityCreation},
		{"reflection", ActivityReflection},
		{"other", ActivityOther},
		{"思考", ActivityThinking},
		{"観測", ActivityObservation},
		{"創造", ActivityCreation},
		{"内省", ActivityReflection},
		{" 内省 ", ActivityReflection},
	}
	for _, tt := range tests {
		got, err := ParseActivityType(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseActivityType(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "  ", "dreaming", "reflect", "内"} {
		_, err := ParseActivityType(bad)
		if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), "thinking, observation, creation, reflection, other") {
			t.Errorf("ParseActivityType(%q) error = %v, want EINVALID listing the types", bad, err)
		}
	}
}

func TestActivityTypeLabel(t *testing.T) {
	t.Parallel()
	if got, want := ActivityReflection.Label(LocaleJA), "内省"; got != want {
		t.Errorf("Label(ja) = %q, want %q", got, want)
	}
	if got, want := ActivityCreation.Label(LocaleEN), "creation"; got != want {
		t.Errorf("Label(en) = %q, want %q", got, want)
	}
}

func TestNormalizeActivityLog(t *testing.T) {
	t.Parallel()
	valid := func() ActivityLog {
		return ActivityLog{Type: "内省", Title: "  Looked back  ", Content: []string{"line 1", "line 2", "", " "}, Tags: []string{" a ", "b", "a"}, UrgentReason: "  "}
	}
	l := valid()
	if err := NormalizeActivityLog(&l); err != nil {
		t.Fatalf("NormalizeActivityLog(valid) = %v", err)
	}
	if l.Type != ActivityReflection || l.Title != "Looked back" || len(l.Content) != 2 || !slices.Equal(l.Tags, []string{"a", "b"}) || l.UrgentReason != "" {
		t.Errorf("normalized = %+v", l)
	}

	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		edit func(*ActivityLog)
		want string // substring of the message
	}{
		{"bad type", func(l *ActivityLog) { l.Type = "nap" }, "not an activity type"},
		{"no type", func(l *ActivityLog) { l.Type = "" }, "type is required"},
		{"no title", func(l *ActivityLog) { l.Title = " " }, "title is required"},
		{"title too long", func(l *ActivityLog) { l.Title = long(MaxTitleChars + 1) }, "at most 200"},
		{"title two lines", func(l *ActivityLog) { l.Title = "a\nb" }, "single line"},
		{"too many lines", func(l *ActivityLog) { l.Content = make([]string, MaxContentLines+1); l.Content[MaxContentLines] = "x" }, "at most 200 are allowed"},
		{"line too long", func(l *ActivityLog) { l.Content = []string{long(MaxContentLineChars + 1)} }, "content line 1"},
		{"content too big", func(l *ActivityLog) {
			l.Content = nil
			for range 20 {
				l.Content = append(l.Content, long(MaxContentLineChars))
			}
		}, "64 KiB"},
		{"bad utf8", func(l *ActivityLog) { l.Content = []string{"\xff"} }, "UTF-8"},
		{"too many tags", func(l *ActivityLog) { l.Tags = make([]string, MaxTags+1) }, "at most 20"},
		{"empty tag", func(l *ActivityLog) { l.Tags = []string{"a", ""} }, "tag 2 is empty"},
		{"long tag", func(l *ActivityLog) { l.Tags = []string{long(MaxTagChars + 1)} }, "too long"},
		{"spaced tag", func(l *ActivityLog) { l.Tags = []string{"two words"} }, "single word"},
		{"long urgent", func(l *ActivityLog) { l.UrgentReason = long(MaxUrgentReasonChars + 1) }, "urgent_reason"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := valid()
			tt.edit(&l)
			err := NormalizeActivityLog(&l)
			if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tt.want) {
				t.Errorf("NormalizeActivityLog = %v, want EINVALID containing %q", err, tt.want)
			}
		})
	}
}

func TestNormalizeCheckpoint(t *testing.T) {
	t.Parallel()
	c := Checkpoint{CurrentActivity: "  replaceツールのエラー原因の調査中 "}
	if err := NormalizeCheckpoint(&c); err != nil || c.CurrentActivity != "replaceツールのエラー原因の調査中" {
		t.Errorf("NormalizeCheckpoint = %v, %q", err, c.CurrentActivity)
	}
	ok := Checkpoint{CurrentActivity: strings.Repeat("x", MaxCurrentActivityBytes)}
	if err := NormalizeCheckpoint(&ok); err != nil {
		t.Errorf("NormalizeCheckpoint(1 KiB) = %v, want nil", err)
	}
	for _, bad := range []struct{ in, want string }{
		{"", "required"},
		{"   ", "required"},
		{strings.Repeat("x", MaxCurrentActivityBytes+1), "1 KiB"},
		{strings.Repeat("あ", 342), "1 KiB"},
		{"a\nb", "single line"},
		{"\xfe", "UTF-8"},
	} {
		c := Checkpoint{CurrentActivity: bad.in}
		err := NormalizeCheckpoint(&c)
		if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), bad.want) {
			t.Errorf("NormalizeCheckpoint(%.20q) = %v, want EINVALID containing %q", bad.in, err, bad.want)
		}
	}
}
