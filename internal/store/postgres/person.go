package postgres

import "time"

// personRevoked names a revoked person's notification on the changed
// agents' channel: "person:NAME".
const personRevoked = "person"

// RevokePerson implements hub.PersonTx, and NOTIFYs every replica (this
// one included) at commit so that each ends the person's open change
// streams (Watch: Reports.PersonRevoked); each replica already reads a
// person's token at every call.
func (t *Tx) RevokePerson(name string, at time.Time) error {
	if err := t.Statements.RevokePerson(name, at); err != nil {
		return err
	}
	_, err := t.exec(`SELECT pg_notify($1, $2)`, t.db.changed, personRevoked+":"+name)
	return err
}
