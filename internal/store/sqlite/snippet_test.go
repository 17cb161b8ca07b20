package sqlite

import (
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

func TestSnippet(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	long := strings.Repeat("filler words here ", 40) + "the Deployment failed, deploying again" + strings.Repeat(" and more words", 40)
	for _, tt := range []struct {
		body, query, want string
	}{
		{"Deployed it; deploys work.", "deploy", "**Deployed** it; **deploys** work."},
		{"nothing to see", "deploy", "nothing to see"},
		// Porter stems "Deployment" to "deploy" but "deploy" to "deploi".
		{long, "deploy failed", "…here filler words here the Deployment **failed**, **deploying** again" + strings.Repeat(" and more words", 5) + "…"},
		// A match past the part of the body scanned: its beginning.
		{"x" + strings.Repeat(" filler", snippetScan/7) + " deploy", "deploy", "x" + strings.Repeat(" filler", snippetWords-1) + "…"},
	} {
		terms, err := hub.ParseSearchTerms(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		mustView(t, db, func(tx hub.Tx) error {
			stems, err := tx.(*Tx).queryStems(terms)
			if err != nil {
				return err
			}
			got, err := tx.(*Tx).snippet(tt.body, stems)
			if got != tt.want {
				t.Errorf("snippet(%.40q, %q) = %.300q, want %.300q", tt.body, tt.query, got, tt.want)
			}
			return err
		})
	}
}
