package faults

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// The checker reads the history of a run and the store as the run left it
// and counts every broken promise.

// storeView is what the checker reads of the final store.
type storeView struct {
	byNonce    map[string][]int64        // workload posts: body nonce → message IDs
	deliveries map[string]map[int64]bool // agent → IDs of the messages delivered to it
	cronRuns   []cronRun                 // scheduled runs (not manual ones)
	cronMsgs   int                       // cron messages delivered to the cron job's target
}

type cronRun struct {
	Job         string
	ScheduledAt int64
	OK          bool
}

// result is the checker's verdict on one run.
type result struct {
	Seed     uint64
	Calls    int
	Acked    int // posts acknowledged
	Unknown  int // posts without a known outcome
	Stored   int // … of which stored (once)
	Absent   int // … of which not stored
	Refused  int // posts answered with an error that says nothing was done
	Internal int // calls answered Internal

	Lost, Duplicated, Reordered, LeaderOverlaps int

	Skipped        int // messages a cursor moved past without returning them
	NotReached     int // messages delivered above a reader's final cursor
	CursorBack     int // a reply cursor below the cursor sent or the messages returned
	Phantom        int // stored or delivered without having been posted, or stored though refused
	ValidRefused   int // calls with a valid token answered Unauthenticated
	ResOverlaps    int // exclusive reservations held by two agents at once
	RevokedAccept  int // calls with a revoked token accepted past the bound
	NotConverged   int
	TickOverlaps   int
	CronDuplicates int
	Revocations    int

	Faults   []*fault
	Problems []string
}

func (r *result) problem(format string, args ...any) {
	if len(r.Problems) < 60 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// failures is the sum of every count that breaks a promise.
func (r *result) failures() int {
	return r.Lost + r.Duplicated + r.Reordered + r.LeaderOverlaps + r.Skipped + r.NotReached + r.CursorBack +
		r.Phantom + r.ValidRefused + r.ResOverlaps + r.RevokedAccept + r.NotConverged
}

// checkInput is everything a run hands the checker.
type checkInput struct {
	ops         []*op
	store       storeView
	members     []string // the channel's members: every workload agent
	ticks       []tickSample
	tickErrors  map[int][]time.Time // per replica: when its log reported a failed tick
	revocations []*revocation
	revokeBound time.Duration
	faults      []*fault
}

// check runs every check.
func check(in checkInput) *result {
	r := &result{Calls: len(in.ops), Faults: in.faults, Revocations: len(in.revocations)}
	for _, o := range in.ops {
		if o.Code == codes.Internal {
			r.Internal++
		}
		if o.Code == codes.Unauthenticated {
			r.ValidRefused++
			r.problem("%s %s by %s on r%d answered Unauthenticated with a valid token: %s", o.Kind, o.Nonce, o.Agent, o.Replica, o.Err)
		}
	}
	checkPosts(r, in)
	checkStreams(r, in)
	checkLeader(r, in)
	checkReservations(r, in.ops)
	for _, rv := range in.revocations {
		for i, at := range rv.Accepted {
			if at.Sub(rv.Revoked) > in.revokeBound {
				r.RevokedAccept++
				r.problem("r%d accepted %s's revoked token %v after the revocation", i, rv.Agent, at.Sub(rv.Revoked).Round(time.Millisecond))
			}
		}
	}
	for _, f := range in.faults {
		for _, o := range in.ops {
			if o.Kind == "post" && !f.targets(o.Replica) && !o.Start.Before(f.Start) && o.Start.Before(f.Healed) {
				if o.Outcome == ok {
					f.OthersOK++
				} else {
					f.OthersNot++
				}
			}
		}
		if f.ConvergeErr != "" {
			r.NotConverged++
			r.problem("after %s %s: %s", f.Kind, f.Target, f.ConvergeErr)
		}
	}
	return r
}

// expected returns the agents a post should reach.
func expected(o *op, members []string) []string {
	var out []string
	add := func(name string) {
		if name != o.Agent && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, n := range o.To {
		add(n)
	}
	for _, n := range o.Mentions {
		add(n)
	}
	if o.Channel != "" {
		for _, n := range members {
			add(n)
		}
	}
	return out
}

// checkPosts: every acknowledged post is stored once, with its ID, and
// delivered to each recipient; an unknown one is stored once or not at
// all; a refused one is not stored; nothing is stored that was not sent.
func checkPosts(r *result, in checkInput) {
	sent := map[string]bool{}
	for _, o := range in.ops {
		if o.Kind != "post" {
			continue
		}
		sent[o.Nonce] = true
		ids := in.store.byNonce[o.Nonce]
		if len(ids) > 1 {
			r.Duplicated++
			r.problem("post %s (%s) is stored %d times: IDs %v", o.Nonce, o.Outcome, len(ids), ids)
		}
		switch o.Outcome {
		case ok:
			r.Acked++
			switch {
			case len(ids) == 0:
				r.Lost++
				r.problem("acknowledged post %s (ID %d, via %s on r%d) is not in the store", o.Nonce, o.ID, o.Via, o.Replica)
				continue
			case ids[0] != o.ID:
				r.Lost++
				r.problem("acknowledged post %s has ID %d in its reply but %d in the store", o.Nonce, o.ID, ids[0])
			}
		case unknown:
			r.Unknown++
			if len(ids) == 0 {
				r.Absent++
				continue
			}
			r.Stored++
		case failed:
			r.Refused++
			if len(ids) > 0 {
				r.Phantom++
				r.problem("post %s was refused (%s: %s) but is stored as %v", o.Nonce, o.Code, o.Err, ids)
			}
			continue
		}
		for _, name := range expected(o, in.members) {
			if !in.store.deliveries[name][ids[0]] {
				r.Lost++
				r.problem("post %s (ID %d, %s) was not delivered to %s", o.Nonce, ids[0], o.Outcome, name)
			}
		}
	}
	for nonce, ids := range in.store.byNonce {
		if !sent[nonce] {
			r.Phantom++
			r.problem("the store holds %v with body %s, which no client sent", ids, nonce)
		}
	}
}

// checkStreams: each reader's waits, in the order it made them, return
// every message delivered to it exactly once, in ID order (within a
// reply, high priority first), never at or below the cursor sent, and
// the cursor never goes back.
func checkStreams(r *result, in checkInput) {
	byAgent := map[string][]*op{}
	for _, o := range in.ops {
		if o.Kind == "wait" && o.Outcome == ok {
			byAgent[o.Agent] = append(byAgent[o.Agent], o)
		}
	}
	for _, name := range in.members {
		waits := byAgent[name]
		sort.SliceStable(waits, func(i, j int) bool { return waits[i].Start.Before(waits[j].Start) })
		seen := map[int64]bool{}
		var top, cursor int64
		for _, o := range waits {
			if o.After != cursor {
				r.CursorBack++
				r.problem("%s waited after %d, but its last reply's cursor was %d", name, o.After, cursor)
			}
			if !inReplyOrder(o) {
				r.Reordered++
				r.problem("%s: reply on r%d after %d out of order: %v (high %v)", name, o.Replica, o.After, o.IDs, o.Highs)
			}
			prev := top // the newest message of the earlier replies
			for _, id := range o.IDs {
				switch {
				case seen[id]:
					r.Duplicated++
					r.problem("%s received message %d twice (again on r%d after %d)", name, id, o.Replica, o.After)
				case id <= o.After:
					r.Reordered++
					r.problem("%s: wait on r%d after %d returned %d", name, o.Replica, o.After, id)
				case id < prev:
					r.Reordered++
					r.problem("%s received %d in a reply after one that had %d", name, id, prev)
				}
				seen[id] = true
				top = max(top, id)
			}
			if o.Cursor > 0 && (o.Cursor < o.After || o.Cursor < top) {
				r.CursorBack++
				r.problem("%s: wait on r%d after %d answered cursor %d (newest received %d)", name, o.Replica, o.After, o.Cursor, top)
			}
			if o.Cursor > 0 {
				cursor = o.Cursor
			}
		}
		for id := range in.store.deliveries[name] {
			switch {
			case seen[id]:
			case id <= cursor:
				r.Skipped++
				r.problem("%s's cursor moved past message %d (now %d) without returning it", name, id, cursor)
			default:
				r.NotReached++
				r.problem("%s never received message %d (its cursor stopped at %d)", name, id, cursor)
			}
		}
		for id := range seen {
			if !in.store.deliveries[name][id] {
				r.Phantom++
				r.problem("%s received message %d, which the store does not deliver to it", name, id)
			}
		}
	}
}

// inReplyOrder reports whether a reply lists its high-priority messages
// first, and each group in ID order.
func inReplyOrder(o *op) bool {
	for k := 1; k < len(o.IDs); k++ {
		hiPrev, hi := k-1 < len(o.Highs) && o.Highs[k-1], k < len(o.Highs) && o.Highs[k]
		switch {
		case hi && !hiPrev:
			return false
		case hi == hiPrev && o.IDs[k] <= o.IDs[k-1]:
			return false
		}
	}
	return true
}

// checkLeader: a cron slot runs at most once and posts at most once, and
// no two replicas ran orchestrator ticks at the same time.
func checkLeader(r *result, in checkInput) {
	slots := map[string]int{}
	okRuns := 0
	for _, c := range in.store.cronRuns {
		key := fmt.Sprintf("%s@%d", c.Job, c.ScheduledAt)
		if slots[key]++; slots[key] == 2 {
			r.CronDuplicates++
			r.problem("cron slot %s ran more than once", key)
		}
		if c.OK {
			okRuns++
		}
	}
	if in.store.cronMsgs > okRuns {
		r.CronDuplicates += in.store.cronMsgs - okRuns
		r.problem("%d cron messages for %d successful runs", in.store.cronMsgs, okRuns)
	}
	type tick struct {
		replica    int
		start, end time.Time
	}
	// A tick counts if it succeeded: a failed one (its writes refused, as a
	// stale leader's are) logged its error as it ended.
	failedAt := func(replica int, end time.Time) bool {
		for _, e := range in.tickErrors[replica] {
			if !e.Before(end.Add(-50*time.Millisecond)) && e.Before(end.Add(3*time.Second)) {
				return true
			}
		}
		return false
	}
	var ticks []tick
	seen := map[string]bool{}
	for _, s := range in.ticks {
		key := fmt.Sprintf("%d@%d", s.Replica, s.At.UnixNano())
		end := s.At.Add(time.Duration(s.Micros) * time.Microsecond)
		if seen[key] || failedAt(s.Replica, end) {
			continue
		}
		seen[key] = true
		ticks = append(ticks, tick{s.Replica, s.At, end})
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].start.Before(ticks[j].start) })
	for i := range ticks {
		for j := i + 1; j < len(ticks) && !ticks[j].start.After(ticks[i].end); j++ {
			if ticks[j].replica != ticks[i].replica {
				r.TickOverlaps++
				r.problem("orchestrator ticks overlap: r%d %s+%v and r%d %s+%v", ticks[i].replica, ticks[i].start.Format("15:04:05.000"),
					ticks[i].end.Sub(ticks[i].start), ticks[j].replica, ticks[j].start.Format("15:04:05.000"), ticks[j].end.Sub(ticks[j].start))
			}
		}
	}
	r.LeaderOverlaps = r.CronDuplicates + r.TickOverlaps
}

// checkReservations: two agents never both held an exclusive reservation
// of one path at the same moment, as each of them knew it: from the reply
// that granted it to the start of the call that released it, or its
// expiry.
func checkReservations(r *result, ops []*op) {
	releaseStart := map[string]time.Time{}
	for _, o := range ops {
		if o.Kind == "release" {
			releaseStart[o.ResID] = o.Start
		}
	}
	type hold struct {
		agent, pattern string
		from, to       time.Time
	}
	var holds []hold
	for _, o := range ops {
		if o.Kind != "reserve" || !o.Granted {
			continue
		}
		to := o.Expires
		if rel, ok := releaseStart[o.ResID]; ok && rel.Before(to) {
			to = rel
		}
		holds = append(holds, hold{o.Agent, o.Pattern, o.End, to})
	}
	for i := range holds {
		for j := i + 1; j < len(holds); j++ {
			a, b := holds[i], holds[j]
			if a.pattern == b.pattern && a.agent != b.agent && a.from.Before(b.to) && b.from.Before(a.to) {
				r.ResOverlaps++
				r.problem("%s and %s both held %s exclusively: %s–%s and %s–%s", a.agent, b.agent, a.pattern,
					a.from.Format("15:04:05.000"), a.to.Format("15:04:05.000"), b.from.Format("15:04:05.000"), b.to.Format("15:04:05.000"))
			}
		}
	}
}

// summary is the one line a run ends with.
func summary(runs int, results []*result) string {
	var faults, acked, unknown, lost, dup, reord, overlaps int
	var conv []time.Duration
	for _, r := range results {
		faults += len(r.Faults)
		acked += r.Acked
		unknown += r.Unknown
		lost += r.Lost
		dup += r.Duplicated
		reord += r.Reordered
		overlaps += r.LeaderOverlaps
		for _, f := range r.Faults {
			if f.ConvergeErr == "" {
				conv = append(conv, f.Converge)
			}
		}
	}
	return fmt.Sprintf("faults: runs=%d faults=%d acked=%d unknown=%d lost=%d duplicated=%d reordered=%d leader_overlaps=%d converge_p99_ms=%d",
		runs, faults, acked, unknown, lost, dup, reord, overlaps, percentile(conv, 99).Milliseconds())
}

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := (p*len(s) + 99) / 100
	return s[max(k, 1)-1]
}

// detail is the line with every other count of a run.
func (r *result) detail() string {
	return strings.Join([]string{
		fmt.Sprintf("seed=%d calls=%d acked=%d unknown=%d (stored %d, absent %d) refused=%d internal=%d", r.Seed, r.Calls, r.Acked, r.Unknown, r.Stored, r.Absent, r.Refused, r.Internal),
		fmt.Sprintf("lost=%d duplicated=%d reordered=%d skipped=%d not_reached=%d cursor_back=%d phantom=%d", r.Lost, r.Duplicated, r.Reordered, r.Skipped, r.NotReached, r.CursorBack, r.Phantom),
		fmt.Sprintf("leader_overlaps=%d (cron %d, ticks %d) valid_token_refused=%d reservation_overlaps=%d revocations=%d revoked_accepted=%d not_converged=%d",
			r.LeaderOverlaps, r.CronDuplicates, r.TickOverlaps, r.ValidRefused, r.ResOverlaps, r.Revocations, r.RevokedAccept, r.NotConverged),
	}, " ")
}
