package agentrl

// Rows views flat, a row-major [len(flat)/cols, cols] array, as rows that share its memory.
// Token-level quantities of a batch ([B, T-1]: masks, rewards, values, advantages) are passed around as rows.
func Rows[E any](flat []E, cols int) [][]E {
	if cols <= 0 {
		return nil
	}
	rows := make([][]E, len(flat)/cols)
	for i := range rows {
		rows[i] = flat[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return rows
}

// Flatten concatenates rows into one row-major slice.
func Flatten[E any](rows [][]E) []E {
	n := 0
	for _, r := range rows {
		n += len(r)
	}
	flat := make([]E, 0, n)
	for _, r := range rows {
		flat = append(flat, r...)
	}
	return flat
}

// Zeros returns a [rows, cols] array of zeros as rows.
func Zeros(rows, cols int) [][]float32 { return Rows(make([]float32, rows*cols), cols) }
