package gateway

import "testing"

func TestAllowHosts(t *testing.T) {
	t.Parallel()
	if AllowHosts(false, nil) != nil {
		t.Error("a hub beyond loopback with no names given must answer every Host")
	}
	for _, tt := range []struct {
		loopback bool
		names    []string
		host     string
		want     bool
	}{
		{true, nil, "localhost", true},
		{true, nil, "app.localhost", true},
		{true, nil, "127.0.0.1", true},
		{true, nil, "127.1.2.3", true},
		{true, nil, "::1", true},
		{true, nil, "evil.example", false},
		{true, nil, "127.0.0.1.nip.io", false},
		{true, nil, "10.0.0.1", false},
		{true, []string{"Hub.Internal"}, "hub.internal", true},
		{true, []string{"*.corp.example"}, "a.corp.example", true},
		{true, []string{"*.corp.example"}, "corp.example", false},
		{false, []string{"hub.example"}, "hub.example", true},
		{false, []string{"hub.example"}, "localhost", false},
	} {
		if got := AllowHosts(tt.loopback, tt.names)(tt.host); got != tt.want {
			t.Errorf("AllowHosts(%v, %q)(%q) = %v, want %v", tt.loopback, tt.names, tt.host, got, tt.want)
		}
	}
}
