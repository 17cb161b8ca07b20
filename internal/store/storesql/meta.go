package storesql

// This file implements hub.MetaTx.

// Meta implements hub.MetaTx.
func (x Statements) Meta(key string) (string, error) {
	var v string
	err := x.DB.QueryRow(`SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if x.DB.IsNoRows(err) {
		return "", nil
	}
	return v, err
}

// SetMeta implements hub.MetaTx.
func (x Statements) SetMeta(key, value string) error {
	_, err := x.DB.Exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

// SwapMeta implements hub.MetaTx.
func (x Statements) SwapMeta(key, old, value string) (bool, error) {
	q, args := `UPDATE meta SET value = ? WHERE key = ? AND value = ?`, []any{value, key, old}
	if old == "" {
		q, args = `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, []any{key, value}
	}
	n, err := x.DB.Exec(q, args...)
	return err == nil && n == 1, err
}
