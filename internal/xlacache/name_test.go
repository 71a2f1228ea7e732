package xlacache

import "testing"

func TestCanonicalCode(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{"module @decode_rows_24 attributes {x} {\n func.func @main", "module @decode_rows attributes {x} {\n func.func @main"},
		{"module @update_ppo_packed_0 {\n}", "module @update_ppo_packed {\n}"},
		{"module @decode_rows {\n}", "module @decode_rows {\n}"},
		{"module @graph7 {\n}", "module @graph7 {\n}"},     // digits without the separator: a name of its own
		{"module @_12 {\n}", "module @_12 {\n}"},           // nothing would be left
		{"module @a_1b {\n}", "module @a_1b {\n}"},         // not a trailing number
		{"func.func @main() { }", "func.func @main() { }"}, // no module
		{"", ""},
	} {
		if got := string(canonicalCode([]byte(tc.code))); got != tc.want {
			t.Errorf("canonicalCode(%q) = %q, want %q", tc.code, got, tc.want)
		}
	}
}
