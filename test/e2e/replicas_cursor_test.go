package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// Two real hub processes on one PostgreSQL database, posters writing
// through both at once, and readers that follow their cursor with
// WaitForMessages(after_id) on both replicas in turn: every reader gets
// every acknowledged message exactly once, in ID order. A cursor that moved
// past an ID still in flight on the other replica would lose that message.
func TestTwoReplicasCursorsNeverSkip(t *testing.T) {
	const posters, readers, perPoster = 4, 2, 40
	dbURL := pgtest.Database(t)
	bin := buildBinaries(t)
	flags := []string{"--database-url", dbURL, "--poll-interval", "1h"}
	hubs := []*hubProc{startHub(t, bin, flags...), startHub(t, bin, flags...)}

	token := map[string]string{}
	var readerNames []string
	for i := range posters + readers {
		name := fmt.Sprintf("poster-%d", i)
		if i >= posters {
			name = fmt.Sprintf("reader-%d", i-posters)
			readerNames = append(readerNames, name)
		}
		r := hubs[0].hubctl(t, nil, "agent", "add", name, "-o", "json").must(t)
		var resp struct{ Token string }
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || resp.Token == "" {
			t.Fatalf("agent add %s: %v\n%s", name, err, r.stdout)
		}
		token[name] = resp.Token
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Readers start before the posts and stop once they hold every
	// acknowledged message (or at the deadline, which fails the test).
	got := make([][]int64, readers)
	readerErr := make([]error, readers)
	var rwg sync.WaitGroup
	for ri, name := range readerNames {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			cursor := "0"
			for call := 0; len(got[ri]) < posters*perPoster; call++ {
				h := hubs[call%2]
				code, body, err := h.do(ctx, "POST", "/v1/messages:wait", token[name],
					map[string]any{"after_id": cursor, "timeout_seconds": 2, "limit": 500})
				if err != nil || code != 200 {
					readerErr[ri] = fmt.Errorf("wait on replica %d after %s: %d %v %v", call%2, cursor, code, body, err)
					return
				}
				msgs, _ := body["messages"].([]any)
				for _, m := range msgs {
					id, err := strconv.ParseInt(m.(map[string]any)["id"].(string), 10, 64)
					if err != nil {
						readerErr[ri] = fmt.Errorf("message id: %v", err)
						return
					}
					got[ri] = append(got[ri], id)
				}
				if c, _ := body["cursor"].(string); c != "" {
					cursor = c
				}
			}
		}()
	}

	// Posters: each writes through both replicas in turn, all at once.
	acked := make(chan int64, posters*perPoster)
	var pwg sync.WaitGroup
	for p := range posters {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			name := fmt.Sprintf("poster-%d", p)
			for i := range perPoster {
				h := hubs[(p+i)%2]
				code, body, err := h.do(ctx, "POST", "/v1/messages", token[name],
					map[string]any{"to": readerNames, "body": fmt.Sprintf("%s #%d", name, i)})
				if err != nil || code != 200 {
					t.Errorf("%s post %d on replica %d: %d %v %v", name, i, (p+i)%2, code, body, err)
					return
				}
				id, err := strconv.ParseInt(body["message"].(map[string]any)["id"].(string), 10, 64)
				if err != nil {
					t.Errorf("post id: %v", err)
					return
				}
				acked <- id
			}
		}()
	}
	pwg.Wait()
	close(acked)
	want := map[int64]bool{}
	for id := range acked {
		want[id] = true
	}
	if len(want) != posters*perPoster {
		t.Fatalf("%d distinct acknowledged posts, want %d", len(want), posters*perPoster)
	}
	rwg.Wait()

	for ri, ids := range got {
		if readerErr[ri] != nil {
			t.Errorf("%s: %v", readerNames[ri], readerErr[ri])
			continue
		}
		seen := map[int64]bool{}
		for i, id := range ids {
			if i > 0 && id <= ids[i-1] {
				t.Errorf("%s: message %d after %d: not in ID order (or repeated)", readerNames[ri], id, ids[i-1])
			}
			if !want[id] {
				t.Errorf("%s: got message %d that no poster was acknowledged for", readerNames[ri], id)
			}
			seen[id] = true
		}
		for id := range want {
			if !seen[id] {
				t.Errorf("%s: never received acknowledged message %d", readerNames[ri], id)
			}
		}
	}
}
