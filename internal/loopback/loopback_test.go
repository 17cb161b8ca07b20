package loopback

import "testing"

func TestAddrAndHost(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:7700": true, "127.9.9.9:1": true, "[::1]:7700": true, "localhost:7701": true,
		"app.localhost:80": true, "[::ffff:127.0.0.1]:1": true,
		"0.0.0.0:7700": false, "10.0.0.1:7700": false, ":7700": false, "example.com:443": false,
		"127.0.0.1": false, // no port: not an address
	} {
		if got := Addr(addr); got != want {
			t.Errorf("Addr(%q) = %v, want %v", addr, got, want)
		}
	}
	for host, want := range map[string]bool{"LOCALHOST": true, "localhost.": true, "::1": true, "[::1]": true, "127.0.0.1.nip.io": false, "evil.example": false} {
		if got := Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}
