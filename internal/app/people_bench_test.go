package app_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// BenchmarkPersonPostLoop: a person posts 60 KB messages over REST on
// loopback, as fast as it can for 5 s; it reports how many the hub
// accepted and how many it refused (429). Run it with -benchtime 1x.
func BenchmarkPersonPostLoop(b *testing.B) {
	for range b.N {
		h := startCoreHub(b, "", nil)
		h.newAgent(b, "bob")
		code, raw, v := h.do(b, "POST", "/v1/admin/people", h.token, `{"name":"pat"}`)
		tok, _ := v["token"].(string)
		if code != 200 || tok == "" {
			b.Fatalf("create pat: %d %s", code, raw)
		}
		body, _ := json.Marshal(map[string]any{"to": []string{"bob"}, "body": strings.Repeat("x", 60<<10)})
		accepted, refused := 0, 0
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
			switch code, raw, _ := h.do(b, "POST", "/v1/admin/messages", tok, string(body)); code {
			case 200:
				accepted++
			case 429:
				refused++
			default:
				b.Fatalf("post: %d %s", code, raw)
			}
		}
		b.ReportMetric(float64(accepted), "accepted/5s")
		b.ReportMetric(float64(refused), "refused/5s")
	}
}
