package hub

import (
	"strings"
	"testing"
	"time"
)

func TestFormatHeartbeatID(t *testing.T) {
	t.Parallel()
	tokyo := time.FixedZone("JST", 9*3600)
	at := time.Date(2025, 1, 19, 5, 30, 0, 0, time.UTC)
	if got, want := FormatHeartbeatID(at, tokyo), "20250119143000"; got != want {
		t.Errorf("FormatHeartbeatID(JST) = %q, want %q", got, want)
	}
	if got, want := FormatHeartbeatID(at, nil), "20250119053000"; got != want {
		t.Errorf("FormatHeartbeatID(nil) = %q, want %q", got, want)
	}
}

func TestParseHeartbeatID(t *testing.T) {
	t.Parallel()
	tokyo := time.FixedZone("JST", 9*3600)
	now := time.Date(2025, 1, 19, 14, 44, 30, 500_000_000, tokyo)
	tests := []struct {
		name    string
		id      string
		want    time.Time
		wantErr string // substring of the message; "" means success
	}{
		{"past", "20250119143000", time.Date(2025, 1, 19, 14, 30, 0, 0, tokyo), ""},
		{"same second", "20250119144430", time.Date(2025, 1, 19, 14, 44, 30, 0, tokyo), ""},
		{"empty", "", time.Time{}, "YYYYMMDDHHMMSS"},
		{"short", "2025011914300", time.Time{}, "YYYYMMDDHHMMSS"},
		{"long", "202501191430000", time.Time{}, "YYYYMMDDHHMMSS"},
		{"letters", "2025011914300a", time.Time{}, "YYYYMMDDHHMMSS"},
		{"dashes", "2025-01-19T143", time.Time{}, "YYYYMMDDHHMMSS"},
		{"month 13", "20251319143000", time.Time{}, "YYYYMMDDHHMMSS"},
		{"hour 25", "20250119253000", time.Time{}, "YYYYMMDDHHMMSS"},
		{"one second ahead", "20250119144431", time.Time{}, "is 1s in the future"},
		{"15m30s ahead", "20250119150000", time.Time{}, "is 15m30s in the future"},
		{"hours ahead", "20250119160000", time.Time{}, "is 1h15m30s in the future"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseHeartbeatID(tt.id, tokyo, now)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseHeartbeatID(%q) error = %v", tt.id, err)
				}
				if !got.Equal(tt.want) {
					t.Errorf("ParseHeartbeatID(%q) = %v, want %v", tt.id, got, tt.want)
				}
				return
			}
			if got, want := ErrorCode(err), EINVALID; got != want {
				t.Fatalf("ParseHeartbeatID(%q) code = %q, want %q (err %v)", tt.id, got, want, err)
			}
			if msg := ErrorMessage(err); !strings.Contains(msg, tt.wantErr) {
				t.Errorf("ParseHeartbeatID(%q) message = %q, want it to contain %q", tt.id, msg, tt.wantErr)
			}
		})
	}
}

func TestHeartbeatIDRoundTrip(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("X", -5*3600)
	at := time.Date(2024, 2, 29, 23, 59, 59, 0, loc)
	id := FormatHeartbeatID(at, loc)
	got, err := ParseHeartbeatID(id, loc, at.Add(time.Hour))
	if err != nil || !got.Equal(at) {
		t.Errorf("round trip of %s = %v, %v; want %v", id, got, err, at)
	}
}
