package hub

import "testing"

func TestDecideStream(t *testing.T) {
	for _, tt := range []struct {
		queued      int
		woken, more bool
		want        streamAction
	}{
		{0, false, false, streamPark},
		{StreamQueue, false, false, streamPark}, // a full queue and nothing new: the reader catches up
		{0, true, false, streamLook},
		{0, false, true, streamLook},
		{StreamQueue - 1, true, false, streamLook},
		{StreamQueue - 1, false, true, streamLook},
		{StreamQueue, true, false, streamResync},
		{StreamQueue, false, true, streamResync},
	} {
		if got := decideStream(tt.queued, tt.woken, tt.more); got != tt.want {
			t.Errorf("decideStream(%d, %v, %v) = %v, want %v", tt.queued, tt.woken, tt.more, got, tt.want)
		}
	}
}
