package postgres

import (
	"strconv"

	"github.com/agenthub/hub/internal/hub"
)

// itemClosed names a closed inbox item's notification on the changed
// agents' channel: "item:ID".
const itemClosed = "item"

// CloseInboxItem implements hub.InboxTx, and NOTIFYs every replica (this
// one included) at commit that the item left the open state, so that each
// wakes the calls parked on it (an approval's hook, ask_human; Watch:
// Reports.ItemsClosed) instead of finding the answer at its next poll.
func (t *Tx) CloseInboxItem(id int64, state hub.ItemState, c hub.ItemClose) (bool, error) {
	ok, err := t.Statements.CloseInboxItem(id, state, c)
	if err != nil || !ok {
		return ok, err
	}
	_, err = t.exec(`SELECT pg_notify($1, $2)`, t.db.changed, itemClosed+":"+strconv.FormatInt(id, 10))
	return err == nil, err
}
